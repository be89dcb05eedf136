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
        """Read a decoded ``.manifest`` document (OPA's field types enforced)."""
        if not isinstance(raw, dict):
            raise BundleError("bundle load failed on manifest decode: json: cannot unmarshal into Go value of type bundle.Manifest")
        m = cls()
        rev = raw.get("revision")
        if rev is not None and not isinstance(rev, str):
            raise BundleError(
                "bundle load failed on manifest decode: json: cannot unmarshal "
                f"{_json_kind(rev)} into Go struct field Manifest.revision of type string"
            )
        m.revision = rev or ""
        roots = raw.get("roots")
        if roots is not None:
            if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
                raise BundleError(
                    "bundle load failed on manifest decode: json: cannot unmarshal "
                    f"{_json_kind(roots)} into Go struct field Manifest.roots of type []string"
                )
            m.roots = list(roots)
        rv = raw.get("rego_version")
        if rv is not None:
            if not isinstance(rv, int) or isinstance(rv, bool):
                raise BundleError(
                    "bundle load failed on manifest decode: json: cannot unmarshal "
                    f"{_json_kind(rv)} into Go struct field Manifest.rego_version of type int"
                )
            m.rego_version = rv
        frv = raw.get("file_rego_versions")
        if isinstance(frv, dict):
            m.file_rego_versions = {str(k): int(v) for k, v in frv.items() if isinstance(v, int)}
        md = raw.get("metadata")
        if isinstance(md, dict):
            m.metadata = md
        wasm = raw.get("wasm")
        if isinstance(wasm, list):
            m.wasm = [w for w in wasm if isinstance(w, dict)]
        return m


def _json_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


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
