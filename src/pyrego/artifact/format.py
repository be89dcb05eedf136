"""The artifact file's envelope: a first line of metadata, then Python source.

::

    # pyrego-artifact {"format": 1, "pyrego": "0.1.0", "digest": "<sha256>", ...}
    <Python source: the generated code of the policies, their constants and data>

``digest`` is the SHA-256 of every byte after the first line; ``policies``
maps each policy file to the SHA-256 of its text and ``data`` is the SHA-256
of the data document as written. The digest catches a truncated, damaged or
hand-edited file; it is not a signature: anyone who can write the file can
write a matching digest, so an artifact must come from a trusted source.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pyrego.errors import RegoError
from pyrego.version import __version__

#: The envelope and the layout of the source inside it; a loader takes only its own.
FORMAT = 1
PREFIX = b"# pyrego-artifact "


class ArtifactError(RegoError):
    """An artifact that cannot be written (the policies use something an
    artifact cannot hold) or loaded (damaged, modified, or written by another
    pyrego version)."""

    code = "artifact_error"


def digest(data: bytes) -> str:
    """The SHA-256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def envelope(meta: dict[str, Any], body: str) -> bytes:
    """The whole file: the metadata line (with the body's digest) and ``body``."""
    raw = body.encode("utf-8")
    meta = {"format": FORMAT, "pyrego": __version__, **meta, "digest": digest(raw)}
    header = PREFIX + json.dumps(meta, sort_keys=True, ensure_ascii=True).encode("ascii") + b"\n"
    return header + raw


def open_envelope(blob: bytes, where: str = "artifact") -> tuple[dict[str, Any], bytes]:
    """The metadata and body of an artifact, checked: the format, the pyrego
    version (it must be this one: generated code calls this runtime's helpers)
    and the digest. Raises :class:`ArtifactError` with what is wrong."""
    if not blob.startswith(PREFIX):
        raise ArtifactError(f"{where} is not a pyrego artifact (no '# pyrego-artifact' first line)")
    end = blob.find(b"\n")
    if end < 0:
        raise ArtifactError(f"{where} is truncated (no body)")
    try:
        meta = json.loads(blob[len(PREFIX) : end])
    except ValueError:
        raise ArtifactError(f"{where}: the metadata line is not JSON") from None
    if type(meta) is not dict:
        raise ArtifactError(f"{where}: the metadata line is not a JSON object")
    if meta.get("format") != FORMAT:
        raise ArtifactError(f"{where} has artifact format {meta.get('format')!r}; this pyrego reads format {FORMAT}")
    if meta.get("pyrego") != __version__:
        raise ArtifactError(
            f"{where} was written by pyrego {meta.get('pyrego')!r} and this is pyrego {__version__}: "
            "generated code runs only on the runtime that wrote it; write the artifact again with this version"
        )
    body = blob[end + 1 :]
    if meta.get("digest") != digest(body):
        raise ArtifactError(f"{where} was modified or damaged: its content does not match the digest it records")
    return meta, body


__all__ = ["FORMAT", "PREFIX", "ArtifactError", "digest", "envelope", "open_envelope"]
