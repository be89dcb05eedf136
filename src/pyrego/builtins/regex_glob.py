"""``regex.globs_match``: do two "regex globs" have a non-empty intersection?

OPA delegates to github.com/yashtewari/glob-intersection. Its globs know
characters, ``.`` (any character), ``[...]`` sets with ranges, and the flags
``+`` and ``*`` on the preceding token; ``\\`` escapes. This is the same
(greedy, not always complete) algorithm, so answers agree with OPA's.

A set is kept as sorted, disjoint ranges of code points (``[\x00-\U0010ffff]``
is one range, not a million characters), and the search, which can take
exponential time on some pairs of globs, counts its steps against the
evaluation's deadline.
"""

from __future__ import annotations

import bisect

from pyrego.builtins.limits import Deadline
from pyrego.runtime.builtin_errors import BuiltinError

_Ranges = tuple[tuple[int, int], ...]

_CHAR, _DOT, _SET = 0, 1, 2
_NONE, _PLUS, _STAR = 0, 1, 2


class _Token:
    __slots__ = ("kind", "flag", "rune", "runes")

    def __init__(self, kind: int, rune: str = "", runes: _Ranges = ()) -> None:
        self.kind = kind
        self.flag = _NONE
        self.rune = rune
        self.runes = runes

    def equal(self, other: _Token) -> bool:
        if self.kind != other.kind:
            return False
        if self.kind == _CHAR:
            return self.rune == other.rune
        if self.kind == _SET:
            return self.runes == other.runes
        return True


def _in_ranges(c: str, ranges: _Ranges) -> bool:
    code = ord(c)
    i = bisect.bisect_right(ranges, (code, 0x110000)) - 1
    return i >= 0 and ranges[i][0] <= code <= ranges[i][1]


def _ranges_meet(a: _Ranges, b: _Ranges) -> bool:
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i][1] < b[j][0]:
            i += 1
        elif b[j][1] < a[i][0]:
            j += 1
        else:
            return True
    return False


def _normal_ranges(ranges: list[tuple[int, int]]) -> _Ranges:
    """Sorted, with overlapping and adjacent ranges joined."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def _match(a: _Token, b: _Token) -> bool:
    if a.kind > b.kind:
        a, b = b, a
    if a.kind == _CHAR:
        if b.kind == _CHAR:
            return a.rune == b.rune
        if b.kind == _DOT:
            return True
        return _in_ranges(a.rune, b.runes)
    if a.kind == _DOT:
        return True
    return _ranges_meet(a.runes, b.runes)


class _Invalid(Exception):
    def __init__(self, pos: int, msg: str) -> None:
        super().__init__(pos, msg)
        self.pos = pos
        self.msg = msg


def _next_rune(i: int, s: str) -> tuple[int, str, bool] | None:
    if i >= len(s):
        return None
    if s[i] == "\\":
        if i < len(s) - 1:
            return i + 2, s[i + 1], True
        raise _Invalid(i, "input ends with a \\ (escape) character")
    return i + 1, s[i], False


def _tokenize(s: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while True:
        nr = _next_rune(i, s)
        if nr is None:
            return tokens
        i, r, escaped = nr
        if not escaped and r == ".":
            tok = _Token(_DOT)
        elif not escaped and r == "]":
            raise _Invalid(i, "set-close ']' with no preceding '['")
        elif not escaped and r == "[":
            i, tok = _tokenize_set(i, s)
        elif not escaped and r in "+*":
            raise _Invalid(i, f"flag '{r}' must be preceded by a non-flag")
        else:
            tok = _Token(_CHAR, rune=r)
        nf = _next_rune(i, s)
        if nf is not None and not nf[2] and nf[1] in "+*":
            tok.flag = _PLUS if nf[1] == "+" else _STAR
            i = nf[0]
        tokens.append(tok)


def _tokenize_set(i: int, s: str) -> tuple[int, _Token]:
    runes: list[tuple[int, int]] = []
    prev = ""
    prev_exists = False
    complete = False
    while not complete:
        nr = _next_rune(i, s)
        if nr is None:
            break
        i, r, escaped = nr
        if escaped:
            runes.append((ord(r), ord(r)))
            prev, prev_exists = r, True
        elif r == "-":
            if not prev_exists:
                raise _Invalid(i, "range character '-' must be preceded by a Unicode character")
            if i >= len(s) - 1:
                raise _Invalid(i, "range character '-' must be followed by a Unicode character")
            nr = _next_rune(i, s)
            assert nr is not None
            i, r, escaped = nr
            if not escaped and r in "]-":
                raise _Invalid(i, "range character '-' cannot be followed by a special symbol")
            if r < prev:
                raise _Invalid(i, f"range is out of order: '{r}' comes before '{prev}' in Unicode")
            runes.append((ord(prev), ord(r)))
            prev_exists = False
        elif r == "]":
            complete = True
        else:
            runes.append((ord(r), ord(r)))
            prev, prev_exists = r, True
    if not complete:
        raise _Invalid(i, "found [ without matching ]")
    return i, _Token(_SET, runes=_normal_ranges(runes))


def _simplify(tokens: list[_Token]) -> list[_Token]:
    """Merge adjacent equal flagged tokens (t*t+ == t+)."""
    if not tokens:
        return tokens
    simple = [tokens[0]]
    for t in tokens[1:]:
        last = simple[-1]
        if t.flag != _NONE and last.flag != _NONE and t.equal(last):
            last.flag = _PLUS if _PLUS in (t.flag, last.flag) else _STAR
            continue
        simple.append(t)
    return simple


def _trim(g1: list[_Token], g2: list[_Token]) -> tuple[list[_Token], list[_Token]] | None:
    n1, n2 = len(g1), len(g2)
    left = 0
    while left < n1 and left < n2 and g1[left].flag == _NONE and g2[left].flag == _NONE:
        if not _match(g1[left], g2[left]):
            return None
        left += 1
    if left > 0:
        left -= 1  # keep one token: empty globs break the algorithm
    r1, r2 = n1 - 1, n2 - 1
    while r1 >= 0 and r1 >= left and r2 >= 0 and r2 >= left and g1[r1].flag == _NONE and g2[r2].flag == _NONE:
        if not _match(g1[r1], g2[r2]):
            return None
        r1 -= 1
        r2 -= 1
    if r1 < n1 - 1:
        r1 += 1
        r2 += 1
    return g1[left : r1 + 1], g2[left : r2 + 1]


def _normal(g1: list[_Token], g2: list[_Token], dl: Deadline) -> bool:
    dl.tick()
    i = 0
    n = min(len(g1), len(g2))
    while i < n:
        if g1[i].flag == _NONE and g2[i].flag == _NONE:
            if not _match(g1[i], g2[i]):
                return False
        else:
            return _special(g1[i:], g2[i:], dl)
        i += 1
    return i == len(g1) and i == len(g2)


def _special(g1: list[_Token], g2: list[_Token], dl: Deadline) -> bool:
    if g1[0].flag != _NONE:
        return _plus(g1, g2, dl) if g1[0].flag == _PLUS else _star(g1, g2, dl)
    return _plus(g2, g1, dl) if g2[0].flag == _PLUS else _star(g2, g1, dl)


def _plus(plussed: list[_Token], other: list[_Token], dl: Deadline) -> bool:
    if not other:
        # Go indexes other[0] and panics; OPA reports no intersection then
        raise IndexError
    if not _match(plussed[0], other[0]):
        return False
    if _star(plussed, other[1:], dl):
        return True
    return other[0].flag != _NONE and _normal(plussed[1:], other, dl)


def _star(starred: list[_Token], other: list[_Token], dl: Deadline) -> bool:
    star = starred[0]
    nxt = starred[1] if len(starred) > 1 else None
    for i, t in enumerate(other):
        if nxt is not None and _match(t, nxt):
            if _normal(starred[1:], other[i:], dl):
                return True
            if not _match(t, star):
                return False
        elif not _match(t, star):
            return False
    return nxt is None


def _parse(glob: str) -> list[_Token]:
    try:
        return _simplify(_tokenize(glob))
    except _Invalid as e:
        raise BuiltinError(f"input:{glob}, pos:{e.pos}, {e.msg}: the input provided is invalid") from None


def globs_match(a: str, b: str, deadline: Deadline | None = None) -> bool:
    g1 = _parse(a)
    g2 = _parse(b)
    trimmed = _trim(g1, g2)
    if trimmed is None:
        return False
    try:
        return _normal(*trimmed, deadline or Deadline(None))
    except IndexError:
        return False
    except RecursionError:
        raise BuiltinError("glob patterns are too long to intersect") from None
