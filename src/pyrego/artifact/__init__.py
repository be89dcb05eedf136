"""Compiled policy artifacts: policies and data compiled once, loaded without the compiler.

>>> from pyrego.artifact import write_artifact, load_artifact
>>> write_artifact(engine, "authz_policy.py")          # doctest: +SKIP
>>> policy = load_artifact("authz_policy.py")          # doctest: +SKIP
>>> policy.eval_rule("data.authz.allow", input={...})  # doctest: +SKIP

An artifact is one Python source file: the generated code of every rule,
the constants and data it reads, and a first line recording the pyrego
version, the policies' digests and a digest of the rest. Loading it parses,
checks and generates nothing; it runs the code, so **load only artifacts
from a trusted source** (as you would import only trusted modules).
``pyrego build --target python`` writes one from the command line.

:func:`write_artifact_wheel` packs the same file in a wheel
(``NAME-VERSION-py3-none-any.whl``) that ``pip install`` installs as module
``NAME`` (see :mod:`pyrego.artifact.wheel`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyrego.artifact.format import ArtifactError

if TYPE_CHECKING:
    import os

    from pyrego.artifact.load import CompiledPolicy
    from pyrego.engine_support import ProgramSource


def write_artifact(engine: ProgramSource, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Write ``engine``'s compiled policies and data to ``path``; returns the artifact's metadata
    (see :func:`pyrego.artifact.write.write_artifact`)."""
    from pyrego.artifact.write import write_artifact as write

    return write(engine, path)


def write_artifact_wheel(engine: ProgramSource, path: str | os.PathLike[str], *, module: str | None = None) -> dict[str, Any]:
    """Write ``engine``'s compiled policies and data as a wheel at ``path``
    (``NAME-VERSION-py3-none-any.whl``); returns the artifact's metadata
    (see :func:`pyrego.artifact.wheel.write_artifact_wheel`)."""
    from pyrego.artifact.wheel import write_artifact_wheel as write

    return write(engine, path, module=module)


def load_artifact(path: str | os.PathLike[str], *, cache: bool = True) -> CompiledPolicy:
    """Load an artifact (see :func:`pyrego.artifact.load.load_artifact`): trusted sources only."""
    from pyrego.artifact.load import load_artifact as load

    return load(path, cache=cache)


__all__ = ["ArtifactError", "load_artifact", "write_artifact", "write_artifact_wheel"]
