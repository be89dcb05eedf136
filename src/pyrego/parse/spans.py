"""Where expressions, terms and rule heads end in their policy text.

The parser records where each node starts (``file:row:col``); coverage
reports and traces need OPA's *ranges* too: a node's start and the end of its
text (OPA derives the end from ``Location.Text``: the row after the node's
last newline and the column just past its last character). The end is found
here from the tokens of the module text, on demand: a bracketed term ends at
its matching bracket, a reference or call at the last of its adjacent
``.name``, ``[...]`` and ``(...)`` parts, an infix call at the end of its
right operand, an expression at the end of its last part (``with`` values
included).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from pyrego.ast import nodes as ast
from pyrego.parse.lexer import TMPL, TMPLC, tokenize

_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

#: Calls written as operators (``a + b``, ``x in xs``): they end with their last operand.
INFIX_OPS = frozenset(
    {
        "equal", "neq", "lt", "lte", "gt", "gte", "plus", "minus", "mul", "div", "rem",
        "and", "or", "internal.member_2", "internal.member_3",
    }
)  # fmt: skip


class Span(NamedTuple):
    """A range of policy text: the start of its first and the end of its last character (exclusive)."""

    file: str
    row: int
    col: int
    end_row: int
    end_col: int

    def contains(self, other: Span) -> bool:
        """Whether ``other`` lies within this range (OPA's ``Range.contains``)."""
        starts_within = self.row < other.row or (self.row == other.row and self.col <= other.col)
        ends_within = self.end_row > other.end_row or (self.end_row == other.end_row and self.end_col >= other.end_col)
        return starts_within and ends_within

    def rows(self) -> range:
        return range(self.row, self.end_row + 1)


class SourceSpans:
    """The ranges of the nodes of one module, computed from its text."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        toks = tokenize(text)
        self._toks = toks
        self._kinds = toks.kinds
        self._texts = toks.texts
        self._starts = toks.starts
        self._gaps = toks.gaps
        self._index: dict[tuple[int, int], int] | None = None
        self._matches: dict[int, int] = {}

    # -- positions -------------------------------------------------------------

    def _token_at(self, loc: ast.Location) -> int | None:
        index = self._index
        if index is None:
            row_col = self._toks.row_col
            index = self._index = {row_col(start): i for i, start in enumerate(self._starts)}
        return index.get((loc.row, loc.col))

    def _span(self, loc: ast.Location, last: int | None) -> Span | None:
        if last is None:
            return None
        end = self._starts[last] + len(self._texts[last])
        end_row, end_col = self._toks.row_col(end)
        return Span(self.file, loc.row, loc.col, end_row, end_col)

    def text(self, span: Span) -> str:
        """The policy text of ``span``, its lines joined by single spaces."""
        lines = self._toks.lines()
        if span.row == span.end_row:
            return lines[span.row - 1][span.col - 1 : span.end_col - 1]
        parts = [lines[span.row - 1][span.col - 1 :]]
        parts += [line.strip() for line in lines[span.row : span.end_row - 1]]
        parts.append(lines[span.end_row - 1][: span.end_col - 1].strip())
        return " ".join(p.strip() for p in parts if p.strip())

    def token(self, loc: ast.Location) -> Span | None:
        """The range of the single token at ``loc`` (a keyword such as ``default``)."""
        return self._span(loc, self._token_at(loc))

    def term(self, t: ast.Term) -> Span | None:
        """The range of term ``t``, or None when its text cannot be found."""
        return self._span(t.location, self._term_last(t))

    def expr(self, e: ast.Expr) -> Span | None:
        """The range of expression ``e`` (its ``not`` and ``with`` parts included)."""
        last = self._statement_last(e.statement)
        for w in e.with_mods:
            last = _later(last, self._term_last(w.value))
        return self._span(e.location, last)

    def head(self, rule: ast.Rule) -> Span | None:
        """The range of a rule's head as OPA gives it: from the name (or ``else``)
        to its value, or its key, or its name and arguments when the value is implied."""
        head = rule.head
        start = self._token_at(head.location)
        if start is None:
            return None
        if self._kinds[start] == "else":
            last: int | None = start
        else:
            last = self._primary_last(start)
        value = head.value
        if value is not None and not self._implied(value, head.location):
            last = _later(last, self._term_last(value))
        elif head.key is not None:
            last = _later(last, self._term_last(head.key))
        return self._span(head.location, last)

    def else_body(self, branch: ast.Rule, chain: list[ast.Rule]) -> Span | None:
        """The range OPA gives the expression of an ``else`` branch whose body is
        one expression written without braces (``else := x if cond``): OPA's
        parser locates it at the whole rest of the rule, from ``else`` to the
        end of the chain's last branch; None for any other body."""
        if len(branch.body) != 1:
            return None
        i = self._token_at(branch.body[0].location)
        if i is None or i == 0 or self._texts[i - 1] != "if":
            return None
        last = chain[-1]
        end = self.expr(last.body[-1]) if last.body else self.head(last)
        if end is None:
            return None
        return Span(self.file, branch.location.row, branch.location.col, end.end_row, end.end_col)

    def _implied(self, value: ast.Term, head_at: ast.Location) -> bool:
        """Whether a head's value is the ``true`` of ``p if ...`` (not written)."""
        if type(value) is not ast.Scalar or value.value is not True:
            return False
        if value.location == head_at:
            return True
        i = self._token_at(value.location)
        return i is None or self._texts[i] != "true"

    # -- tokens --------------------------------------------------------------------

    def _match(self, i: int) -> int:
        """The token closing the bracket opened at token ``i``, or ending the
        template string that starts there."""
        known = self._matches.get(i)
        if known is not None:
            return known
        kinds = self._kinds
        template = kinds[i] == TMPL
        depth = 0
        j = i
        n = len(kinds)
        while j < n:
            k = kinds[j]
            if k in _OPENERS:
                depth += 1
            elif k in _CLOSERS:
                depth -= 1
                if depth <= 0 and not template:
                    break
            elif k == TMPL or k == TMPLC:
                # A piece that does not end its string opens an embedded expression.
                ends = self._template_piece_ends(j)
                if ends and template and depth == 0:
                    break
                if not ends:
                    depth += 1
            j += 1
        j = min(j, n - 1)
        self._matches[i] = j
        return j

    def _template_piece_ends(self, j: int) -> bool:
        info = self._toks.values.get(j)
        return isinstance(info, tuple) and bool(info[1])

    def _primary_last(self, i: int) -> int:
        """The last token of the operand starting at token ``i``: a literal,
        name or bracketed term, with the adjacent ``.name``, ``[...]`` and
        ``(...)`` parts after it."""
        kinds, gaps, texts = self._kinds, self._gaps, self._texts
        n = len(kinds)
        k = kinds[i]
        if k in _OPENERS or k == TMPL:
            j = self._match(i)
        elif k == "-" and i + 1 < n and gaps[i + 1] == 0:
            j = i + 1
        else:
            j = i
        while j + 1 < n and gaps[j + 1] == 0:
            nxt = kinds[j + 1]
            if nxt == "." and j + 2 < n and gaps[j + 2] == 0 and _NAME.fullmatch(texts[j + 2]):
                j += 2
            elif nxt == "[" or nxt == "(":
                j = self._match(j + 1)
            else:
                break
        return j

    def _term_last(self, t: ast.Term | None) -> int | None:
        if t is None:
            return None
        i = self._token_at(t.location)
        if i is None:
            return None
        if type(t) is ast.Call and t.op in INFIX_OPS and t.args and not self._spelled(i, t.op):
            last = None
            for arg in t.args:
                last = _later(last, self._term_last(arg))
            return _later(last, i)
        return self._primary_last(i)

    def _spelled(self, i: int, name: str) -> bool:
        """Whether the tokens from ``i`` spell the dotted ``name`` (a call written ``plus(1, 2)``)."""
        kinds, texts = self._kinds, self._texts
        for k, part in enumerate(name.split(".")):
            j = i + 2 * k
            if j >= len(texts) or texts[j] != part or (k and kinds[j - 1] != "."):
                return False
        return True

    def _statement_last(self, s: ast.Statement) -> int | None:
        if isinstance(s, (ast.Assign, ast.Unify)):
            return _later(self._term_last(s.lhs), self._term_last(s.rhs))
        if isinstance(s, ast.SomeVars):
            last = None
            for v in s.vars:
                last = _later(last, self._term_last(v))
            return last
        if isinstance(s, ast.SomeIn):
            return self._term_last(s.collection)
        if isinstance(s, ast.Every):
            last = self._term_last(s.domain)
            if last is not None and last + 1 < len(self._kinds) and self._kinds[last + 1] == "{":
                return self._match(last + 1)
            return last
        return self._term_last(s)


def _later(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a > b else b


__all__ = ["INFIX_OPS", "SourceSpans", "Span"]
