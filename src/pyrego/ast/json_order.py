"""OPA's order of AST terms, for writing sets and objects as OPA does.

OPA marshals a set's elements and an object's entries sorted with
``ast.Compare``: by kind first (null < boolean < number < string < template
string < var < ref < array < object < set < comprehensions < call), then by
value. Numbers compare by their exact value (``1`` equals ``1.0``), strings
and names by their bytes, sequences element by element and then by length,
objects entry by entry over their sorted keys, sets over their sorted
elements. A set keeps the first of equal elements (its literal is built by
inserting each in turn); an object literal keeps every entry.

The terms here are the JSON dicts :mod:`pyrego.ast.opa_json` builds; locations
play no part in the order.
"""

from __future__ import annotations

import functools
from decimal import Decimal, InvalidOperation
from typing import Any, Sequence

from pyrego.ast import nodes as ast

__all__ = ["compare_terms", "op_term_json", "opa_term_order", "ref_terms_json", "sort_set_items", "sort_object_items", "term_json"]

_ORDER = {
    "null": 0,
    "boolean": 1,
    "number": 2,
    "string": 3,
    "templatestring": 4,
    "var": 5,
    "ref": 6,
    "array": 7,
    "object": 8,
    "set": 9,
    "arraycomprehension": 10,
    "objectcomprehension": 11,
    "setcomprehension": 12,
    "call": 13,
}


def _cmp(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def compare_terms(a: dict[str, Any], b: dict[str, Any]) -> int:
    """OPA's ``Compare`` of two terms (negative, zero or positive)."""
    ka, kb = a["type"], b["type"]
    c = _cmp(_ORDER.get(ka, 99), _ORDER.get(kb, 99))
    if c:
        return c
    va, vb = a["value"], b["value"]
    if ka == "null":
        return 0
    if ka == "boolean":
        return _cmp(va, vb)
    if ka == "number":
        na, nb = _number(str(va)), _number(str(vb))
        if na is None or nb is None:
            return _cmp(str(va), str(vb))
        return _cmp(na, nb)
    if ka in ("string", "var"):
        return _cmp(va.encode("utf-8", "surrogatepass"), vb.encode("utf-8", "surrogatepass"))
    if ka in ("ref", "array", "call"):
        return _compare_lists(va, vb)
    if ka == "set":  # (over its sorted elements, as OPA's set keeps them)
        return _compare_lists(sort_set_items(va), sort_set_items(vb))
    if ka == "object":  # (over its entries sorted by key, not the text's order)
        for (k1, v1), (k2, v2) in zip(sort_object_items(va), sort_object_items(vb)):
            c = compare_terms(k1, k2) or compare_terms(v1, v2)
            if c:
                return c
        return _cmp(len(va), len(vb))
    # Comprehensions and templates: their term(s) first, then a stable textual order.
    return _compare_structures(va, vb)


def _compare_lists(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
    for x, y in zip(a, b):
        c = compare_terms(x, y)
        if c:
            return c
    return _cmp(len(a), len(b))


def _compare_structures(a: Any, b: Any) -> int:
    for key in ("key", "term", "value"):
        if isinstance(a, dict) and isinstance(b, dict) and key in a and key in b:
            if isinstance(a[key], dict) and "type" in a[key]:
                c = compare_terms(a[key], b[key])
                if c:
                    return c
    return _cmp(_strip(a), _strip(b))


def _strip(x: Any) -> str:
    """A location-free text of a node, for a consistent order where OPA's is not worth copying."""
    if isinstance(x, dict):
        return "{" + ",".join(f"{k}:{_strip(v)}" for k, v in x.items() if k != "location") + "}"
    if isinstance(x, list):
        return "[" + ",".join(_strip(v) for v in x) + "]"
    return repr(x)


def sort_set_items(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A set literal's elements as OPA keeps and writes them: deduplicated, sorted."""
    kept: list[dict[str, Any]] = []
    for x in items:
        if not any(compare_terms(x, y) == 0 for y in kept):
            kept.append(x)
    return sorted(kept, key=functools.cmp_to_key(compare_terms))


def sort_object_items(items: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """An object literal's entries in OPA's order (sorted by key, stable)."""

    def by_key(p: list[dict[str, Any]], q: list[dict[str, Any]]) -> int:
        return compare_terms(p[0], q[0])

    return sorted(items, key=functools.cmp_to_key(by_key))


_COMPREHENSION_KINDS = {ast.ArrayCompr: "arraycomprehension", ast.ObjectCompr: "objectcomprehension", ast.SetCompr: "setcomprehension"}


def term_json(t: Any) -> dict[str, Any]:
    """A resolved pyrego term in OPA's JSON form (no locations; a
    composite's parts in the text's order; a comprehension by identity)."""
    if isinstance(t, ast.Scalar):
        v = t.value
        if v is None:
            return {"type": "null", "value": {}}
        if isinstance(v, bool):
            return {"type": "boolean", "value": v}
        if isinstance(v, str):
            return {"type": "string", "value": v}
        return {"type": "number", "value": t.text if t.text is not None else str(v)}
    if isinstance(t, ast.Var):
        return {"type": "var", "value": t.name}
    if isinstance(t, ast.Ref):
        return {"type": "ref", "value": ref_terms_json(t)}
    if isinstance(t, (ast.Array, ast.SetTerm)):
        return {"type": "array" if isinstance(t, ast.Array) else "set", "value": [term_json(x) for x in t.items]}
    if isinstance(t, ast.Object):
        return {"type": "object", "value": [[term_json(k), term_json(v)] for k, v in t.items]}
    if isinstance(t, ast.Call):
        return {"type": "call", "value": [op_term_json(t.op)] + [term_json(a) for a in t.args]}
    return {"type": _COMPREHENSION_KINDS.get(type(t), type(t).__name__.lower()), "value": id(t)}


def op_term_json(op: str) -> dict[str, Any]:
    """A call's operator (``a.b.c``) as OPA's ref term."""
    parts = op.split(".")
    return {
        "type": "ref",
        "value": [{"type": "var", "value": parts[0]}] + [{"type": "string", "value": p} for p in parts[1:]],
    }


def ref_terms_json(r: ast.Ref) -> list[dict[str, Any]]:
    """The terms of a ref, its head's included, in OPA's JSON form."""
    head = r.head
    if isinstance(head, ast.Ref):
        return ref_terms_json(head) + [term_json(p) for p in r.path]
    return [term_json(head)] + [term_json(p) for p in r.path]


def opa_term_order(terms: Sequence[Any]) -> list[int]:
    """The positions of ``terms`` (AST terms: a set literal's elements, an
    object literal's keys) in the order OPA keeps them, sorted with its
    ``Compare`` (stable): the order its compiler walks them in."""
    keys = [term_json(t) for t in terms]

    def by_term(i: int, j: int) -> int:
        return compare_terms(keys[i], keys[j])

    return sorted(range(len(terms)), key=functools.cmp_to_key(by_term))
