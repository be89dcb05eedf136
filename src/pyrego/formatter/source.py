"""Where each AST node sits in the policy text.

OPA's formatter decides line breaks, blank lines and comment placement from
the source text of each node (``Location.Text``): how many lines an
expression spans, whether a newline precedes the first item of a collection,
where a closing brace is, whether a call was written in parentheses. pyrego's
AST keeps only the row and column where a node starts, so this module
recovers the rest from the tokens: it matches brackets once, maps node starts
to tokens, and computes every node's extent the way OPA's parser records it
(quirks included, see :meth:`SourceIndex.term_text_span`).
"""

from __future__ import annotations

from bisect import bisect_right

from pyrego.ast import nodes as ast
from pyrego.errors import Location
from pyrego.parse.lexer import IDENT, STRING, TMPL, TMPLC, Tokens

__all__ = ["SourceIndex"]

_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")
# Names lexed as identifiers that act as keywords before a '(' (then the
# parenthesis opens a group, not a call's argument list).
_KEYWORD_NAMES = frozenset({"in", "if", "contains", "every", "some", "not", "with", "as", "else"})


class SourceIndex:
    """The tokens of one policy text, with bracket matching and node extents.

    Token extents are pairs of token indexes ``(first, last)``, both inclusive;
    text spans are pairs of character offsets ``(start, end)``, end exclusive.
    """

    def __init__(self, text: str, toks: Tokens) -> None:
        self.text = text
        self.toks = toks
        self.kinds = toks.kinds
        self.texts = toks.texts
        self.starts = toks.starts
        self.gaps = toks.gaps
        self.line_starts = toks.line_starts()
        self.by_offset = {start: i for i, start in enumerate(self.starts)}
        self.match = self._match_brackets()
        #: id(term) -> (term, its core tokens); the term is kept so the id stays its own
        self._cores: dict[int, tuple[ast.Term, tuple[int, int]]] = {}

    # ------------------------------------------------------------ positions

    def _match_brackets(self) -> dict[int, int]:
        """Opening token -> closing token and back. A template string's piece
        that ends in '{' opens a bracket that the '}' token after its
        embedded expression closes."""
        match: dict[int, int] = {}
        stack: list[int] = []
        kinds = self.kinds
        values = self.toks.values
        for i, k in enumerate(kinds):
            if k in _OPENERS:
                stack.append(i)
            elif k in _CLOSERS:
                if stack:
                    j = stack.pop()
                    match[i] = j
                    match[j] = i
            elif k == TMPL or k == TMPLC:
                piece = values.get(i)
                if isinstance(piece, tuple) and not piece[1]:
                    stack.append(i)
        return match

    def offset(self, loc: Location) -> int:
        """The character offset of a location."""
        return self.line_starts[loc.row - 1] + loc.col - 1

    def tok(self, loc: Location) -> int:
        """The token that starts at a location."""
        return self.by_offset[self.offset(loc)]

    def tok_end(self, i: int) -> int:
        """The offset just past token ``i``."""
        return self.starts[i] + len(self.texts[i])

    def row_of(self, offset: int) -> int:
        """The 1-based row of a character offset."""
        return bisect_right(self.line_starts, offset)

    def col_of(self, offset: int) -> int:
        """The 1-based column of a character offset."""
        return offset - self.line_starts[self.row_of(offset) - 1] + 1

    def span_text(self, first: int, last: int) -> str:
        """The source of tokens ``first..last`` (inclusive), gaps included."""
        return self.text[self.starts[first] : self.tok_end(last)]

    # ------------------------------------------------------------ term extents

    def is_group_paren(self, i: int) -> bool:
        """Whether the '(' token ``i`` opens a parenthesised term (not a call's arguments)."""
        if self.kinds[i] != "(":
            return False
        if i == 0 or self.gaps[i]:
            return True
        prev = self.kinds[i - 1]
        if prev == "]":
            return False
        if prev == IDENT:
            return self.texts[i - 1] in _KEYWORD_NAMES and (i < 2 or self.kinds[i - 2] != ".")
        # a keyword used as the last name of a ref (`x.not(...)`)
        return not (prev.isalpha() and i >= 2 and self.kinds[i - 2] == ".")

    def core(self, term: ast.Term) -> tuple[int, int]:
        """The tokens of a term, without any parentheses around it."""
        key = id(term)
        hit = self._cores.get(key)
        if hit is None or hit[0] is not term:
            hit = self._cores[key] = (term, self._core(term))
        return hit[1]

    def _core(self, term: ast.Term) -> tuple[int, int]:
        if isinstance(term, ast.Scalar):
            first = last = self.tok(term.location)
            while self.kinds[last] in ("-", "."):  # a signed number, or one written `.5`
                last += 1
            return first, last
        if isinstance(term, ast.Var):
            i = self.tok(term.location)
            return i, i
        if isinstance(term, ast.Ref):
            first = self.extent(term.head)[0]
            if not term.path:
                return first, self.extent(term.head)[1]
            return first, self.part_end(term.path[-1])
        if isinstance(term, ast.Call):
            if term.op_ref is not None:
                first, op_last = self.core(term.op_ref)
                return first, self.match[op_last + 1]
            if self.is_unary_minus(term):
                return self.tok(term.location), self.extent(term.args[-1])[1]
            return self.extent(term.args[0])[0], self.extent(term.args[-1])[1]
        if isinstance(term, ast.TemplateString):
            return self.template_span(self.tok(term.location))
        first = self.tok(term.location)
        if isinstance(term, ast.SetTerm) and not term.items and self.kinds[first] == IDENT:
            return first, first + 2  # set()
        return first, self.match[first]

    def extent(self, term: ast.Term) -> tuple[int, int]:
        """The tokens of a term, with the parentheses written around it."""
        first, last = self.core(term)
        return self.widen(first, last)

    def widen(self, first: int, last: int) -> tuple[int, int]:
        """Grow a token range over the parentheses that enclose exactly it."""
        while first > 0 and self.is_group_paren(first - 1) and self.match.get(first - 1) == last + 1:
            first -= 1
            last += 1
        return first, last

    def part_end(self, part: ast.Term) -> int:
        """The last token of a ref part: its name, or the ']' after it."""
        if self.is_dotted(part):
            return self.tok(part.location)
        last = self.extent(part)[1] + 1
        while self.kinds[last] == ")":  # (cannot happen after extent, kept as a guard)
            last += 1
        return last

    def is_dotted(self, part: ast.Term) -> bool:
        """Whether a ref part was written ``.name`` (not in brackets)."""
        return (
            isinstance(part, ast.Scalar)
            and isinstance(part.value, str)
            and self.kinds[self.tok(part.location)] != STRING
        )

    def is_unary_minus(self, call: ast.Call) -> bool:
        """``-x``: read as ``minus(0, x)``, the 0 located at the '-'."""
        if call.op != "minus" or call.op_ref is not None or len(call.args) != 2:
            return False
        zero = call.args[0]
        return isinstance(zero, ast.Scalar) and zero.text is None and self.kinds[self.tok(zero.location)] == "-"

    def template_span(self, first: int) -> tuple[int, int]:
        """A template string's first and last piece."""
        i = first
        values = self.toks.values
        while True:
            piece = values.get(i)
            if not isinstance(piece, tuple) or piece[1]:
                return first, i
            i = self.match[i] + 1

    def parenthesised(self, term: ast.Term) -> bool:
        """Whether the term's text (as OPA records it) starts with '('."""
        start, _ = self.term_text_span(term)
        return self.text[start : start + 1] == "("

    def term_text_span(self, term: ast.Term) -> tuple[int, int]:
        """The character span OPA keeps as the term's ``Location.Text``.

        Parentheses around a term belong to its text; an infix call's text
        starts where its leftmost operand's does. Two quirks of OPA's parser
        are kept: a number's text is its first token only (``-`` for ``-1``),
        and a ref whose head is not a name starts at the head's last token
        (``][0]`` for ``[1, 2][0]``).
        """
        first, last = self.core(term)
        wide_first, wide_last = self.widen(first, last)
        if wide_first != first:  # parenthesised: the parentheses are the text's ends
            return self.starts[wide_first], self.tok_end(wide_last)
        if isinstance(term, ast.Scalar) and self.kinds[first] != STRING:
            last = first
        elif isinstance(term, ast.Ref) and term.path and not isinstance(term.head, ast.Var):
            head = term.head
            if not (isinstance(head, ast.Call) and head.op_ref is not None and not self.parenthesised(head)):
                first = self.extent(head)[1]
        return self.starts[first], self.tok_end(last)

    def term_text(self, term: ast.Term) -> str:
        start, end = self.term_text_span(term)
        return self.text[start:end]

    def operator_text(self, call: ast.Call) -> tuple[int, str]:
        """A prefix call's operator: its first offset and text (up to the '(')."""
        assert call.op_ref is not None
        first, last = self.core(call.op_ref)
        return self.starts[first], self.text[self.starts[first] : self.starts[last + 1]]

    # ------------------------------------------------------------ statements

    def expr_last(self, expr: ast.Expr) -> int:
        """The last token of a body expression, ``with`` modifiers included."""
        if expr.with_mods:
            return self.extent(expr.with_mods[-1].value)[1]
        stmt = expr.statement
        if isinstance(stmt, (ast.Assign, ast.Unify)):
            return self.extent(stmt.rhs)[1]
        if isinstance(stmt, ast.SomeVars):
            return self.tok(stmt.vars[-1].location)
        if isinstance(stmt, ast.SomeIn):
            return self.extent(stmt.collection)[1]
        if isinstance(stmt, ast.Every):
            return self.match[self.extent(stmt.domain)[1] + 1]
        return self.extent(stmt)[1]

    def head_last(self, rule: ast.Rule, value_generated: bool) -> int:
        """The last token of a rule head."""
        head = rule.head
        if head.value is not None and not value_generated:
            return self.extent(head.value)[1]
        if head.key is not None and head.value is None:
            last = self.extent(head.key)[1]
            return last + 1 if self.kinds[last + 1] == "]" else last
        ref_last = self.core(head.ref)[1]
        if head.args is not None:
            return self.match[ref_last + 1]
        return ref_last

    def body_last(self, body: ast.Body) -> int:
        """The last token of a rule body: its last expression, or the '}' after it."""
        last = self.expr_last(body[-1])
        return last + 1 if self.kinds[last + 1] == "}" else last
