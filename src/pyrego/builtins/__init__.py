"""Rego builtins, one module per OPA category, behind one registry."""

from pyrego.builtins.registry import REGISTRY, Builtin, BuiltinError, OperandTypeError, all_builtins, builtin, lookup

__all__ = ["REGISTRY", "Builtin", "BuiltinError", "OperandTypeError", "all_builtins", "builtin", "lookup"]
