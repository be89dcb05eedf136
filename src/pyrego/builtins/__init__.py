"""Rego builtins, one module per OPA category, behind one registry."""

from pyrego.builtins.registry import REGISTRY, Builtin, all_builtins, builtin, lookup
from pyrego.runtime.builtin_errors import BuiltinError, OperandTypeError

__all__ = ["REGISTRY", "Builtin", "BuiltinError", "OperandTypeError", "all_builtins", "builtin", "lookup"]
