"""Types as OPA prints them in messages, in time and space bounded by the text.

A type is a tree in OPA's printing but a graph here: a rule's type is one
object wherever other rules hold its value, so ``a1 := [a0, a0]``, ...,
``a30 := [a29, a29]`` make 31 types, while ``a30``'s text has about 2^30
parts. Each type gives its text as a list of pieces (:meth:`Type.pieces`
in :mod:`pyrego.typecheck.static_types`): literal strings and the types printed between
them. Here every type's length is worked out once per printing (by
identity), and its text once, so the work is that of the text itself. A
text longer than :data:`TEXT_LIMIT` characters is cut there and ends in
:data:`CUT_MARK`: OPA prints it whole (23 MB for ``a20``, and more than
its memory holds further on).
"""

from __future__ import annotations

from typing import Any

#: A type's text is cut after this many characters (see the module's docstring).
TEXT_LIMIT = 100_000

#: What ends a text that was cut.
CUT_MARK = "..."

# The text of an unknown type (None).
UNKNOWN = "???"


def _length(t: Any, memo: dict[int, int]) -> int:
    if t is None:
        return 3
    key = id(t)
    found = memo.get(key)
    if found is not None:
        return found
    n = 0
    for p in t.pieces():
        n += len(p) if p.__class__ is str else _length(p, memo)
    memo[key] = n
    return n


def _text(t: Any, memo: dict[int, str]) -> str:
    if t is None:
        return UNKNOWN
    key = id(t)
    found = memo.get(key)
    if found is not None:
        return found
    out = "".join([p if p.__class__ is str else _text(p, memo) for p in t.pieces()])
    memo[key] = out
    return out


def _prefix(t: Any, budget: int, out: list[str], lengths: dict[int, int], texts: dict[int, str]) -> int:
    """Appends the first ``budget`` characters of ``t``'s text to ``out``; returns what is left of it."""
    if t is None:
        out.append(UNKNOWN[:budget])
        return max(budget - 3, 0)
    for p in t.pieces():
        if budget <= 0:
            return 0
        if p.__class__ is str:
            out.append(p[:budget])
            budget -= len(p)
        elif _length(p, lengths) <= budget:
            out.append(_text(p, texts))
            budget -= lengths[id(p)]
        else:
            budget = _prefix(p, budget, out, lengths, texts)
    return max(budget, 0)


def text_key(t: Any, table: dict[tuple[Any, ...], int], memo: dict[int, int]) -> int:
    """A number that stands for ``t``'s whole text: types with the same
    number in one ``table`` print the same (uncut), in time that grows with
    the number of distinct types in ``t``, not with its text. ``memo`` keeps
    the numbers found in this call, by identity (the types must outlive it)."""
    if t is None:
        return -1
    found = memo.get(id(t))
    if found is not None:
        return found
    shape = tuple([p if p.__class__ is str else text_key(p, table, memo) for p in t.pieces()])
    key = table.get(shape)
    if key is None:
        key = table[shape] = len(table)
    memo[id(t)] = key
    return key


def type_text(t: Any, limit: int = TEXT_LIMIT) -> str:
    """``t``'s text as OPA prints it, cut after ``limit`` characters (then ending in :data:`CUT_MARK`)."""
    if t is None:
        return UNKNOWN
    lengths: dict[int, int] = {}
    if _length(t, lengths) <= limit:
        return _text(t, {})
    out: list[str] = []
    _prefix(t, limit, out, lengths, {})
    return "".join(out) + CUT_MARK


__all__ = ["type_text", "text_key", "TEXT_LIMIT", "CUT_MARK"]
