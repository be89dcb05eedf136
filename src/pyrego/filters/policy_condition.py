"""The filter of a policy as the policy means it (for query builders).

:func:`~pyrego.filters.compile_condition` gives the condition tree OPA's
Compile API builds, quirks included: with the column on the right of
``<``, ``<=``, ``>``, ``>=`` OPA turns the operator into its negation instead
of its mirror image (``3 >= input.t.prio`` filters ``prio < 3``, where the
policy means ``prio <= 3``). That is kept there so that the SQL and UCAST
texts match OPA's byte for byte.

:func:`policy_condition` gives the same filter (same checks, refusals and
mappings) with those comparisons mirrored correctly (``3 >= prio`` is
``prio <= 3``), so that an adapter selects exactly the rows the policy
accepts. The ORM adapters' convenience functions use it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Sequence

from pyrego.ast import nodes as ast
from pyrego.filters.conditions import Filter

if TYPE_CHECKING:
    from pyrego.engine import Engine
    from pyrego.partial import PartialResult

__all__ = ["mirrored", "policy_condition"]

_MIRROR = {"lt": "gt", "gt": "lt", "lte": "gte", "gte": "lte"}


def policy_condition(
    engine: Engine,
    query: str,
    input: Any = None,
    *,
    unknowns: Sequence[str] | None = ("input",),
    mappings: dict[str, Any] | None = None,
) -> tuple[Filter, PartialResult]:
    """The filter of ``query`` for this ``input`` as a condition tree whose
    comparisons mean what the policy's do (and the partial evaluation it
    came from). Raises :class:`~pyrego.filters.FilterError` where OPA's
    Compile API refuses the policy (target ``sql``, dialect ``postgresql``:
    every operator a filter can hold)."""
    from pyrego.filters import compile_condition
    from pyrego.filters.errors import lookup_mappings
    from pyrego.filters.translate import queries_to_condition

    cond, result = compile_condition(engine, query, input, unknowns=unknowns, mappings=mappings)
    queries = [mirrored(body) for body in result.queries]
    if all(a is b for q, body in zip(queries, result.queries) for a, b in zip(q, body)):
        return cond, result
    return queries_to_condition(queries, lookup_mappings(mappings, "sql", "postgresql")), result


def mirrored(body: ast.Body) -> ast.Body:
    """``body`` with each ``<value> < <column>`` written ``<column> > <value>``
    (the same for ``<=``, ``>``, ``>=``); other expressions as they are."""
    return tuple(_mirrored(e) for e in body)


def _mirrored(e: ast.Expr) -> ast.Expr:
    s = e.statement
    if type(s) is not ast.Call or s.op not in _MIRROR or len(s.args) != 2:
        return e
    left, right = s.args
    if type(left) is ast.Ref or type(right) is not ast.Ref:
        return e
    return dataclasses.replace(e, statement=dataclasses.replace(s, op=_MIRROR[s.op], args=(right, left)))
