"""Writing bundles: ``pyrego build`` and ``pyrego sign``, in OPA's layout.

An archive written here holds, in OPA's order: ``/data.json`` (all data
merged, compact JSON with sorted keys), each module at ``/`` + the path it was
read from (formatted as ``opa fmt`` formats it, as ``opa build`` does),
``/.signatures.json`` when signed, and ``/.manifest`` (``revision``,
``roots``, ``rego_version``, ``metadata``; left out when it says nothing).
Each member is a regular file, mode 0600, time 0.

Without bundle mode, the paths are loaded as ``opa build`` loads them: every
``.rego`` file is a module named by its path; every JSON/YAML file is data at
the path of its folder below the path given (a file named directly merges at
the root); the manifest's roots are ``[""]`` (OPA does not infer roots). In
bundle mode (``-b``) each path is a bundle (folder or archive) read with its
manifest; several are merged as OPA merges them (roots joined, revision
cleared, no overlaps).

Signing lists every module, ``data.json`` and ``.manifest`` with its SHA-256
digest in a JWT (:mod:`pyrego.bundle.signing`).
"""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyrego.bundle.model import Bundle, BundleError, Manifest, compact_json, manifest_json
from pyrego.bundle.reader import read_bundle, read_files
from pyrego.bundle.signing import SigningConfig, hash_file, sign_files, signatures_json

__all__ = ["BuildOptions", "build_bundle", "write_bundle", "bundle_members", "sign_paths"]


@dataclass
class BuildOptions:
    """``pyrego build``'s settings (OPA's flag names in the comments)."""

    bundle_mode: bool = False  # -b/--bundle
    revision: str | None = None  # -r/--revision
    ignore: list[str] = field(default_factory=list)  # --ignore
    rego_v1: bool = True  # --v0-compatible clears it
    signing: SigningConfig | None = None  # --signing-key, --signing-alg, --claims-file
    key_id: str = ""
    format_modules: bool = True


def _merge_maps(a: dict[str, Any], b: dict[str, Any], where: str) -> None:
    for k, v in b.items():
        if k in a and isinstance(a[k], dict) and isinstance(v, dict):
            _merge_maps(a[k], v, where)
        elif k in a:
            raise BundleError(f"{where}: merge error: data documents conflict at key {k!r}")
        else:
            a[k] = v


def _load_plain(paths: Sequence[str], options: BuildOptions) -> Bundle:
    from pyrego.errors import DataError
    from pyrego.loader import LoadError, data_document, iter_files, read_policy
    from pyrego.parse.parser import parse_module

    b = Bundle()
    b.manifest = Manifest(rego_version=1 if options.rego_v1 else 0)
    for p in paths:
        try:
            files = list(iter_files(Path(p), ignore=options.ignore))
        except LoadError:
            raise BundleError(f"load error: stat {p}: no such file or directory") from None
        for f in files:
            name = f.name.replace(os.sep, "/")
            if f.is_policy:
                text = read_policy(f)
                b.parsed[name] = parse_module(text, name, rego_v1=options.rego_v1)
                b.modules[name] = text
                b.module_rego_v1[name] = options.rego_v1
            else:
                try:
                    doc = data_document(f)
                except DataError as exc:
                    raise BundleError(f"load error: {exc}") from None
                _merge_maps(b.data, doc, name)
    return b


def _load_bundles(paths: Sequence[str], options: BuildOptions) -> Bundle:
    from pyrego.bundle.model import root_paths_overlap

    bundles = [read_bundle(p, skip_verify=True, rego_v1=options.rego_v1) for p in sorted(paths)]
    for b in bundles:
        if b.manifest.rego_version is None:
            b.manifest.rego_version = 1 if options.rego_v1 else 0
    if len(bundles) == 1:
        return bundles[0]
    out = Bundle()
    roots: list[str] = []
    for b in bundles:
        roots.extend(b.roots)
        out.modules.update(b.modules)
        out.parsed.update(b.parsed)
        out.module_rego_v1.update(b.module_rego_v1)
        _merge_maps(out.data, b.data, "bundle merge failed")
        for path, v1 in b.module_rego_v1.items():
            if v1 != options.rego_v1:
                out.manifest.file_rego_versions["/" + path.lstrip("/")] = 1 if v1 else 0
    for i in range(len(roots)):
        for j in range(i + 1, len(roots)):
            if root_paths_overlap(roots[i], roots[j]):
                raise BundleError(f"bundle merge failed: manifest has overlapped roots: '{roots[i]}' and '{roots[j]}'")
    out.manifest.roots = roots
    out.manifest.rego_version = 1 if options.rego_v1 else 0
    return out


def build_bundle(paths: Sequence[str], options: BuildOptions | None = None) -> Bundle:
    """Load ``paths`` as ``opa build`` does and return the bundle to write
    (modules formatted; the caller compiles it before writing, as OPA does)."""
    options = options or BuildOptions()
    b = _load_bundles(paths, options) if options.bundle_mode else _load_plain(paths, options)
    if options.revision is not None:
        b.manifest.revision = options.revision
    if options.format_modules:
        from pyrego.formatter import FormatErrors, format_module

        for name, text in list(b.modules.items()):
            try:
                b.modules[name] = format_module(text, name, rego_v1=b.module_rego_v1.get(name, True))
            except FormatErrors as exc:
                raise BundleError(str(exc)) from None
    return b


def bundle_members(b: Bundle, signing: SigningConfig | None = None, key_id: str = "") -> list[tuple[str, bytes]]:
    """The archive members of ``b`` in OPA's order, signed when ``signing`` is given."""
    data_json = compact_json(b.data).encode("utf-8")
    members: list[tuple[str, bytes]] = [("/data.json", data_json)]
    modules = [("/" + name.lstrip("/"), text.encode("utf-8")) for name, text in b.modules.items()]
    members.extend(modules)
    manifest_bytes = None if b.manifest.is_empty() else manifest_json(b.manifest).encode("utf-8")
    if signing is not None:
        files = [{"name": p.lstrip("/"), "hash": hash_file(p, data), "algorithm": "SHA-256"} for p, data in modules]
        files.append({"name": "data.json", "hash": hash_file("data.json", data_json), "algorithm": "SHA-256"})
        if manifest_bytes is not None:
            files.append({"name": ".manifest", "hash": hash_file(".manifest", manifest_bytes), "algorithm": "SHA-256"})
        token = sign_files(files, signing, key_id)
        b.signatures = {"signatures": [token]}
        members.append(("/.signatures.json", signatures_json(token)))
    if manifest_bytes is not None:
        members.append(("/.manifest", manifest_bytes))
    return members


def write_bundle(b: Bundle, out: str | io.BufferedIOBase | Any, signing: SigningConfig | None = None, key_id: str = "") -> None:
    """Write ``b`` as a ``.tar.gz`` archive to the path or binary file ``out``."""
    members = bundle_members(b, signing, key_id)
    buf = io.BytesIO()
    import gzip

    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o600
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    if isinstance(out, str):
        with open(out, "wb") as f:
            f.write(buf.getvalue())
    else:
        out.write(buf.getvalue())


def sign_paths(paths: Sequence[str], signing: SigningConfig, bundle_mode: bool = True) -> str:
    """``opa sign``: a JWT over every file of the bundle folders or archives
    ``paths`` (signature files left out), names relative to each bundle."""
    files = []
    for p in paths:
        if not bundle_mode and not os.path.isdir(p):
            raise BundleError(f"{p}: sign without --bundle takes folders")
        for f in read_files(p):
            if f.path.endswith("signatures.json"):
                continue
            name = f.path.lstrip("/")
            files.append({"name": name, "hash": hash_file(name, f.data), "algorithm": "SHA-256"})
    return sign_files(files, signing)
