"""Builtins that are language constructs: the compiler handles them itself.

``x := y`` (``assign``), ``x = y`` (``eq``) and ``print(...)`` are listed in
OPA's capabilities as builtins; in pyrego the code generator compiles them
directly (assignment and unification bind variables, ``print`` takes any
number of arguments and tolerates undefined ones), so they appear here only
so the registry lists every OPA builtin with its arity. Calling the functions
below directly is a compiler bug.
"""

from __future__ import annotations

from typing import Any

from pyrego.builtins.registry import builtin
from pyrego.runtime.builtin_errors import BuiltinError


def _compiled(name: str) -> BuiltinError:
    return BuiltinError(f"{name} is compiled by the code generator and cannot be called as a function")


@builtin("assign", 2)
def _assign(a: Any, b: Any) -> Any:
    raise _compiled("assign")


@builtin("eq", 2)
def _eq(a: Any, b: Any) -> Any:
    raise _compiled("eq")


@builtin("print", 0)
def _print(*args: Any) -> Any:
    raise _compiled("print")


@builtin("internal.print", 1)
def _internal_print(args: Any) -> Any:
    raise _compiled("internal.print")
