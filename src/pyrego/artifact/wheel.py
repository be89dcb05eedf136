"""An artifact as a wheel: the artifact module packed for ``pip install``.

A wheel written here (PEP 427, pure Python) holds three things:

- ``<module>.py``: the artifact, byte for byte what :func:`~pyrego.artifact.write.write_artifact`
  writes (importing it loads the policies: its ``policy`` attribute);
- ``<name>-<version>.dist-info/METADATA``: ``Metadata-Version: 2.1``, the
  name, the version and ``Requires-Dist: pyrego==<this version>`` (an
  artifact loads only on the pyrego that wrote it);
- ``WHEEL`` (``Root-Is-Purelib: true``, ``Tag: py3-none-any``) and
  ``RECORD`` (each file's SHA-256 and size).

The distribution name and version come from the wheel's file name, which pip
requires to be ``<name>-<version>-py3-none-any.whl``: there is no other place
a version could come from that pip would also read, and a version chosen by
whoever publishes the wheel orders upgrades (a digest of the policies would
not). The module's name is the distribution name unless given.

The bytes depend only on the policies, the data, the names and this pyrego:
members in a fixed order, every timestamp 1980-01-01, fixed permissions.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import keyword
import os
import re
import zipfile
from dataclasses import dataclass
from typing import Any

from pyrego.artifact.format import ArtifactError, open_envelope
from pyrego.artifact.write import artifact_text
from pyrego.engine_support import ProgramSource
from pyrego.version import __version__

#: The one tag these wheels carry: pure Python 3, any ABI, any platform.
TAG = "py3-none-any"

# A distribution name as it appears in a wheel's file name (no "-": that separates the fields).
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?")
# A normalized PEP 440 version: epoch, release, pre, post, dev, local label.
_VERSION = re.compile(
    r"(?:[1-9][0-9]*!)?(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))*"
    r"(?:(?:a|b|rc)(?:0|[1-9][0-9]*))?(?:\.post(?:0|[1-9][0-9]*))?(?:\.dev(?:0|[1-9][0-9]*))?"
    r"(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?"
)
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# 1980-01-01 00:00:00, the earliest time a zip member can have.
_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class WheelName:
    """What a wheel's file name says: the distribution ``name`` and
    ``version``, and the ``module`` the artifact is imported as."""

    name: str
    version: str
    module: str

    @property
    def filename(self) -> str:
        """``<name>-<version>-py3-none-any.whl``."""
        return f"{self.name}-{self.version}-{TAG}.whl"

    @property
    def dist_info(self) -> str:
        """The wheel's metadata folder, ``<name>-<version>.dist-info``."""
        return f"{self.name}-{self.version}.dist-info"


def wheel_name(path: str | os.PathLike[str], module: str | None = None) -> WheelName:
    """The names a wheel written to ``path`` gets, from its file name
    (``<name>-<version>-py3-none-any.whl``); ``module``: the artifact's module
    name (default: the distribution name). Raises
    :class:`ArtifactError` naming the expected form when the file name, the
    version (a normalized PEP 440 one: ``1.0.0``, ``2.1rc1``, ``1.0.post2``,
    ``1.0+build.7``) or the module name is not one pip and Python accept, or
    the distribution name is not in its normalized form (lower case, ``_``
    for runs of ``-_.``), which the wheel format asks of new wheels."""
    base = os.path.basename(os.fspath(path))
    expected = f"a wheel's file name must be NAME-VERSION-{TAG}.whl (pip installs no other), e.g. authz_policy-1.0.0-{TAG}.whl"
    if not base.endswith(".whl"):
        raise ArtifactError(f"{base}: {expected}")
    parts = base[: -len(".whl")].split("-")
    if len(parts) != 5 or "-".join(parts[2:]) != TAG:
        raise ArtifactError(f"{base}: {expected}")
    name, version = parts[0], parts[1]
    if not _NAME.fullmatch(name):
        raise ArtifactError(f"{base}: {name!r} is not a distribution name (letters, digits, '_' and '.'; {expected})")
    normal = re.sub(r"[-_.]+", "_", name).lower()
    if name != normal:
        # Consumers accept the older forms; a wheel written now uses the normalized one.
        raise ArtifactError(f"{base}: a wheel's file name holds the normalized distribution name: {normal!r}, not {name!r}")
    if not _VERSION.fullmatch(version):
        raise ArtifactError(
            f"{base}: {version!r} is not a normalized PEP 440 version (e.g. 1.0.0, 2.1rc1, 1.0.post2, 1.0+build.7)"
        )
    if module is None:
        module = name
        if not _MODULE.fullmatch(module) or keyword.iskeyword(module):
            raise ArtifactError(f"{base}: the distribution name {name!r} is not a Python module name: name the module (--module; module= in Python)")
    elif not _MODULE.fullmatch(module) or keyword.iskeyword(module):
        raise ArtifactError(f"{module!r} is not a Python module name (ASCII letters, digits and '_', not a keyword)")
    return WheelName(name, version, module)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def _member(archive: zipfile.ZipFile, path: str, data: bytes) -> None:
    info = zipfile.ZipInfo(path, _EPOCH)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix, whatever the platform: the permissions below are Unix ones
    info.external_attr = 0o644 << 16
    archive.writestr(info, data)


def wheel_bytes(artifact: bytes, names: WheelName) -> bytes:
    """A wheel holding ``artifact`` (an artifact's bytes, as
    :func:`~pyrego.artifact.write.artifact_text` makes) as module ``names.module``."""
    metadata = (
        "Metadata-Version: 2.1\n"
        f"Name: {names.name}\n"
        f"Version: {names.version}\n"
        "Summary: Compiled Rego policies (a pyrego artifact)\n"
        f"Requires-Dist: pyrego=={__version__}\n"
    )
    wheel = f"Wheel-Version: 1.0\nGenerator: pyrego {__version__}\nRoot-Is-Purelib: true\nTag: {TAG}\n"
    files = [
        (f"{names.module}.py", artifact),
        (f"{names.dist_info}/METADATA", metadata.encode("utf-8")),
        (f"{names.dist_info}/WHEEL", wheel.encode("utf-8")),
    ]
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for path, data in files:
        writer.writerow([path, _record_hash(data), len(data)])
    writer.writerow([f"{names.dist_info}/RECORD", "", ""])  # RECORD cannot hold its own hash
    files.append((f"{names.dist_info}/RECORD", record.getvalue().encode("utf-8")))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for path, data in files:  # the module, then the metadata with RECORD last (as PEP 427 advises)
            _member(archive, path, data)
    return out.getvalue()


def write_artifact_wheel(engine: ProgramSource, path: str | os.PathLike[str], *, module: str | None = None) -> dict[str, Any]:
    """Write ``engine``'s policies and data, compiled, as a wheel at ``path``
    (named ``<name>-<version>-py3-none-any.whl``: see :func:`wheel_name`); the
    module inside is ``module`` (default: the distribution name). Returns the
    artifact's metadata, with ``"wheel"``: the name, version and module.

    Raises :class:`ArtifactError` for a file name pip would not install, and as
    :func:`~pyrego.artifact.write.write_artifact` does for policies an
    artifact cannot hold (nothing is written then)."""
    names = wheel_name(path, module)
    blob = artifact_text(engine)
    data = wheel_bytes(blob, names)
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    meta = open_envelope(blob, os.fspath(path))[0]
    return {**meta, "wheel": {"name": names.name, "version": names.version, "module": names.module}}


__all__ = ["TAG", "WheelName", "wheel_bytes", "wheel_name", "write_artifact_wheel"]
