"""Residual queries to a condition tree (OPA's ``BodiesToUCAST``).

The queries are OR-ed, each query's expressions AND-ed (a single one stands
alone). An expression ``<column> op <value>`` becomes a
:class:`~.conditions.FieldCondition`; with the column on the right the
operands swap, and ``<``/``<=``/``>``/``>=`` turn into ``gte``/``gt``/
``lte``/``lt`` (OPA's mapping, kept as it is: ``3 < input.t.a`` filters
``a >= 3``). A column compared with an unbound variable (``x :=
input.t.c``) is an existence test (``ne NULL``). An empty query, or one OPA
cannot express, makes the whole filter :data:`~.conditions.ALWAYS`, as in
OPA (the checks of :mod:`.checks` refuse such queries first).
"""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.filters.checks import operands, operator
from pyrego.filters.conditions import ALWAYS, NULL, Compound, Condition, FieldCondition, FieldRef, Filter
from pyrego.partial.terms import Known, to_ast
from pyrego.runtime.values import sorted_values, thaw

_REVERSED = {"lt": "gte", "lte": "gt", "gt": "lte", "gte": "lt"}


def queries_to_condition(queries: list[ast.Body], mappings: dict[str, Any] | None) -> Filter:
    """The filter of ``queries`` (at least one query)."""
    nodes = []
    for body in queries:
        node = _body(body, mappings)
        if node is None:
            return ALWAYS
        nodes.append(node)
    if len(nodes) == 1:
        return nodes[0]
    return Compound("or", tuple(nodes))


def _body(body: ast.Body, mappings: dict[str, Any] | None) -> Condition | None:
    if not body:
        return None
    nodes = []
    for e in body:
        node = _expr(e, mappings)
        if node is None:
            return None
        nodes.append(node)
    if len(nodes) == 1:
        return nodes[0]
    return Compound("and", tuple(nodes))


def _expr(e: ast.Expr, mappings: dict[str, Any] | None) -> Condition | None:
    op = operator(e)
    if op is None:
        return None
    ops = operands(e)
    if len(ops) < 2:
        return None
    flip = type(ops[0]) is not ast.Ref
    ref = ops[1] if flip else ops[0]
    if type(ref) is not ast.Ref:
        return None
    ref_ok = False
    if op == "neq":
        ref_ok, op = True, "ne"
    elif op in ("eq", "lt", "lte", "gt", "gte"):
        ref_ok = True
    elif op in ("startswith", "endswith", "contains"):
        pass
    elif op == "internal.member_2":
        op = "in"
    else:
        return None
    if flip:
        op = _REVERSED.get(op, op)
    value_term = ops[0] if flip else ops[1]
    node = _field_node(op, ref, value_term, mappings, ref_ok)
    if node is None or not e.negated:
        return node
    return Compound("not", (node,))


def _field_node(op: str, ref: ast.Ref, v: Any, mappings: dict[str, Any] | None, ref_ok: bool) -> FieldCondition | None:
    value: Any = None
    if type(v) is ast.Ref:
        if ref_ok:
            f = ref_to_field(v, mappings)
            if f is None:
                return None
            value = FieldRef(f)
    elif type(v) is ast.Var:
        if op != "eq":
            return None
        op = "ne"  # `_ = <column>`: the column exists
    else:
        value = to_python(v)
    field = ref_to_field(ref, mappings)
    if field is None:
        return None
    if value is None:
        value = NULL
    return FieldCondition(op, field, value, to_ast(v) if type(v) is Known else v)


def ref_to_field(r: ast.Ref, mappings: dict[str, Any] | None) -> str | None:
    """``input.tickets.name`` -> ``tickets.name`` (mapped, see :func:`translate_field`)."""
    parts = []
    for p in r.path:
        if type(p) is ast.Scalar and type(p.value) is str:
            parts.append(p.value)
        elif type(p) is ast.Var:
            parts.append(p.name)
        else:
            return None
    return translate_field(".".join(parts), mappings)


def translate_field(field: str, translations: dict[str, Any] | None) -> str:
    """A column name through the mappings (OPA's ``translateField``).

    ``{"tickets": {"$self": "ticket_table", "name": "ticket_name"}}`` maps
    ``tickets.name`` to ``ticket_table.ticket_name``; ``$table`` maps a
    one-part unknown (``input.name``) to a table's column."""
    if translations is None:
        return field
    before, sep, after = field.partition(".")
    found = bool(sep)
    out_table, out_column = before, after
    mapping = translations.get(before)
    if isinstance(mapping, dict) and "$table" in mapping:
        out_table = mapping["$table"]
        before, after, found = out_table, before, True
        out_column = after
    mapping = translations.get(before)
    if isinstance(mapping, dict):
        if "$self" in mapping:
            out_table = mapping["$self"]
        if found and after in mapping:
            out_column = mapping[after]
    if found:
        return f"{out_table}.{out_column}"
    return out_table


def to_python(t: Any) -> Any:
    """A ground residual term as a JSON-like Python value (sets as sorted lists)."""
    if type(t) is Known:
        return _plain(t.value)
    tt = type(t)
    if tt is ast.Scalar:
        return t.value
    if tt is ast.Array:
        return [to_python(x) for x in t.items]
    if tt is ast.SetTerm:
        return [to_python(x) for x in t.items]
    if tt is ast.Object:
        return {_key(to_python(k)): to_python(v) for k, v in t.items}
    return None


def _plain(v: Any) -> Any:
    t = type(v)
    if t is list or t is tuple:
        return [_plain(x) for x in v]
    if t is dict:
        return {_key(thaw(k)): _plain(x) for k, x in v.items()}
    if t is set or t is frozenset:
        return [_plain(x) for x in sorted_values(v)]
    return v


def _key(k: Any) -> Any:
    if type(k) is str:
        return k
    import json

    return json.dumps(k, separators=(",", ":"))
