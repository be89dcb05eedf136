"""Tokenizer for Rego source text.

The whole text is tokenized up front into parallel lists: the parser
backtracks a lot, exactly as OPA's does, and moving an index is far cheaper
than re-scanning. Whitespace and comments are not tokens; each token records
the gap before it (0: none, 1: spaces or a comment, 2: a newline), which is all
the parser needs (refs require adjacency, bodies split on newlines). Comments
are kept aside for ``# METADATA`` blocks. Rows and columns are computed on
demand from the token's offset.

Token kinds are plain strings: ``ident``, ``number``, ``string``, ``eof``,
``illegal``, the template-string kinds ``tmpl`` (first piece) and ``tmplc``
(a piece after an embedded expression), the punctuation itself (``{``,
``:=``, ``==``, ...) and, for the keywords that are always reserved, the
keyword itself (``package``, ``not``, ``null``, ...). The future keywords
(``in``, ``if``, ``contains``, ``every``) are lexed as ``ident``: whether they
are keywords depends on the Rego version and on imports, which the parser
tracks.

Lexing never raises: a malformed token becomes an ``illegal`` token carrying
OPA's scanner message, and lexing stops there (the parser cannot step past
it). Columns count characters (code points) from 1, like OPA's scanner.
"""

from __future__ import annotations

import bisect
import json
import re
from decimal import Decimal, InvalidOperation
from itertools import accumulate, count
from operator import add

from pyrego.runtime.numbers import literal_number

IDENT = "ident"
NUMBER = "number"
STRING = "string"
TMPL = "tmpl"
TMPLC = "tmplc"
EOF = "eof"
ILLEGAL = "illegal"

#: Keywords in every Rego version.
BASE_KEYWORDS = frozenset(
    {"package", "import", "as", "default", "else", "not", "some", "with", "null", "true", "false"}
)
#: Keywords of Rego v1 that v0 only knows after ``import future.keywords``/``rego.v1``.
FUTURE_KEYWORDS = frozenset({"in", "every", "contains", "if"})
ALL_KEYWORDS = BASE_KEYWORDS | FUTURE_KEYWORDS
#: ``and``/``or``: keywords only after ``import future.keywords[.and|.or]`` (OPA 1.20)
LOGICAL_KEYWORDS = frozenset({"and", "or"})
#: Every token kind that is a keyword.
KEYWORD_KINDS = ALL_KEYWORDS | LOGICAL_KEYWORDS

# OPA's names for tokens, used in "unexpected X token" messages.
TOKEN_NAMES = {
    IDENT: "identifier",
    "+": "plus",
    "-": "minus",
    "*": "mul",
    "/": "div",
    "%": "rem",
    "&": "and",
    "|": "or",
    "=": "eq",
    "==": "equal",
    ":=": "assign",
    "!=": "neq",
    "<": "lt",
    "<=": "lte",
    ">": "gt",
    ">=": "gte",
}

# Whitespace, then one token: an identifier or operator (group 2: their kind
# is their text (operators, keywords) or else "ident"), or (group 3) a string,
# number, comment or raw string, or else any one character. That character
# and anything else unusual (bad numbers, strings with errors, templates,
# stray characters) go to _Lexer.slow_token, so that errors match OPA's
# scanner. Few groups make findall cheap: each is a substring per match.
# The alternatives start with distinct characters, so their order only
# matters for speed: the commonest first. Possessive repeats (``*+``) never
# give characters back, and a string's plain characters are one repeat (no
# alternation per character): no backtracking state to keep per match.
_MAIN = re.compile(
    r"""([ \t\r\n]*+)(?:
      ([A-Za-z_][A-Za-z_\d]*+|[:=!<>]=|[\[\]{}(),;.+\-*/%&|<>=:])  # 2 identifier or operator
    | ("[^"\\\n]*+(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\n]*+)*+"  # 3 string
      |[0-9]++(?:\.[0-9]++)?(?:[eE][+-]?[0-9]++)?(?![A-Za-z_.])  # number
      |\#[^\n]*+                                                  # comment
      |`[^`]*+`                                                    # raw string
      |[\s\S])                                                    # anything else
    | $)""",
    re.VERBOSE,
)
# The operators _MAIN matches; they and the keywords are their own token kinds.
_OPERATORS = ":= == != <= >= [ ] { } ( ) , ; . + - * / % & | < > = :".split()
_PLAIN_KINDS = frozenset(_OPERATORS) | BASE_KEYWORDS
# What follows a lone digit that _MAIN's number pattern rejects (as in "1a",
# "12a", "1."): then group 3 holds just that digit, for slow_token.
_NUMBER_TAIL = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.")
#: rest_kind's kind for a comment (no token)
_COMMENT = "comment"
_IDENT_TAIL = re.compile(r"[A-Za-z_\d]*")
_STRING_BODY = re.compile(r'[^"\\\n]*')
_TMPL_BODY = re.compile(r'[^"{\\\n]*')
_RAW_TMPL_BODY = re.compile(r"[^`{\\]*")
_SURROGATE = re.compile("[\ud800-\udfff]")
_BAD_CHARS = re.compile("[\x00\ud800-\udfff\ufeff]")


def _bad_char_message(text: str) -> str | None:
    """OPA's scanner rejects NUL, invalid UTF-8 and a BOM after the start, anywhere."""
    m = _BAD_CHARS.search(text)
    if m is None:
        return None
    ch = m.group()
    if ch == "\x00":
        return "illegal null character"
    if ch == "\ufeff":
        return "illegal byte-order mark"
    return "illegal utf-8 character"


def decode_json_string(lit: str) -> str | None:
    """Decode a double-quoted literal like OPA: as is when it has no backslash,
    else as strict JSON. None when it is not valid JSON."""
    inner = lit[1:-1]
    if "\\" not in inner:
        return inner
    try:
        value = json.loads(lit)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, str):
        return None
    # Go's decoder turns unpaired surrogate escapes into U+FFFD; a Python str
    # holding a lone surrogate could not even be encoded as UTF-8 later.
    if _SURROGATE.search(value) is not None:
        value = _SURROGATE.sub("\ufffd", value)
    return value


# A number whose binary exponent is beyond OPA's limit (1e5) is "too big";
# that is about this many decimal digits.
_MAX_DECIMAL_EXPONENT = 30102


def number_value(text: str) -> int | float | Decimal | None:
    """The value of a number literal: an int when integral (any size), else a
    float, or a ``Decimal`` when no float denotes the literal's number exactly.
    None when the literal is invalid or beyond OPA's size limit."""
    if text.isdigit() and len(text) < 4000:
        return int(text)
    try:
        d = Decimal(text)
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    if d and abs(d.adjusted()) > _MAX_DECIMAL_EXPONENT:
        return None
    if d == d.to_integral_value():
        return int(d)
    return literal_number(d)


class Tokens:
    """The tokens of one text, as parallel lists indexed by token number."""

    __slots__ = ("kinds", "texts", "starts", "gaps", "values", "comments", "text", "_lines", "_line_starts")

    def __init__(self, text: str) -> None:
        self.text = text
        self.kinds: list[str] = []
        self.texts: list[str] = []
        self.starts: list[int] = []
        #: 0: right after the previous token; 1: after spaces/comments; 2: after a newline
        self.gaps: list[int] = []
        #: STRING: decoded value; TMPL/TMPLC: (text, is_end, raw); ILLEGAL: message or None
        self.values: dict[int, object] = {}
        #: (offset, text after '#') of every comment, in order
        self.comments: list[tuple[int, str]] = []
        self._lines: list[str] | None = None
        self._line_starts: list[int] | None = None

    def lines(self) -> list[str]:
        """The lines of the text (split at each newline, '\r' kept)."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        return self._lines

    def line_starts(self) -> list[int]:
        """The offset of the first character of every line, and one past the end."""
        if self._line_starts is None:
            # line i starts after the i lines before it and their i newlines
            lengths_before = accumulate(map(len, self.lines()), initial=0)
            self._line_starts = list(map(add, lengths_before, count()))
        return self._line_starts

    def row_col(self, offset: int) -> tuple[int, int]:
        """1-based row and column of a character offset."""
        starts = self.line_starts()
        row = bisect.bisect_right(starts, offset)
        return row, offset - starts[row - 1] + 1


class _Lexer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = Tokens(text)
        # Open braces inside template strings: 0 for a plain '{', 1/2 for the
        # embedded expression of a (raw) template string, whose '}' resumes it.
        self.braces: list[int] = []

    def emit(self, kind: str, text: str, start: int, gap: int, value: object = None) -> None:
        t = self.toks
        if value is not None:
            t.values[len(t.kinds)] = value
        t.kinds.append(kind)
        t.texts.append(text)
        t.starts.append(start)
        t.gaps.append(gap)

    def run(self) -> Tokens:
        text = self.text
        toks = self.toks
        kinds, texts, starts, gaps = toks.kinds, toks.texts, toks.starts, toks.gaps
        plain_kinds = _PLAIN_KINDS
        braces = self.braces
        # Tokens with NUL, a stray BOM or a lone surrogate go to slow_token
        # for OPA's message; one search tells whether any token can have one.
        check_chars = "\x00" in text or (not text.isascii() and _BAD_CHARS.search(text) is not None)
        pos = 1 if text.startswith("\ufeff") else 0  # a leading byte-order mark is skipped
        gap = 0
        if not check_chars:
            pos, gap = self.common_tokens(pos)
            if pos < 0:
                return self.finish(gap > 0, gap > 1)
        while True:
            special = -1  # a token for slow_token
            resume = -1  # where to go on after a template string piece
            # Matches are contiguous: each starts where the previous one ended,
            # so token offsets follow from the lengths (cheaper than asking).
            end = pos
            for m in _MAIN.finditer(text, pos):
                ws, plain, rest = m.groups()
                if ws:
                    gap = 2 if gap == 2 or "\n" in ws else 1
                start = end + len(ws)
                if plain is not None:
                    end = start + len(plain)
                    if braces and (plain == "{" or plain == "}"):
                        resume = self.brace(plain, start, gap, end)
                        gap = 0
                        if resume == end:
                            continue
                        break
                    kinds.append(plain if plain in plain_kinds else IDENT)
                    texts.append(plain)
                elif rest is not None:
                    kind = self.rest_kind(rest, start, check_chars)
                    if kind is None:
                        special = start
                        break
                    end = start + len(rest)
                    if kind is _COMMENT:
                        if not gap:
                            gap = 1
                        continue
                    kinds.append(kind)
                    texts.append(rest)
                else:  # the end of the text
                    continue
                starts.append(start)
                gaps.append(gap)
                gap = 0
            else:
                return self.finish(gap > 0, gap > 1)
            if special >= 0:
                pos = self.slow_token(special, gap)
                gap = 0
            else:
                pos = resume
            if pos < 0:
                return self.finish(True, True)

    def common_tokens(self, pos: int) -> tuple[int, int]:
        """Lex from ``pos`` with one ``findall`` call, which hands back every
        match's groups at once (no match objects, no method call per token),
        up to the first token that needs more than the main regex: a template
        string, a bad string literal, a stray character. Returns where that
        token starts (-1 at the end of the text) and the gap before it.

        Only for a text without the characters slow_token reports (NUL, a BOM
        after the start, lone surrogates), and only up to the first template
        string, so no brace here can belong to one. The per-match loop of
        ``run`` does the rest: re-running findall after every template piece
        would scan the rest of the text again each time."""
        toks = self.toks
        kinds, texts, starts, gaps = toks.kinds, toks.texts, toks.starts, toks.gaps
        values = toks.values
        plain_kinds = _PLAIN_KINDS
        gap = 0
        end = pos  # matches are contiguous: offsets follow from the lengths
        # findall gives '' for a group that did not take part; only the
        # whitespace group can match empty.
        for ws, plain, rest in _MAIN.findall(self.text, pos):
            if ws:
                # (a comment runs to the end of its line: whitespace after
                # it has a newline, so this never loses a gap of 2)
                gap = 2 if "\n" in ws else 1
                end += len(ws)
            if plain:  # (the commonest case, complete here)
                kinds.append(plain if plain in plain_kinds else IDENT)
                texts.append(plain)
                starts.append(end)
                gaps.append(gap)
                gap = 0
                end += len(plain)
                continue
            start = end
            if rest:
                if rest[0] == '"' and "\\" not in rest and len(rest) > 1:  # a string without escapes
                    values[len(kinds)] = rest[1:-1]
                    kinds.append(STRING)
                else:
                    kind = self.rest_kind(rest, start, False)
                    if kind is None:
                        return start, gap
                    if kind is _COMMENT:
                        end += len(rest)
                        if not gap:
                            gap = 1
                        continue
                    kinds.append(kind)
                texts.append(rest)
                end += len(rest)
            else:  # the end of the text
                continue
            starts.append(start)
            gaps.append(gap)
            gap = 0
        return -1, gap

    def rest_kind(self, rest: str, start: int, check_chars: bool) -> str | None:
        """The kind of a token in _MAIN's group 3 at offset ``start``: STRING
        (its value recorded), NUMBER, or _COMMENT (the comment recorded, no
        token). None for what slow_token must lex: a lone character the
        other patterns rejected, or a bad string or comment."""
        c = rest[0]
        if check_chars and (c == '"' or c == "#" or c == "`") and _bad_char_message(rest) is not None:
            return None
        if c == '"':
            value = (decode_json_string(rest) if "\\" in rest else rest[1:-1]) if len(rest) > 1 else None
            if value is None:
                return None
            self.toks.values[len(self.toks.kinds)] = value
            return STRING
        if c == "#":
            self.toks.comments.append((start, rest[1:].rstrip("\r")))
            return _COMMENT
        if c == "`":
            if len(rest) == 1:
                return None
            self.toks.values[len(self.toks.kinds)] = rest[1:-1]
            return STRING
        if "0" <= c <= "9":
            if len(rest) == 1 and self.text[start + 1 : start + 2] in _NUMBER_TAIL:
                return None
            return NUMBER
        return None

    def finish(self, ws: bool, nl: bool) -> Tokens:
        self.emit(EOF, "", len(self.text), 2 if nl else 1 if ws else 0)
        return self.toks

    def brace(self, op: str, start: int, gap: int, end: int) -> int:
        """A '{' or '}' while a template string is open. Returns where to go on."""
        if op == "{":
            self.braces.append(0)
            self.emit("{", "{", start, gap)
            return end
        opened = self.braces.pop()
        self.emit("}", "}", start, gap)
        if not opened:
            return end
        # the end of a template string's embedded expression: the text resumes
        pos = self.template_piece(end, opened == 2, TMPLC, 0, end)
        return pos

    def slow_token(self, pos: int, gap: int) -> int:
        """The tokens the main regex leaves alone. Returns the next position,
        or -1 after emitting an illegal token."""
        text = self.text
        ch = text[pos]
        if ch == '"':
            return self.string(pos, gap)
        if ch == "`":
            end = text.find("`", pos + 1)
            lit = text[pos:] if end < 0 else text[pos : end + 1]
            msg = "non-terminated string" if end < 0 else _bad_char_message(lit)
            self.emit(ILLEGAL, lit, pos, gap, msg)
            return -1
        if ch == "#":  # a comment with a NUL or similar in it
            end = text.find("\n", pos)
            comment = text[pos:] if end < 0 else text[pos:end]
            self.emit(ILLEGAL, comment, pos, gap, _bad_char_message(comment))
            return -1
        if "0" <= ch <= "9":
            return self.number(pos, gap)
        if ch == "$":
            nxt = text[pos + 1 : pos + 2]
            if nxt == '"' or nxt == "`":
                return self.template_piece(pos + 2, nxt == "`", TMPL, gap, pos)
            self.emit(ILLEGAL, "$", pos, gap, "illegal $ character")
            return -1
        if ch == "!":
            self.emit(ILLEGAL, "!", pos, gap, "illegal ! character")
            return -1
        self.emit(ILLEGAL, ch, pos, gap, _bad_char_message(ch))
        return -1

    def number(self, pos: int, gap: int) -> int:
        # The checks of OPA's scanNumber, in its order; the first error wins.
        text = self.text
        n = len(text)
        i = pos
        while i < n and "0" <= text[i] <= "9":
            i += 1
        msg = None
        if i < n and text[i] == ".":
            i += 1
            j = i
            while i < n and "0" <= text[i] <= "9":
                i += 1
            if i == j:
                msg = "expected fraction"
        if i < n and text[i] in "eE":
            i += 1
            if i < n and text[i] in "+-":
                i += 1
            j = i
            while i < n and "0" <= text[i] <= "9":
                i += 1
            if i == j and msg is None:
                msg = "expected exponent"
        if i < n and text[i].isascii() and (text[i] == "_" or text[i].isalpha()):
            if msg is None:
                msg = "illegal number format"
            i = _IDENT_TAIL.match(text, i).end()  # type: ignore[union-attr]
        lit = text[pos:i]
        if msg is None:
            self.emit(NUMBER, lit, pos, gap)
            return i
        self.emit(ILLEGAL, lit, pos, gap, msg)
        return -1

    def string(self, pos: int, gap: int) -> int:
        # OPA's scanString: '\u' swallows the next four characters whatever
        # they are; the literal is then decoded as JSON.
        text = self.text
        n = len(text)
        i = pos + 1
        error = None
        while True:
            i = _STRING_BODY.match(text, i).end()  # type: ignore[union-attr]
            if i >= n or text[i] == "\n":
                error = error or "non-terminated string"
                break
            c = text[i]
            i += 1
            if c == '"':
                break
            e = text[i : i + 1]  # after a backslash
            if e and e in '\\"/bfnrt':
                i += 1
            elif e == "u":
                i += 5
            else:
                error = error or "illegal escape sequence"
        lit = text[pos:i]
        error = _bad_char_message(lit) or error
        if error is None:
            value = decode_json_string(lit)
            if value is not None:
                self.emit(STRING, lit, pos, gap, value)
                return i
            error = f"illegal string literal: {lit}"
        self.emit(ILLEGAL, lit, pos, gap, error)
        return -1

    def template_piece(self, i: int, raw: bool, kind: str, gap: int, tok_start: int) -> int:
        """Template-string text from ``i`` up to an unescaped '{' (an embedded
        expression follows) or the closing quote. Returns the position after
        it, or -1 after emitting an illegal token."""
        text = self.text
        n = len(text)
        begin = i
        error = None
        escapes: list[int] = []  # where the backslash of each '\{' is
        is_end = False
        body = _RAW_TMPL_BODY if raw else _TMPL_BODY
        quote = "`" if raw else '"'
        while True:
            i = body.match(text, i).end()  # type: ignore[union-attr]
            if i >= n or (not raw and text[i] == "\n"):
                error = error or "non-terminated string"
                break
            c = text[i]
            i += 1
            if c == quote:
                is_end = True
                break
            if c == "{":
                break
            e = text[i : i + 1]  # after a backslash
            if e == "{":
                escapes.append(i - 1)
                i += 1
            elif raw:
                continue
            elif e and e in '\\"/bfnrt':
                i += 1
            elif e == "u":
                i += 5
            else:
                error = error or "illegal escape sequence"
        lit = text[tok_start:i]
        error = _bad_char_message(lit) or error
        if error is not None:
            self.emit(ILLEGAL, lit, tok_start, gap, error)
            return -1
        inner_end = i - 1
        frm = begin
        pieces = []
        for e_pos in escapes:
            pieces.append(text[frm:e_pos])
            frm = e_pos + 1
        pieces.append(text[frm:inner_end])
        inner = "".join(pieces)
        value = inner
        if not raw and "\\" in inner:
            decoded = decode_json_string('"' + inner + '"')
            if decoded is None:
                self.emit(ILLEGAL, lit, tok_start, gap, f"illegal template-string part: {lit}")
                return -1
            value = decoded
        self.emit(kind, lit, tok_start, gap, (value, is_end, raw))
        if not is_end:
            self.braces.append(2 if raw else 1)
        return i


def tokenize(text: str) -> Tokens:
    """Split ``text`` into tokens; the last one is always ``eof``."""
    return _Lexer(text).run()
