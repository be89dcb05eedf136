"""JSON values as OPA's type checker holds them: static object keys of types.

OPA keeps an object type's static keys as Go values decoded from JSON: a
number keeps its text (:class:`JNum`), an object its sorted pairs
(:class:`JMap`). They order as OPA's ``util.Compare`` orders them
(:func:`compare_json`) and print as Go's ``%v`` prints them
(:func:`go_value_text`); :mod:`pyrego.typecheck.static_types` re-exports all four.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any


class JNum:
    """A JSON number as written (OPA's ``json.Number``): prints its text, orders by value."""

    __slots__ = ("text", "value")

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            self.value = Decimal(text)
        except InvalidOperation:
            self.value = Decimal(0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JNum) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("JNum", self.text))

    def __repr__(self) -> str:
        return f"JNum({self.text})"


class JMap:
    """A JSON object used as a key (sorted pairs), hashable."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: tuple[tuple[str, Any], ...]) -> None:
        self.pairs = tuple(sorted(pairs, key=lambda p: p[0]))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JMap) and other.pairs == self.pairs

    def __hash__(self) -> int:
        return hash(("JMap", self.pairs))


def _sort_order(v: Any) -> int:
    if v is None:
        return 0
    if v is True or v is False:
        return 1
    if isinstance(v, JNum):
        return 2
    if isinstance(v, str):
        return 3
    if isinstance(v, tuple):
        return 4
    return 5


def compare_json(a: Any, b: Any) -> int:
    """OPA's ``util.Compare`` on JSON values: null < boolean < number < string < array < object."""
    x, y = _sort_order(a), _sort_order(b)
    if x != y:
        return -1 if x < y else 1
    if x == 0:
        return 0
    if x == 1:
        return (a > b) - (a < b)
    if x == 2:
        return (a.value > b.value) - (a.value < b.value)
    if x == 3:
        return (a > b) - (a < b)
    if x == 4:
        for p, q in zip(a, b):
            c = compare_json(p, q)
            if c:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    for (ka, va), (kb, vb) in zip(a.pairs, b.pairs):
        if ka != kb:
            return -1 if ka < kb else 1
        c = compare_json(va, vb)
        if c:
            return c
    return (len(a.pairs) > len(b.pairs)) - (len(a.pairs) < len(b.pairs))


def go_value_text(v: Any) -> str:
    """A JSON value as Go's ``%v`` prints it (strings unquoted, null as ``<nil>``)."""
    if v is None:
        return "<nil>"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, JNum):
        return v.text
    if isinstance(v, str):
        return v
    if isinstance(v, tuple):
        return "[" + " ".join(go_value_text(x) for x in v) + "]"
    return "map[" + " ".join(f"{k}:{go_value_text(x)}" for k, x in v.pairs) + "]"
