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
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.compile.ground import KeyNames

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen


def rule_var_names(gen: ModuleGen) -> KeyNames:
    """OPA's names of the variables of the rules ``gen`` writes code for
    (counted once per program, on first use)."""
    tree = gen.tree

    def numbers() -> Any:
        if tree.local_var_numbers is None:
            tree.local_var_numbers = _local_var_numbers(tree=tree)
        return tree.local_var_numbers

    return _names(numbers)


def query_var_names(query: ast.Body) -> KeyNames:
    """OPA's names of the variables of a query (counted on first use)."""
    made: list[Any] = []

    def numbers() -> Any:
        if not made:
            made.append(_local_var_numbers(query=query))
        return made[0]

    return _names(numbers)


def _local_var_numbers(**where: Any) -> Any:
    # (The type checker's package loads on first use: most programs never sort variables.)
    from pyrego.typecheck.some_vars import LocalVarNumbers

    return LocalVarNumbers(**where)


def _names(numbers: Callable[[], Any]) -> KeyNames:
    def var(name: str) -> str:
        return numbers().var_name(name) or name.split("#", 1)[0]  # type: ignore[no-any-return]

    def made() -> str:
        return numbers().made_after()  # type: ignore[no-any-return]

    return KeyNames(var, made)
