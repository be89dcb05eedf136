"""Data filters: OPA's Compile API, in process.

:func:`compile_filters` partially evaluates a policy decision with the rows
of some tables unknown (``input.<table>.<column>``) and translates what is
left into a filter: a SQL ``WHERE`` clause (PostgreSQL, MySQL, SQL Server,
SQLite) or a UCAST condition object, with optional table/column mappings and
column masks, exactly as OPA v1.20's Compile API answers (including its
refusals, raised as :class:`FilterError` with OPA's message).

The translation goes through a target-independent condition tree
(:mod:`pyrego.filters.conditions`), which adapters for other query builders
can start from: :func:`compile_condition` returns it.

Modules: :mod:`.constraints` (what each target can express), :mod:`.checks`
(refusals), :mod:`.translate` (residual queries to conditions), :mod:`.ucast`,
:mod:`.sql`, :mod:`.masks`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Sequence

from pyrego.filters.checks import check, errors_text
from pyrego.filters.conditions import ALWAYS, NEVER, NULL, Compound, Condition, FieldCondition, FieldRef, Filter, walk
from pyrego.filters.constraints import Constraint, ConstraintError, constraint
from pyrego.filters.errors import FilterError, lookup_mappings
from pyrego.filters.masks import evaluate_masks, parse_mask_rule
from pyrego.filters.sql import SQLError, to_sql
from pyrego.filters.translate import queries_to_condition, translate_field
from pyrego.filters.ucast import to_ucast
from pyrego.go_json import json_kind
from pyrego.partial import PartialResult, partial_eval
from pyrego.runtime.values import UNDEF

if TYPE_CHECKING:
    from pyrego.engine import Engine

__all__ = [
    "ALWAYS",
    "NEVER",
    "NULL",
    "Compound",
    "Condition",
    "FieldCondition",
    "FieldRef",
    "Filter",
    "FilterError",
    "compile_condition",
    "compile_filters",
    "translate_field",
    "walk",
]


def compile_condition(
    engine: Engine,
    query: str,
    input: Any = None,
    *,
    unknowns: Sequence[str] | None = ("input",),
    target: str = "sql",
    dialect: str = "postgresql",
    mappings: dict[str, Any] | None = None,
) -> tuple[Filter, PartialResult]:
    """The filter of ``query`` as a condition tree (and the partial evaluation
    it came from), checked for ``target``/``dialect`` and mapped."""
    c = _constraint(target, dialect)
    result = _partial(engine, query, input, unknowns)
    if not result.queries:
        return NEVER, result
    return _condition(result, c, target, dialect, mappings), result


def compile_filters(
    engine: Engine,
    query: str,
    input: Any = None,
    *,
    unknowns: Sequence[str] | None = ("input",),
    target: str = "sql",
    dialect: str = "postgresql",
    mappings: dict[str, Any] | None = None,
    mask_rule: str | None = None,
) -> dict[str, Any]:
    """OPA's Compile API: ``{"query": <filter>, "masks": <masks or None>}``.

    ``query``: the decision, e.g. ``"data.filters.include"``. ``unknowns``:
    refs (``input.tickets``) whose values are the rows; the columns are
    ``input.<table>.<column>``. None: the unknowns the rule's ``# METADATA``
    declares (``compile: unknowns:``), else ``input``. ``target`` ``"sql"``
    (dialects ``postgresql``, ``mysql``, ``sqlserver``, ``sqlite``) gives a
    ``WHERE`` clause, ``"ucast"`` (``all``, ``minimal``, ``prisma``,
    ``linq``) a UCAST object; ``""``/``{}`` means every row, None none.
    ``mappings`` renames tables and columns (``{"tickets": {"$self":
    "t", "name": "title"}}``; each table's entries must be strings).
    ``mask_rule``: a rule (``data.filters.masks``) whose value is returned
    as the masks.

    Raises :class:`FilterError` where OPA refuses (the policy cannot be
    expressed as a filter for that target)."""
    _check_mappings(mappings)
    c = _constraint(target, dialect)
    if mask_rule is None and unknowns is None:
        mask_rule = _declared_mask_rule(engine, query)
    masks = None
    if mask_rule:
        masks = evaluate_masks(engine, parse_mask_rule(mask_rule), input)
    result = _partial(engine, query, input, unknowns)
    if not result.queries:
        return {"query": None, "masks": None}
    f = _condition(result, c, target, dialect, mappings)
    if target == "ucast":
        return {"query": to_ucast(f), "masks": masks}
    try:
        return {"query": to_sql(f, dialect), "masks": masks}
    except SQLError as exc:
        raise FilterError("compile_error", f"convert to queries: {exc}") from None


def _go_type(v: Any) -> str:
    if v is None:
        return "<nil>"
    return {bool: "bool", str: "string", int: "float64", float: "float64", list: "[]interface {}", dict: "map[string]interface {}"}.get(type(v), type(v).__name__)


def _check_mappings(mappings: Any) -> None:
    """Mappings must be ``{table: {"$self": name, column: name, ...}}`` (OPA's ``invalid_json`` otherwise)."""
    if mappings is None:
        return
    if not isinstance(mappings, dict):
        raise FilterError("invalid_json", f"json: cannot unmarshal {json_kind(mappings)} into Go value of type map[string]interface {{}}")
    for table in sorted(mappings):
        entry = mappings[table]
        where = f"mappings[{json.dumps(table)}]"
        if not isinstance(entry, dict):
            raise FilterError("invalid_json", f"{where}: table entry must be an object, got {_go_type(entry)}")
        for column in sorted(entry):
            value = entry[column]
            if isinstance(value, str):
                continue
            if column in ("$self", "$table"):
                raise FilterError("invalid_json", f"{where}.{column}: value must be a string, got {_go_type(value)}")
            raise FilterError("invalid_json", f"{where}.{json.dumps(column)}: column entry must be a string, got {_go_type(value)}")


def _constraint(target: str, dialect: str) -> Constraint:
    try:
        return constraint(target, dialect)
    except ConstraintError as exc:
        raise FilterError("prepare_error", str(exc)) from None


def _partial(engine: Engine, query: str, input: Any, unknowns: Sequence[str] | None) -> PartialResult:
    return partial_eval(
        engine, query, unknowns=None if unknowns is None else list(unknowns), input=UNDEF if input is None else input, eval_nondeterministic=True
    )


def _condition(result: PartialResult, c: Constraint, target: str, dialect: str, mappings: dict[str, Any] | None) -> Filter:
    errors = check(result.queries, c, _shorts(mappings), result.support)
    if errors:
        raise FilterError("compile_error", errors_text(errors))
    return queries_to_condition(result.queries, lookup_mappings(mappings, target, dialect))


def _declared_mask_rule(engine: Engine, query: str) -> str | None:
    from pyrego.partial.annotations import declared_mask_rule, query_path

    path = query_path(query)
    return declared_mask_rule(engine.program().tree, path) if path is not None else None


def _shorts(mappings: dict[str, Any] | None) -> set[str]:
    """Tables named by a ``$table`` mapping (one-part unknowns ``input.<column>`` allowed)."""
    out: set[str] = set()
    for mapping in (mappings or {}).values():
        if not isinstance(mapping, dict):
            continue
        for name, m in mapping.items():
            if isinstance(m, dict) and "$table" in m:
                out.add(name)
    return out
