"""Token access for the Rego parser: the cursor over the lexer's tokens.

:class:`TokenCursor` holds the parse position, the reserved future keywords,
the term memo, token locations and the error helpers; the grammar on top of it
is in :mod:`pyrego.parse.terms` (terms), :mod:`pyrego.parse.exprs`
(expressions), :mod:`pyrego.parse.logic` and :mod:`pyrego.parse.parser`.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import repeat
from operator import sub

from pyrego.ast import nodes as ast
from pyrego.errors import Location, RegoParseError
from pyrego.parse.lexer import EOF, IDENT, ILLEGAL, KEYWORD_KINDS, TMPL, TMPLC, TOKEN_NAMES, tokenize

#: Nesting limit (terms within terms, bodies within bodies, else chains):
#: deeper input is a parse error instead of a Python RecursionError.
MAX_DEPTH = 1000

_new_tuple = tuple.__new__


def memo_key(pos: int, kind: str) -> int:
    """The memo key of the term read at token ``pos`` as token kind ``kind``.

    A token is read as its own kind or, for a keyword used as a name, as an
    identifier; the memo is cleared whenever the reserved keywords change.
    So two keys per token are enough (and an int is cheaper than a tuple)."""
    return pos + pos + (kind == IDENT)


class FatalParseError(RegoParseError):
    """A parse error no backtracking may swallow (nesting too deep)."""


class IllegalRefError(RegoParseError):
    """A ref whose head is a scalar (``"x"[_]``): OPA notes it and reads on, so
    an object literal around it is not "non-terminated"."""


class TokenCursor:
    """The parser's position in the tokens of one text, and what goes with it."""

    def __init__(self, text: str, filename: str, future: set[str]) -> None:
        self.file = filename
        self.text = text
        toks = tokenize(text)
        self.toks = toks
        self.kinds = toks.kinds
        self.texts = toks.texts
        self.values = toks.values
        #: 0: token right after the previous one; 1: after spaces; 2: after a newline
        self.gaps = toks.gaps
        self.starts = toks.starts
        self.n = len(self.kinds)
        #: future keywords (in, if, contains, every) currently reserved
        self.future = set(future)
        self.wild = 0
        self.depth = 0
        #: whether a comprehension was made (written, or standing for a
        #: `not`/`and`/`or` or a `with` in a template string): see ast.Module.closures
        self.closures = False
        #: whether a template string was made: see ast.Module.templates
        self.templates = False
        #: memo_key -> (term or None, error or None, position and kind after it)
        self.cache: dict[int, tuple[ast.Term | None, RegoParseError | None, int, str]] = {}
        #: the offset of each line's first character (and one past the end)
        self.line_starts = toks.line_starts()
        #: for make_loc: a token's column is its offset less line_bases[row]
        self.line_bases = [0, *map(sub, self.line_starts, repeat(1))]
        #: the row of the last location made (make_loc looks there first)
        self.row = 1
        #: the location of every token, once made (see make_loc)
        self.locs = self.token_locations()
        #: a body's first term, read ahead (see braces_hold_no_collection)
        self.body_head: tuple[int, str, int, ast.Term, int, str] | None = None
        self.pos = 0
        self.kind = self.kind_at(0)
        if self.kind == ILLEGAL and self.values.get(0) is not None:
            raise self.lex_error(0)

    # ------------------------------------------------------------ tokens

    def use_keywords(self, keywords: set[str]) -> None:
        """Reserve these future keywords from now on."""
        self.future = keywords
        self.cache.clear()  # memoised terms were read with other keywords
        self.body_head = None
        self.kind = self.kind_at(self.pos)

    def kind_at(self, p: int) -> str:
        k = self.kinds[p]
        if k == IDENT and self.texts[p] in self.future:
            return self.texts[p]
        return k

    def advance(self) -> None:
        p = self.pos + 1
        if p >= self.n:
            p = self.n - 1
        self.pos = p
        k = self.kinds[p]
        if k == IDENT:
            if self.texts[p] in self.future:
                k = self.texts[p]
        elif k == ILLEGAL and self.values.get(p) is not None:
            # OPA's scanner reports these as soon as it reads them; a bare
            # illegal character only when the parser trips over it.
            raise self.lex_error(p)
        self.kind = k

    def save(self) -> tuple[int, str]:
        return self.pos, self.kind

    def restore(self, state: tuple[int, str]) -> None:
        self.pos, self.kind = state

    def next_is_ref(self) -> bool:
        """Whether the next token is a '.' or '[' right after the current one
        (a keyword used as a ref head, like ``input.in`` or ``not.x``)."""
        p = self.pos + 1
        return p < self.n and (self.kinds[p] == "." or self.kinds[p] == "[") and not self.gaps[p]

    def next_is_call(self) -> bool:
        p = self.pos + 1
        return p < self.n and self.kinds[p] == "(" and not self.gaps[p]

    def keyword_as_ident(self) -> None:
        # OPA's scanAheadRef: a keyword directly followed by '.' or '[' is a var.
        if self.kind in KEYWORD_KINDS and self.next_is_ref():
            self.kind = IDENT

    def token_locations(self) -> list[Location | None]:
        """The locations of the tokens, made on first use (make_loc), except
        those of the eof token and of any token that may start at a newline
        (where OPA's position is not the token's offset): made now."""
        locs: list[Location | None] = [None] * self.n
        last = self.n - 1
        locs[last] = self.odd_location(last)  # eof
        kinds = self.kinds
        if TMPLC in kinds or ILLEGAL in kinds:
            for p, k in enumerate(kinds):
                if k == TMPLC or k == ILLEGAL:
                    locs[p] = self.odd_location(p)
        return locs

    def odd_location(self, p: int) -> Location:
        start = self.starts[p]
        row, col = self.toks.row_col(start)
        k = self.kinds[p]
        if k == EOF:
            col -= 1  # OPA's column of EOF counts the characters before it on its line (0 on an empty one)
        elif (k == TMPLC or k == ILLEGAL) and self.text[start : start + 1] == "\n":
            row, col = row + 1, 1  # OPA puts a token starting at a newline on the next line
        return Location(self.file, row, col)

    def make_loc(self, p: int) -> Location:
        """The location of token ``p``, made and kept on first use. Hot
        callers write ``self.locs[p] or self.make_loc(p)``."""
        start = self.starts[p]
        row = self.row
        starts = self.line_starts
        if not starts[row - 1] <= start < starts[row]:  # (most tokens are on the line of the one before)
            row = self.row = bisect_right(starts, start)
        # tuple.__new__ directly: a NamedTuple's own __new__ is a Python function
        loc = self.locs[p] = _new_tuple(Location, (self.file, row, start - self.line_bases[row]))
        return loc

    def loc(self, p: int | None = None) -> Location:
        """The location of token ``p`` (default: the current one)."""
        if p is None:
            p = self.pos
        return self.locs[p] or self.make_loc(p)

    def comment_positions(self) -> list[tuple[int, int, str]]:
        """(row, col, text) of every comment."""
        row_col = self.toks.row_col
        return [(*row_col(offset), text) for offset, text in self.toks.comments]

    # ------------------------------------------------------------ errors

    def source_line(self, row: int) -> str | None:
        lines = self.toks.lines()
        if 1 <= row <= len(lines):
            return lines[row - 1].rstrip("\r")
        return None

    def error_at(self, loc: Location, message: str) -> RegoParseError:
        return RegoParseError(message, loc, source_line=self.source_line(loc.row))

    def error(self, message: str) -> RegoParseError:
        return self.error_at(self.loc(), message)

    def lex_error(self, p: int) -> RegoParseError:
        msg = self.values.get(p)
        return self.error_at(self.loc(p), msg if isinstance(msg, str) else "illegal token")

    def token_description(self) -> str:
        k = self.kind
        if k in KEYWORD_KINDS:
            return f"{k} keyword"
        if k == TMPL or k == TMPLC:
            value = self.values.get(self.pos)
            is_end = isinstance(value, tuple) and value[1]
            return "template-string-end token" if is_end else "template-string-part token"
        return f"{TOKEN_NAMES.get(k, k)} token"

    def illegal(self, note: str = "") -> RegoParseError:
        """OPA's "unexpected X token[: note]" error at the current token."""
        if self.kind == ILLEGAL:
            return self.lex_error(self.pos)
        desc = self.token_description()
        return self.error(f"unexpected {desc}: {note}" if note else f"unexpected {desc}")

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.too_deep()

    def too_deep(self) -> FatalParseError:
        loc = self.loc()
        return FatalParseError("max parsing recursion depth exceeded", loc, source_line=self.source_line(loc.row))
