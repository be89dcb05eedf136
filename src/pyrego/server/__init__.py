"""An OPA-compatible policy server (``pyrego run --server``).

- :func:`create_app`: the ASGI application (Starlette), to serve with
  uvicorn or mount in a Starlette or FastAPI service;
- :class:`ServerRuntime`: the store of policies and data and the engine
  built on it, swapped atomically on every write (bundles activate through
  :meth:`ServerRuntime.activate`);
- :class:`ServerOptions`: authentication, authorization and limits;
- :func:`serve`: run the server (TLS, worker processes, graceful shutdown).

Nothing here is imported by ``import pyrego``; Starlette, uvicorn, orjson
and prometheus-client are loaded when an application is made.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyrego.server.app import ServerOptions, create_app
    from pyrego.server.runtime import ServerRuntime
    from pyrego.server.serve import serve

__all__ = ["ServerOptions", "ServerRuntime", "create_app", "serve"]

_LAZY = {
    "create_app": "pyrego.server.app",
    "ServerOptions": "pyrego.server.app",
    "ServerRuntime": "pyrego.server.runtime",
    "serve": "pyrego.server.serve",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
