"""pyrego: a Rego policy engine that compiles policies to Python.

>>> import pyrego
>>> engine = pyrego.Engine()
>>> engine.add_policy("example.rego", "package example\\n\\nallow if input.user == \\"admin\\"\\n")
'data.example'
>>> engine.set_input({"user": "admin"})
>>> engine.eval_rule("data.example.allow")
True

``pyrego.json_ready(value)`` turns any value pyrego returns into plain
JSON-compatible Python (sets as sorted lists, exact numbers as int or float).

The names below are imported on first use (``import pyrego`` alone loads
none of the engine: the command line and ``pyrego.__version__`` start fast).
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not typing's: importing typing would cost more than the rest of this module)
if TYPE_CHECKING:
    from typing import Any

    from pyrego.codegen.build_cache import clear_compile_cache, set_compile_cache_size
    from pyrego.engine import Engine
    from pyrego.errors import (
        ArgumentError,
        DataError,
        EvalBuiltinError,
        EvalCancelError,
        EvalConflictError,
        EvalError,
        EvalRecursionError,
        EvalTypeError,
        Location,
        RegoCompileError,
        RegoError,
        RegoParseError,
        RegoRecursionError,
        RegoTypeError,
        RegoUnsafeVarError,
    )
    from pyrego.formatter import format_module
    from pyrego.runtime.convert import json_ready
    from pyrego.runtime.values import UNDEFINED

from pyrego.version import __version__  # noqa: E402 - a constant; the TYPE_CHECKING flag above must come first

__all__ = [
    "Engine",
    "clear_compile_cache",
    "set_compile_cache_size",
    "UNDEFINED",
    "json_ready",
    "Location",
    "RegoError",
    "RegoParseError",
    "RegoCompileError",
    "RegoUnsafeVarError",
    "RegoRecursionError",
    "RegoTypeError",
    "EvalError",
    "EvalConflictError",
    "EvalTypeError",
    "EvalBuiltinError",
    "EvalCancelError",
    "EvalRecursionError",
    "ArgumentError",
    "DataError",
    "format_module",
    "__version__",
]

# Public name -> the module that defines it.
_LAZY = {
    "Engine": "pyrego.engine",
    "clear_compile_cache": "pyrego.codegen.build_cache",
    "set_compile_cache_size": "pyrego.codegen.build_cache",
    "UNDEFINED": "pyrego.runtime.values",
    "json_ready": "pyrego.runtime.convert",
    "format_module": "pyrego.formatter",
    **dict.fromkeys(
        [
            "Location",
            "RegoError",
            "RegoParseError",
            "RegoCompileError",
            "RegoUnsafeVarError",
            "RegoRecursionError",
            "RegoTypeError",
            "EvalError",
            "EvalConflictError",
            "EvalTypeError",
            "EvalBuiltinError",
            "EvalCancelError",
            "EvalRecursionError",
            "ArgumentError",
            "DataError",
        ],
        "pyrego.errors",
    ),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # (found directly from now on)
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
