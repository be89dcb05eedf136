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
"""

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
from pyrego.version import __version__

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
