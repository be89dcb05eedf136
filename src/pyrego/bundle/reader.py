"""Reading a bundle: a ``.tar.gz`` archive (a file or bytes) or a bundle folder.

As OPA's ``bundle.Reader``:

- ``.rego`` files are modules, parsed with the manifest's ``rego_version``
  (``file_rego_versions`` globs per file), else the reader's default (v1,
  or v0 with ``rego_v1=False``);
- ``data.json`` / ``data.yaml`` / ``data.yml`` are documents merged at their
  folder's path (``/a/b/data.json`` sets ``data.a.b``; at the top the
  document must be an object);
- ``.manifest`` is the manifest, ``.signatures.json`` the signatures; other
  files are ignored (but, in a signed bundle, still verified);
- with a :class:`~pyrego.bundle.signing.VerificationConfig`, the JWT is
  checked and every file's digest compared with the one it lists;
- then the manifest's roots are checked: no two overlap, every module's
  package and every data path lies under one.

Errors are :class:`~pyrego.bundle.model.BundleError` with OPA's messages
(``bundle read failed: archive read failed: gzip: invalid header``,
``manifest roots [a] do not permit data at path '/b' ...``); a module that
does not parse raises the parser's :class:`~pyrego.errors.RegoParseError`.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import tarfile
import zlib
from dataclasses import dataclass
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.bundle.model import Bundle, BundleError, Manifest, go_list, root_paths_contain, root_paths_overlap
from pyrego.bundle.signing import VerificationConfig, hash_file, verify_token

__all__ = ["BundleFile", "read_bundle", "read_bundle_bytes", "read_files", "bundle_from_files", "is_bundle_archive", "package_path"]

#: OPA's default limit on one file of a bundle (a guard against gzip bombs).
SIZE_LIMIT_BYTES = 1024 * 1024 * 1024


@dataclass
class BundleFile:
    """One file of a bundle: ``path`` inside it (from ``/``), ``name`` as errors and module paths show it."""

    path: str
    name: str
    data: bytes


def is_bundle_archive(path: str) -> bool:
    """Whether ``path`` names a gzipped tarball (by its first bytes, whatever its name)."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _archive_files(data: bytes, size_limit: int) -> list[BundleFile]:
    if data[:2] != b"\x1f\x8b":
        raise BundleError("bundle read failed: archive read failed: gzip: invalid header")
    out: list[BundleFile] = []
    seen: set[str] = set()
    try:
        raw = gzip.GzipFile(fileobj=io.BytesIO(data))
        with tarfile.open(fileobj=raw, mode="r|") as tar:
            for member in tar:
                if not member.isreg():
                    continue
                if member.size > size_limit:
                    raise BundleError(
                        f"bundle file '{member.name.lstrip('/')}' size ({member.size} bytes) exceeded max size ({size_limit} bytes)"
                    )
                fh = tar.extractfile(member)
                content = fh.read() if fh is not None else b""
                if len(content) != member.size:
                    raise BundleError("bundle read failed: unexpected EOF")
                path = "/" + member.name.lstrip("/")
                while path.startswith("/./"):
                    path = path[2:]
                if path in seen:
                    raise BundleError(f"bundle read failed: duplicate file '{path}' in the archive")
                seen.add(path)
                # OPA names a module by its header name as written (leading "/" or not).
                out.append(BundleFile(path, member.name, content))
        while raw.read(65536):  # to the end of the gzip stream: a cut archive fails its length and CRC check
            pass
    except BundleError:
        raise
    except (EOFError, tarfile.ReadError) as exc:
        text = str(exc)
        if "unexpected end of data" in text or "Compressed file ended" in text or isinstance(exc, EOFError) or "truncated" in text:
            raise BundleError("bundle read failed: unexpected EOF") from None
        raise BundleError(f"bundle read failed: archive read failed: {text}") from None
    except (OSError, zlib.error, tarfile.TarError) as exc:
        raise BundleError(f"bundle read failed: archive read failed: {exc}") from None
    return out


def _folder_files(root: str, size_limit: int) -> list[BundleFile]:
    out: list[BundleFile] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            full = os.path.join(folder, f)
            rel = "/" + os.path.relpath(full, root).replace(os.sep, "/")
            try:
                if os.path.getsize(full) > size_limit:
                    raise BundleError(f"bundle file '{rel.lstrip('/')}' size ({os.path.getsize(full)} bytes) exceeded max size ({size_limit} bytes)")
                with open(full, "rb") as fh:
                    content = fh.read()
            except OSError as exc:
                raise BundleError(f"failed to open file {full}: {exc.strerror or exc}") from None
            name = os.path.normpath(os.path.join(root, rel.lstrip("/"))).replace(os.sep, "/")
            out.append(BundleFile(rel, name, content))
    return out


def read_files(path: str, size_limit: int = SIZE_LIMIT_BYTES) -> list[BundleFile]:
    """The files of a bundle folder or archive at ``path``."""
    if os.path.isdir(path):
        return _folder_files(path, size_limit)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise BundleError(f"stat {path}: no such file or directory") from None
    except OSError as exc:
        raise BundleError(f"open {path}: {exc.strerror or exc}") from None
    return _archive_files(data, size_limit)


def read_bundle(
    path: str,
    *,
    verification: VerificationConfig | None = None,
    skip_verify: bool = False,
    rego_v1: bool = True,
    size_limit: int = SIZE_LIMIT_BYTES,
) -> Bundle:
    """Read the bundle folder or ``.tar.gz`` archive at ``path``."""
    return bundle_from_files(read_files(path, size_limit), verification=verification, skip_verify=skip_verify, rego_v1=rego_v1)


def read_bundle_bytes(
    data: bytes,
    *,
    etag: str = "",
    verification: VerificationConfig | None = None,
    skip_verify: bool = False,
    rego_v1: bool = True,
    size_limit: int = SIZE_LIMIT_BYTES,
) -> Bundle:
    """Read a bundle archive held in memory (a download)."""
    b = bundle_from_files(_archive_files(data, size_limit), verification=verification, skip_verify=skip_verify, rego_v1=rego_v1)
    b.etag = etag
    return b


# ---------------------------------------------------------------- files to bundle


def _go_glob(pattern: str) -> re.Pattern[str]:
    """Go's ``filepath.Match`` pattern (``*`` and ``?`` stop at ``/``)."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                out.append("[" + ("^" + body[1:] if body.startswith("^") else body) + "]")
                i = j
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def _verify(files: list[BundleFile], signatures: dict[str, Any], vc: VerificationConfig | None) -> None:
    """OPA's ``checkSignaturesAndDescriptors`` and per-file digests."""
    tokens = signatures.get("signatures") or []
    if not tokens and not signatures.get("plugin"):
        if vc is not None and (vc.key_id or vc.public_keys):
            raise BundleError("bundle missing .signatures.json file")
        return
    if vc is None:
        raise BundleError("verification key not provided")
    if signatures.get("plugin"):
        raise BundleError(f"no verifier exists under id {signatures['plugin']}")
    if len(tokens) > 1:
        raise BundleError(".signatures.json: multiple JWTs not supported (expected exactly one)")
    listed = verify_token(str(tokens[0]), vc)
    excluded = [_go_glob(p) for p in vc.exclude_files]
    for f in files:
        name = f.path.lstrip("/")
        if any(p.match(name) for p in excluded):
            listed.pop(name, None)
            continue
        entry = listed.pop(name, None)
        if entry is None:
            raise BundleError(f"file {name} not included in bundle signature")
        if not entry["algorithm"]:
            raise BundleError(f"no hashing algorithm provided for file {name}")
        got = hash_file(name, f.data, algorithm=entry["algorithm"])
        if got != entry["hash"].lower():
            raise BundleError(f"{name}: digest mismatch (want: {entry['hash']}, got: {got})")
    if listed:
        raise BundleError(f"file(s) {go_list(sorted(listed))} specified in bundle signatures but not found in the target bundle")


def _merge_into(base: dict[str, Any], key: list[str], value: Any, path: str) -> None:
    if not key:
        if not isinstance(value, dict):
            raise BundleError(f"bundle load failed on {path}: root value must be object")
        tree = value
    else:
        tree = value
        for k in reversed(key):
            tree = {k: tree}
    if not _merge_maps(base, tree):
        raise BundleError(f"bundle load failed on {path}: failed to insert data file from path {'/'.join(key)}")


def _merge_maps(a: dict[str, Any], b: dict[str, Any]) -> bool:
    for k, v in b.items():
        if k in a:
            if isinstance(a[k], dict) and isinstance(v, dict):
                if not _merge_maps(a[k], v):
                    return False
            else:
                return False
        else:
            a[k] = v
    return True


def _document(f: BundleFile) -> Any:
    from pyrego.errors import DataError
    from pyrego.runtime.convert import loads

    try:
        text = f.data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        raise BundleError(f"bundle load failed on {f.name}: invalid UTF-8") from None
    base = f.path.rsplit("/", 1)[-1]
    if base == "data.json":
        try:
            return loads(text, what=f"JSON in {f.name}")
        except DataError as exc:
            raise BundleError(f"bundle load failed on {f.name}: {exc}") from None
    from pyrego.yaml_safe import load_yaml

    try:
        doc = load_yaml(text)
    except Exception as exc:  # noqa: BLE001 - yaml raises many kinds
        raise BundleError(f"bundle load failed on {f.name}: error converting YAML to JSON: {exc}") from None
    from pyrego.runtime.convert import from_python

    return from_python(doc)


def package_path(module: ast.Module) -> list[str]:
    """A module's package as names after ``data``."""
    return [str(p.value) for p in module.package.path if isinstance(p, ast.Scalar)]


def _any_glob(pattern: str) -> re.Pattern[str]:
    """A ``gobwas/glob`` pattern without separators (OPA's ``file_rego_versions``):
    ``*`` matches any text, ``/`` included; ``?``, ``[...]``, ``{a,b}``."""
    out = []
    i = 0
    depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = j
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as exc:
        raise BundleError(f"failed to compile glob pattern {pattern}: {exc}") from None


def _rego_v1_for(manifest: Manifest, path: str, default_v1: bool) -> bool:
    rel = path
    for pattern, v in manifest.file_rego_versions.items():
        if _any_glob(pattern).match(rel) or _any_glob(pattern).match(rel.lstrip("/")):
            if v not in (0, 1):
                raise BundleError(f"unknown bundle rego-version {v} for file '{rel}'")
            return v == 1
    if manifest.rego_version is not None:
        if manifest.rego_version not in (0, 1):
            raise BundleError(f"unknown bundle rego-version {manifest.rego_version} for file '{rel}'")
        return manifest.rego_version == 1
    return default_v1


def bundle_from_files(
    files: list[BundleFile],
    *,
    verification: VerificationConfig | None = None,
    skip_verify: bool = False,
    rego_v1: bool = True,
) -> Bundle:
    """Build a :class:`Bundle` from its files (verify, parse, merge data, check roots)."""
    from pyrego.bundle.model import decode_json

    signatures: dict[str, Any] = {}
    rest: list[BundleFile] = []
    for f in files:
        if f.path.endswith("signatures.json"):
            if skip_verify:
                continue
            raw = decode_json(f.data, "bundle load failed on signatures decode")
            if not isinstance(raw, dict):
                raise BundleError("bundle load failed on signatures decode: json: cannot unmarshal into Go value of type bundle.SignaturesConfig")
            signatures = {k: raw[k] for k in ("signatures", "plugin") if raw.get(k)}
        else:
            rest.append(f)
    if not skip_verify:
        _verify(rest, signatures, verification)

    bundle = Bundle(signatures=signatures)
    texts: dict[str, tuple[str, str]] = {}  # module name -> (path in bundle, text)
    for f in rest:
        base = f.path.rsplit("/", 1)[-1]
        if f.path.endswith(".rego"):
            try:
                texts[f.name] = (f.path, f.data.decode("utf-8"))
            except UnicodeDecodeError:
                raise BundleError(f"bundle load failed on {f.name}: invalid UTF-8") from None
        elif base in ("data.json", "data.yaml", "data.yml"):
            key = [k for k in f.path.rsplit("/", 1)[0].strip("/").split("/") if k and k != "."]
            _merge_into(bundle.data, key, _document(f), f.name)
        elif f.path.endswith(".manifest"):
            bundle.manifest = Manifest.from_json(decode_json(f.data, "bundle load failed on manifest decode"))

    from pyrego.parse.parser import parse_module

    parsed: dict[str, ast.Module] = {}
    for name, (path, text) in texts.items():
        v1 = _rego_v1_for(bundle.manifest, path, rego_v1)
        parsed[name] = parse_module(text, name, rego_v1=v1)
        bundle.modules[name] = text
        bundle.module_rego_v1[name] = v1
    _check_roots(bundle, parsed)
    bundle.parsed = parsed
    return bundle


def _check_roots(bundle: Bundle, parsed: dict[str, ast.Module]) -> None:
    """OPA's ``validateAndInjectDefaults``: roots do not overlap, modules and data lie within them."""
    roots = bundle.manifest.effective_roots
    for i in range(len(roots)):
        for j in range(i + 1, len(roots)):
            if root_paths_overlap(roots[i], roots[j]):
                raise BundleError(f"manifest has overlapped roots: '{roots[i]}' and '{roots[j]}'")
    for name, module in parsed.items():
        if not root_paths_contain(roots, "/".join(package_path(module))):
            from pyrego.ast.pretty import ref_string

            pkg = "package " + ref_string(package_path(module)).removeprefix("data.")
            raise BundleError(f"manifest roots {go_list(roots)} do not permit '{pkg}' in module '{name}'")
    check_data_roots(bundle.data, roots)


def check_data_roots(data: dict[str, Any], roots: list[str]) -> None:
    """Every data path lies under a root (or is an object on the way to one)."""

    def walk(value: Any, path: str) -> None:
        p = path.strip("/")
        if root_paths_contain(roots, p):
            return
        if isinstance(value, dict):
            if any(root_paths_contain(p.split("/"), r) for r in roots):
                for k in sorted(value):
                    walk(value[k], path + "/" + k)
                return
        raise BundleError(f"manifest roots {go_list(roots)} do not permit data at path '/{p}' (hint: check bundle directory structure)")

    walk(data, "")
