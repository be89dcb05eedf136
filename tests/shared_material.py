"""Where the tests find the shared test material, in one place.

The shared folder (OPA's conformance cases, its capabilities file, the seed
and ACI benchmark workloads) is not part of the repository. It is the folder
named by ``$PYREGO_SHARED`` when that is set (a name that is not a folder
means "absent"), else ``../shared`` beside the repository. Tests that need it
ask :func:`need_shared` (or use :func:`needs_shared` as a mark) and are skipped,
with the missing path in the reason, when it is not there; a fresh clone runs
the suite with no failures.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def find_shared() -> Path | None:
    """The shared folder: ``$PYREGO_SHARED`` if set, else ``../shared`` beside
    the repository; None when that folder does not exist."""
    env = os.environ.get("PYREGO_SHARED")
    candidate = Path(env) if env else REPO_ROOT.parent / "shared"
    return candidate.resolve() if candidate.is_dir() else None


SHARED_DIR: Path | None = find_shared()

CAPABILITIES = ("opa", "capabilities-v1.20.2.json")
CONFORMANCE = ("opa-conformance", "v1")
SEED = ("bench", "seed")
ACI = ("bench", "aci")


def _where(parts: tuple[str, ...]) -> str:
    return "/".join(("<shared>", *parts))


def missing_reason(*parts: str) -> str:
    """Why a test needing ``<shared>/parts`` is skipped."""
    return (
        f"shared test material not found: {_where(parts)} "
        "(set $PYREGO_SHARED, or put the shared folder at ../shared beside the repository)"
    )


def shared_path(*parts: str) -> Path | None:
    """``<shared>/parts`` when it exists, else None."""
    if SHARED_DIR is None:
        return None
    path = SHARED_DIR.joinpath(*parts)
    return path if path.exists() else None


def need_shared(*parts: str) -> Path:
    """``<shared>/parts``; the calling test is skipped when it is absent."""
    path = shared_path(*parts)
    if path is None:
        pytest.skip(missing_reason(*parts))
    return path


def needs_shared(*parts: str) -> pytest.MarkDecorator:
    """A skip mark for tests that need ``<shared>/parts``."""
    return pytest.mark.skipif(shared_path(*parts) is None, reason=missing_reason(*parts))
