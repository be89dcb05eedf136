"""The names by which OPA sorts the variables among an object literal's keys
or a set literal's members (the order it builds the object in, where two keys
turn out equal the later one kept, and the order ``some x in {a, b}`` takes).

``ast.Compare`` sorts variables by name, and by then OPA's compiler has
renamed each declared one (``x := ...``, ``some x``, ``every``, a function's
arguments) ``__localN__``, numbered as :mod:`pyrego.typecheck.some_vars`
counts them (``__localqN__`` in a query); a variable bound without being
declared (``r[k]``, ``k = ...``) keeps the name it is written with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pyrego.ast import nodes as ast
from pyrego.typecheck.some_vars import LocalVarNumbers

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen


def rule_var_names(gen: ModuleGen) -> Callable[[str], str]:
    """OPA's name for each variable of the rules ``gen`` writes code for
    (counted once per program, on first use)."""
    tree = gen.tree
    numbers = tree.local_var_numbers
    if numbers is None:
        numbers = tree.local_var_numbers = LocalVarNumbers(tree)
    return _namer(numbers)


def query_var_names(query: ast.Body) -> Callable[[str], str]:
    """OPA's name for each variable of a query."""
    return _namer(LocalVarNumbers(query=query))


def _namer(numbers: LocalVarNumbers) -> Callable[[str], str]:
    def name(var: str) -> str:
        return numbers.var_name(var) or var.split("#", 1)[0]

    return name
