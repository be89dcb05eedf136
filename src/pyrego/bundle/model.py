"""An OPA bundle in memory: :class:`Bundle`, its :class:`Manifest`, and the roots rules.

A bundle is what ``opa build`` writes and ``opa run`` downloads: Rego modules
at their paths, base documents (the ``data.json``/``data.yaml`` files merged at
their folder paths), a ``.manifest`` (revision, roots, Rego version,
metadata) and, when signed, ``.signatures.json``. The roots of a manifest are
the ``/``-separated paths under ``data`` that the bundle owns: each module's
package and all its data must sit under one of them, and two bundles loaded
together may not own overlapping roots (OPA's ``RootPathsOverlap``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pyrego import go_json

__all__ = [
    "Bundle",
    "BundleError",
    "Manifest",
    "root_paths_contain",
    "root_paths_overlap",
    "go_list",
    "compact_json",
    "manifest_json",
    "decode_json",
]


class BundleError(Exception):
    """A bundle that cannot be read, verified or activated; the message is OPA's where OPA has one."""


@dataclass
class Manifest:
    """A bundle's ``.manifest`` (OPA's ``Manifest`` struct).

    ``roots`` is None when the manifest names none (OPA then owns ``[""]``,
    the whole of ``data``); ``rego_version`` None when it says nothing (the
    reader's default applies). ``wasm`` resolvers are kept but never run.
    """

    revision: str = ""
    roots: list[str] | None = None
    rego_version: int | None = None
    file_rego_versions: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None
    wasm: list[dict[str, Any]] = field(default_factory=list)

    @property
    def effective_roots(self) -> list[str]:
        """The roots with OPA's default (``[""]``) and no leading or trailing ``/``."""
        return [r.strip("/") for r in (self.roots if self.roots is not None else [""])]

    def is_empty(self) -> bool:
        """OPA's ``Manifest.Empty``: no revision, roots ``[""]``, nothing else (not written then)."""
        return (
            not self.revision
            and set(self.effective_roots) == {""}
            and self.rego_version is None
            and not self.file_rego_versions
            and not self.metadata
            and not self.wasm
        )

    def to_json(self) -> dict[str, Any]:
        """The manifest as OPA marshals it: revision, roots, wasm, rego_version,
        file_rego_versions, metadata (empty optional fields left out)."""
        out: dict[str, Any] = {"revision": self.revision, "roots": list(self.effective_roots)}
        if self.wasm:
            out["wasm"] = self.wasm
        if self.rego_version is not None:
            out["rego_version"] = self.rego_version
        if self.file_rego_versions:
            out["file_rego_versions"] = dict(sorted(self.file_rego_versions.items()))
        if self.metadata:
            out["metadata"] = self.metadata
        return out

    @classmethod
    def from_json(cls, raw: Any) -> Manifest:
        """Read a decoded ``.manifest`` document as Go's decoder reads it into
        OPA's ``Manifest``: field names matched without regard to case, and
        the first value of a wrong type, in the text's order, reported."""
        m = cls()
        if raw is None:
            return m  # (null leaves the struct as it is)
        if not isinstance(raw, dict):
            raise BundleError(f"{_DECODE_FAILED}{go_json.json_kind(raw)} into Go value of type bundle.Manifest")
        for key, value in raw.items():
            name = key.lower()
            if value is None or name not in _MANIFEST_FIELDS:
                continue  # (null sets nothing; unknown fields are ignored)
            if name == "revision":
                m.revision = _typed(value, str, "revision", "string")
            elif name == "roots":
                items = _typed(value, list, "roots", "[]string")
                m.roots = ["" if r is None else _typed(r, str, "roots", "string") for r in items]
            elif name == "rego_version":
                m.rego_version = _go_int(value, "rego_version")
            elif name == "file_rego_versions":
                versions = _typed(value, dict, "file_rego_versions", "map[string]int")
                m.file_rego_versions = {k: 0 if v is None else _go_int(v, "file_rego_versions") for k, v in versions.items()}
            elif name == "metadata":
                m.metadata = _typed(value, dict, "metadata", "map[string]interface {}")
            else:
                wasm = _typed(value, list, "wasm", "[]bundle.WasmResolver")
                m.wasm = [_typed(w, dict, "wasm", "bundle.WasmResolver") for w in wasm if w is not None]
        return m


_DECODE_FAILED = "bundle load failed on manifest decode: json: cannot unmarshal "
_MANIFEST_FIELDS = frozenset({"revision", "roots", "rego_version", "file_rego_versions", "metadata", "wasm"})


def _typed(value: Any, kind: type, field: str, go_type: str) -> Any:
    """``value`` if it decodes into the field's Go type, else Go's error."""
    if type(value) is kind:
        return value
    raise BundleError(f"{_DECODE_FAILED}{go_json.json_kind(value)} into Go struct field Manifest.{field} of type {go_type}")


def _go_int(value: Any, field: str) -> int:
    """A JSON number that fits Go's int (64 bits, no fraction), else Go's
    error, which names the number as written."""
    if type(value) is int and -(2**63) <= value < 2**63:
        return value
    kind = go_json.json_kind(value)
    if kind == "number":
        kind = f"number {value}"
    raise BundleError(f"{_DECODE_FAILED}{kind} into Go struct field Manifest.{field} of type int")


@dataclass
class Bundle:
    """A bundle read into memory.

    ``modules`` maps each module's path (as read: ``/x/y.rego`` from an
    archive, ``dir/x/y.rego`` from a folder) to its text; ``data`` holds the
    merged base documents; ``signatures`` the ``.signatures.json`` content
    (``{"signatures": [jwt, ...]}``), empty when unsigned; ``etag`` the HTTP
    entity tag it was downloaded with (empty otherwise).
    """

    manifest: Manifest = field(default_factory=Manifest)
    modules: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    etag: str = ""
    signatures: dict[str, Any] = field(default_factory=dict)
    # Per module: True when parsed as Rego v1 (what the manifest and defaults decided).
    module_rego_v1: dict[str, bool] = field(default_factory=dict)
    # The parsed modules (``pyrego.ast.nodes.Module``) by path, when read from files.
    parsed: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def revision(self) -> str:
        return self.manifest.revision

    @property
    def roots(self) -> list[str]:
        return self.manifest.effective_roots


def _segments(path: str) -> list[str]:
    return path.split("/")


def _contains(root: list[str], other: list[str]) -> bool:
    if len(root) == 1 and root[0] == "":
        return True
    if len(root) > len(other):
        return False
    return root == other[: len(root)]


def root_paths_overlap(a: str, b: str) -> bool:
    """OPA's ``RootPathsOverlap``: one root is a prefix (by segments) of the other."""
    sa, sb = _segments(a), _segments(b)
    return _contains(sa, sb) or _contains(sb, sa)


def root_paths_contain(roots: list[str], path: str) -> bool:
    """OPA's ``RootPathsContain``: ``path`` (``a/b``) is under one of ``roots``."""
    seg = _segments(path)
    return any(_contains(_segments(r), seg) for r in roots)


def go_list(items: list[str]) -> str:
    """A string slice as Go's ``%v`` prints it: ``[a b c]``."""
    return "[" + " ".join(items) + "]"


def compact_json(value: Any) -> str:
    """JSON as Go's ``json.Marshal`` writes a decoded document (compact, keys sorted)."""
    from pyrego.go_json import marshal

    return marshal(_sorted(value), indent=None)


def _sorted(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _sorted(v[k]) for k in sorted(v, key=lambda s: s.encode("utf-8", "surrogatepass"))}
    if isinstance(v, list):
        return [_sorted(x) for x in v]
    return v


def manifest_json(m: Manifest) -> str:
    """A manifest's JSON as OPA writes it: fields in struct order, maps sorted, compact."""
    from pyrego.go_json import marshal

    return marshal({k: (_sorted(v) if k in ("metadata", "wasm") else v) for k, v in m.to_json().items()}, indent=None)


def decode_json(data: bytes, what: str) -> Any:
    """Decode JSON text of a bundle file (numbers kept exact as ints or Decimals)."""
    from decimal import Decimal

    try:
        return json.loads(data.decode("utf-8").removeprefix("\ufeff"), parse_float=Decimal)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{what}: {exc}") from None
