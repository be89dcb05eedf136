"""glob.match and glob.quote_meta (OPA uses github.com/gobwas/glob).

The pattern is read with gobwas's grammar (its lexer quirks and error texts
included) and compiled to an anchored RE2 expression, so matching is linear:

- ``*`` any run of characters that are not delimiters; ``**`` any run at all;
- ``?`` one character that is not a delimiter;
- ``[abc]`` / ``[!abc]`` / ``[a-z]`` / ``[!a-z]`` one character (in or out);
- ``{a,b,...}`` alternatives, which nest; ``\\`` escapes the next character.

Where gobwas's matcher is wrong (``?`` matching nothing, ``*`` eating a
literal of the pattern, ...), this follows the documented glob meaning, as
OPA's newer conformance cases expect.
"""

from __future__ import annotations

from typing import Any

from re2 import _re2  # type: ignore[import-untyped]

from pyrego.builtins._goutil import to_bytes, valid_utf8
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import BuiltinError, OperandTypeError

_OPTIONS = _re2.RE2.Options()
_OPTIONS.log_errors = False
_ANCHOR_BOTH = _re2.RE2.Anchor.ANCHOR_BOTH

_CACHE_MAX = 256
_cache: dict[tuple[str, tuple[str, ...]], Any] = {}

_TEXT_BREAK = frozenset("?*[{")
_TERMS_BREAK = frozenset("?*[{},")


class _GlobError(Exception):
    pass


def _lit(c: str) -> str:
    return f"\\x{{{ord(c):x}}}"


class _Compiler:
    """gobwas's lexer and parser in one pass, writing the regular expression."""

    def __init__(self, pattern: str, delimiters: tuple[str, ...]) -> None:
        self.s = pattern
        self.i = 0
        self.depth = 0  # open {...} groups
        seps = "".join(_lit(d) for d in delimiters)
        self.any = f"[^{seps}]*" if seps else "(?s:.*)"
        self.single = f"[^{seps}]" if seps else "(?s:.)"

    def compile(self) -> str:
        out: list[str] = []
        s = self.s
        n = len(s)
        while self.i < n:
            c = s[self.i]
            self.i += 1
            if c == "{":
                self.depth += 1
                out.append("(?:")
            elif c == "," and self.depth:
                out.append("|")
            elif c == "}" and self.depth:
                self.depth -= 1
                out.append(")")
            elif c == "[":
                out.append(self._range())
            elif c == "?":
                out.append(self.single)
            elif c == "*":
                if self.i < n and s[self.i] == "*":
                    self.i += 1
                    out.append("(?s:.*)")
                else:
                    out.append(self.any)
            else:
                self.i -= 1
                out.append("".join(_lit(ch) for ch in self._text(_TERMS_BREAK if self.depth else _TEXT_BREAK)))
        out.append(")" * self.depth)  # unclosed groups end with the pattern
        return "".join(out)

    def _text(self, breakers: frozenset[str]) -> str:
        s = self.s
        data: list[str] = []
        escaped = False
        while self.i < len(s):
            c = s[self.i]
            self.i += 1
            if not escaped:
                if c == "\\":
                    escaped = True
                    continue
                if c in breakers:
                    self.i -= 1
                    break
            escaped = False
            data.append(c)
        return "".join(data)

    def _read(self) -> str:
        if self.i >= len(self.s):
            raise _GlobError("unexpected end of input")
        c = self.s[self.i]
        self.i += 1
        return c

    def _range(self) -> str:
        s = self.s
        negate = False
        lo = hi = ""
        chars = ""
        c = self._read()
        if c == "!":
            negate = True
            c = self._read()
        if self.i < len(s) and s[self.i] == "-":
            self.i += 1
            lo = c
            hi = self._read()
        else:
            self.i -= 1
            chars = self._text(frozenset("]"))
        # gobwas lexes the whole range before its parser checks it
        if self._read() != "]":
            raise _GlobError("expected close range character")
        if lo and hi < lo:
            raise _GlobError(f"hi character '{hi}' should be greater than lo '{lo}'")
        if bool(chars) == bool(lo):
            raise _GlobError("could not parse range")
        body = f"{_lit(lo)}-{_lit(hi)}" if lo else "".join(_lit(ch) for ch in chars)
        return f"[{'^' if negate else ''}{body}]"


def compile_glob(pattern: str, delimiters: tuple[str, ...]) -> Any:
    key = (pattern, delimiters)
    r = _cache.get(key)
    if r is not None:
        return r
    try:
        expr = _Compiler(pattern, delimiters).compile()
    except _GlobError as e:
        raise BuiltinError(str(e)) from None
    r = _re2.RE2(expr.encode("utf-8", "surrogatepass"), _OPTIONS)
    if not r.ok():
        raise BuiltinError(f"invalid glob: {pattern}")
    if len(_cache) >= _CACHE_MAX:
        del _cache[next(iter(_cache))]
    _cache[key] = r
    return r


def _delimiters(x: Any) -> tuple[str, ...]:
    if x is None:
        return ()
    if type(x) is not list:
        raise operand_error(2, x, "array", "null")
    out = []
    for d in x:
        if type(d) is not str:
            raise OperandTypeError(f"operand 2 must be array of strings but got array containing {_type(d)}")
        if len(d) != 1:
            raise OperandTypeError("operand 2 must be array of runes but got array containing string")
        out.append(d)
    # an empty list means the default delimiter "."
    return tuple(out) if out else (".",)


def _type(x: Any) -> str:
    from pyrego.runtime.values import type_name

    return type_name(x)


@builtin("glob.match", 3)
def glob_match(pattern: Any, delimiters: Any, match: Any) -> bool:
    if type(pattern) is not str:
        raise operand_error(1, pattern, "string")
    delims = _delimiters(delimiters)
    if type(match) is not str:
        raise operand_error(3, match, "string")
    r = _cache.get((pattern, delims)) or compile_glob(pattern, delims)
    # gobwas/glob reads a byte that is not UTF-8 as U+FFFD.
    b = match.encode("utf-8") if match.isascii() else to_bytes(valid_utf8(match))
    return r.Match(_ANCHOR_BOTH, b, 0, len(b))[0][0] >= 0  # type: ignore[no-any-return]


_SPECIAL = frozenset("*?\\[]{}")


@builtin("glob.quote_meta", 1)
def glob_quote_meta(pattern: Any) -> str:
    if type(pattern) is not str:
        raise operand_error(1, pattern, "string")
    return "".join("\\" + c if c in _SPECIAL else c for c in pattern)
