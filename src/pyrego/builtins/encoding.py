"""Encoding builtins: base64, base64url, hex and json.* (OPA's ``encoding.go``).

YAML lives in :mod:`encoding_yaml`, URL query strings and URIs in
:mod:`encoding_url`. Strings are handled as Go byte strings (see
:mod:`._goutil`): decoders may return bytes that are not UTF-8.
"""

from __future__ import annotations

import binascii
import json
import re
from decimal import Decimal
from typing import Any

from pyrego.builtins._goutil import (
    check_json_number,
    from_bytes,
    go_quote,
    int_to_decimal,
    quote_char,
    to_bytes,
    valid_utf8,
)
from pyrego.builtins.limits import MAX_STRING, Deadline, check_string_size
from pyrego.builtins.registry import builtin, operand_error
from pyrego.go_base64 import Base64Error, go_b64decode
from pyrego.runtime.budget import tick
from pyrego.runtime.builtin_errors import BuiltinError, OperandTypeError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.convert import reject_json_constant, to_json_value
from pyrego.runtime.numbers import format_number, parse_number

# ---------------------------------------------------------------- base64



def _string(x: Any, pos: int = 1) -> str:
    if type(x) is not str:
        raise operand_error(pos, x, "string")
    return x


@builtin("base64.encode", 1)
def base64_encode(x: Any) -> str:
    return binascii.b2a_base64(to_bytes(_string(x)), newline=False).decode("ascii")


@builtin("base64.decode", 1)
def base64_decode(x: Any) -> str:
    try:
        return from_bytes(go_b64decode(to_bytes(_string(x)), url=False))
    except Base64Error as e:
        raise BuiltinError(str(e)) from None


@builtin("base64.is_valid", 1)
def base64_is_valid(x: Any) -> bool:
    if type(x) is not str:
        return False
    try:
        go_b64decode(to_bytes(x), url=False)
    except Base64Error:
        return False
    return True


@builtin("base64url.encode", 1)
def base64url_encode(x: Any) -> str:
    return binascii.b2a_base64(to_bytes(_string(x)), newline=False).decode("ascii").replace("+", "-").replace("/", "_")


@builtin("base64url.encode_no_pad", 1)
def base64url_encode_no_pad(x: Any) -> str:
    return base64url_encode(x).rstrip("=")


@builtin("base64url.decode", 1)
def base64url_decode(x: Any) -> str:
    s = _string(x)
    # Unpadded input is padded first (RFC 7515, appendix C), as OPA does.
    if not s.endswith("="):
        rem = len(to_bytes(s)) % 4
        if rem == 2:
            s += "=="
        elif rem == 3:
            s += "="
        elif rem == 1:
            raise BuiltinError(f"illegal base64url string: {s}")
    try:
        return from_bytes(go_b64decode(to_bytes(s), url=True))
    except Base64Error as e:
        raise BuiltinError(str(e)) from None


# ---------------------------------------------------------------- hex

_HEX = frozenset(b"0123456789abcdefABCDEF")


@builtin("hex.encode", 1)
def hex_encode(x: Any) -> str:
    return to_bytes(_string(x)).hex()


@builtin("hex.decode", 1)
def hex_decode(x: Any) -> str:
    src = to_bytes(_string(x))
    try:
        return (
            from_bytes(bytes.fromhex(src.decode("ascii")))
            if len(src) % 2 == 0 and _HEX.issuperset(src)
            else _hex_error(src)
        )
    except (ValueError, UnicodeDecodeError):
        return _hex_error(src)


def _hex_error(src: bytes) -> str:
    # Go checks pairs left to right, then a trailing odd byte.
    n = len(src) - len(src) % 2
    for i in range(n):
        if src[i] not in _HEX:
            raise BuiltinError(_invalid_byte(src[i]))
    if len(src) % 2:
        if src[-1] not in _HEX:
            raise BuiltinError(_invalid_byte(src[-1]))
        raise BuiltinError("encoding/hex: odd length hex string")
    raise BuiltinError("encoding/hex: invalid input")


def _invalid_byte(b: int) -> str:
    # Go's %#U: U+0067 'g' (the quoted character only when printable)
    c = chr(b)
    text = f"U+{b:04X}"
    if c.isprintable() and b != 0xAD:
        text += f" '{c}'"
    return f"encoding/hex: invalid byte: {text}"


# ---------------------------------------------------------------- json


_SURROGATE = re.compile("[\ud800-\udfff]")


def _go_json_string(s: str) -> str:
    # Go's encoder escapes <, >, & and U+2028/U+2029 and writes U+FFFD for bad UTF-8.
    text = json.dumps(s, ensure_ascii=False)
    if not s.isascii():
        # bytes that are not UTF-8 (kept as lone surrogates) become the escape \ufffd
        text = _SURROGATE.sub(r"\\ufffd", text)
    if "<" in text or ">" in text or "&" in text or "\u2028" in text or "\u2029" in text:
        text = (
            text.replace("<", "\\u003c")
            .replace(">", "\\u003e")
            .replace("&", "\\u0026")
            .replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029")
        )
    return text


def go_json_dumps(value: Any, indent: str | None = None, prefix: str = "") -> str:
    """Go's ``json.Marshal`` / ``json.MarshalIndent`` of a Rego value (OPA's ``ast.JSON``
    first: sets become sorted arrays, object keys strings, keys sorted).

    Indented, each line repeats the prefix and the indent once per level: a
    deep value or a long indent multiplies the text, so the whitespace is
    counted against :data:`~.limits.MAX_STRING` as it is laid out."""
    parts: list[str] = []
    _emit(to_json_value(value), indent, "\n" + prefix, parts, [MAX_STRING] if indent is not None else None, _Shared())
    return "".join(parts)


class _Shared(dict):  # type: ignore[type-arg]
    """The parts of a value met more than once, and their texts (a shared part is written once)."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        super().__init__()
        self.size = 0

    def spend(self, size: int) -> None:
        """Count a repeated text against :data:`~.limits.MAX_STRING`."""
        self.size += size
        if self.size > MAX_STRING:
            check_string_size(self.size, "the JSON text")


_SEEN_ONCE = ""


def _spend(budget: list[int], lines: int, width: int) -> None:
    budget[0] -= lines * width
    if budget[0] < 0:
        check_string_size(MAX_STRING + 1, "the indented JSON text")


def _emit(v: Any, indent: str | None, nl: str, out: list[str], budget: list[int] | None, shared: _Shared) -> None:
    t = type(v)
    if (t is list or t is dict) and v:
        key = (id(v), nl)
        text = shared.get(key)
        if text is None:
            shared[key] = _SEEN_ONCE
            tick(len(v) + 1)
            _emit_composite(v, t, indent, nl, out, budget, shared)
        elif not text:
            # Met again: written once more, and its text kept for the next times.
            part: list[str] = []
            _emit_composite(v, t, indent, nl, part, budget, shared)
            text = shared[key] = "".join(part)
            out.append(text)
        else:
            shared.spend(len(text))
            if budget is not None:
                _spend(budget, 1, len(text))
            out.append(text)
        return
    if t is str:
        out.append(_go_json_string(v))
    elif v is None:
        out.append("null")
    elif t is bool:
        out.append("true" if v else "false")
    elif t is int:
        out.append(int_to_decimal(v))  # any size, as Go prints a big.Int
    elif t is float or t is Decimal:
        check_json_number(v)
        out.append(format_number(v))
    elif t is list:
        out.append("[]")
    else:
        out.append("{}")


def _emit_composite(
    v: Any, t: type, indent: str | None, nl: str, out: list[str], budget: list[int] | None, shared: _Shared
) -> None:
    """A non-empty array (list) or object (dict with str keys, sorted by to_json_value)."""
    if t is list:
        out.append("[")
        inner = ""
        if indent is not None:
            _spend(budget, len(v) + 1, len(nl) + len(indent))  # type: ignore[arg-type]
            inner = nl + indent
        for i, x in enumerate(v):
            if i:
                out.append(",")
            out.append(inner)
            _emit(x, indent, inner if indent is not None else nl, out, budget, shared)
        if indent is not None:
            out.append(nl)
        out.append("]")
    else:
        out.append("{")
        inner = ""
        if indent is not None:
            _spend(budget, len(v) + 1, len(nl) + len(indent))  # type: ignore[arg-type]
            inner = nl + indent
        sep = ": " if indent is not None else ":"
        for i, k in enumerate(sorted(v, key=lambda k: to_bytes(k))):
            if i:
                out.append(",")
            out.append(inner)
            out.append(_go_json_string(k))
            out.append(sep)
            _emit(v[k], indent, inner if indent is not None else nl, out, budget, shared)
        if indent is not None:
            out.append(nl)
        out.append("}")


@builtin("json.marshal", 1)
def json_marshal(x: Any) -> str:
    return go_json_dumps(x)


def _q(s: str) -> str:
    # How OPA prints a string term in a message: Go-quoted.
    return go_quote(s)


@builtin("json.marshal_with_options", 2)
def json_marshal_with_options(x: Any, opts: Any) -> str:
    if type(opts) is not dict:
        raise operand_error(2, opts, "object")
    indent = "\t"
    prefix = ""
    implicit_pretty = False
    explicit: bool | None = None
    for k, v in opts.items():
        if type(k) is not str:
            raise OperandTypeError(f"operand 2 failed to stringify key {k!r}")
        if k == "prefix" or k == "indent":
            if type(v) is not str:
                raise OperandTypeError(f"operand 2 key {_q(k)} failed cast to string: {operand_error(0, v, 'string')}")
            if k == "prefix":
                prefix = v
            else:
                indent = v
            implicit_pretty = True
        elif k == "pretty":
            if type(v) is not bool:
                raise OperandTypeError(f"operand 2 key {_q(k)} failed cast to bool")
            explicit = v
        else:
            raise OperandTypeError(f"operand 2 object contained unknown key {_q(k)}")
    pretty = implicit_pretty if explicit is None else explicit
    if not pretty:
        return go_json_dumps(x)

    # MarshalIndent does not prefix the first line; OPA adds it.
    return prefix + go_json_dumps(x, indent, prefix)


_DECODER = json.JSONDecoder(parse_float=parse_number, parse_int=parse_number, parse_constant=reject_json_constant)
_WS = " \t\n\r"


def go_json_loads(text: str, deadline: Deadline | None = None) -> Any:
    """Parse JSON as OPA's ``util.UnmarshalJSON`` does (Go's decoder, then one
    more token must not follow); errors carry Go's messages. A large text is
    parsed with ``deadline`` counting its numbers (one Python call each)."""
    s = text
    i = 0
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    if i == n:
        raise BuiltinError("EOF")
    decoder = _DECODER if deadline is None or n < _LARGE else _counting_decoder(deadline)
    try:
        value, end = decoder.raw_decode(s, i)
    except (ValueError, RecursionError):
        raise BuiltinError(_scan_error(s, i)) from None
    if end < n and s[end] in ".eE" and type(value) in (int, float):
        _check_number_end(s, i)  # Go reads "1." / "1e" as one broken number
    while end < n and s[end] in _WS:
        end += 1
    if end < n:
        _check_trailing(s, end)
    return _fix_strings(value) if _needs_fix(s) else value


_LARGE = 1 << 20  # characters of JSON text worth counting


def _counting_decoder(deadline: Deadline) -> json.JSONDecoder:
    def number(text: str) -> Any:
        deadline.tick()
        return parse_number(text)

    return json.JSONDecoder(parse_float=number, parse_int=number, parse_constant=reject_json_constant)


def _needs_fix(s: str) -> bool:
    return "\\u" in s.lower() or not s.isascii()


def _fix_strings(v: Any) -> Any:
    # Go replaces invalid UTF-8 and lone surrogate escapes with U+FFFD.
    t = type(v)
    if t is str:
        return valid_utf8(v)
    if t is list:
        return [_fix_strings(x) for x in v]
    if t is dict:
        return {valid_utf8(k): _fix_strings(x) for k, x in v.items()}
    return v


def _check_trailing(s: str, i: int) -> None:
    # OPA reads one more token after the value: a value there is an error,
    # reported with the token's text (null reads as no token at all).
    c = s[i]
    if c in "[{":
        raise BuiltinError(f"error: invalid character '{c}' after top-level value")
    if c in "]},:":
        raise BuiltinError(f"invalid character {quote_char(c)} looking for beginning of value")
    try:
        tok, end = _DECODER.raw_decode(s, i)
    except (ValueError, RecursionError):
        raise BuiltinError(_scan_error(s, i)) from None
    if end < len(s) and s[end] in ".eE" and type(tok) in (int, float):
        _check_number_end(s, i)
    if tok is None:
        return
    if type(tok) is bool:
        text = f"%!s(bool={'true' if tok else 'false'})"
    elif type(tok) is str:
        text = tok
    else:
        text = s[i:end]
    raise BuiltinError(f"error: invalid character '{text}' after top-level value")


def go_decode_first(s: str) -> Any:
    """The first JSON value of ``s`` as Go's ``json.Decoder`` reads it (what
    follows is not read); ValueError with the decoder's text where there is
    none (``EOF``: no value at all, ``unexpected EOF``: one cut short)."""
    i = len(s) - len(s.lstrip(" \t\r\n"))
    if i == len(s):
        raise ValueError("EOF")
    try:
        return _DECODER.raw_decode(s, i)[0]
    except (ValueError, RecursionError):
        raise ValueError(_scan_error(s, i)) from None


def _check_number_end(s: str, start: int) -> None:
    # "1." is one broken number to Go, but "1.5.3" is the whole number 1.5
    # followed by a token of its own: only the broken number fails here.
    scanner = _Scanner(to_bytes(s[start:]))
    try:
        scanner.number()
    except _ScanError as e:
        raise BuiltinError(str(e)) from None
    except IndexError:
        raise BuiltinError("unexpected EOF") from None


class _ScanError(Exception):
    pass


def _scan_error(s: str, start: int) -> str:
    """The message of Go's JSON scanner for the first error in ``s[start:]``."""
    b = to_bytes(s[start:])
    try:
        _Scanner(b).value()
    except _ScanError as e:
        return str(e)
    except IndexError:
        return "unexpected EOF"
    except RecursionError:
        return "exceeded max depth"
    return "unexpected EOF"


class _Scanner:
    """A validating recursive descent with Go's error texts."""

    def __init__(self, b: bytes) -> None:
        self.b = b
        self.i = 0

    def err(self, what: str) -> _ScanError:
        c = self.b[self.i]
        return _ScanError(f"invalid character {quote_char(chr(c))} {what}")

    def ws(self) -> int:
        b = self.b
        while b[self.i] in b" \t\r\n":
            self.i += 1
        return b[self.i]

    def value(self) -> None:
        c = self.ws()
        if c == 0x7B:
            self.obj()
        elif c == 0x5B:
            self.arr()
        elif c == 0x22:
            self.string()
        elif c == 0x2D or 0x30 <= c <= 0x39:
            self.number()
        elif c in b"tfn":
            word = {0x74: b"true", 0x66: b"false", 0x6E: b"null"}[c]
            self.i += 1
            for expect in word[1:]:
                if self.b[self.i] != expect:
                    raise self.err(f"in literal {word.decode()} (expecting {quote_char(chr(expect))})")
                self.i += 1
        else:
            raise self.err("looking for beginning of value")

    def obj(self) -> None:
        self.i += 1
        if self.ws() == 0x7D:
            self.i += 1
            return
        while True:
            if self.ws() != 0x22:
                raise self.err("looking for beginning of object key string")
            self.string()
            if self.ws() != 0x3A:
                raise self.err("after object key")
            self.i += 1
            self.value()
            c = self.ws()
            if c == 0x2C:
                self.i += 1
                continue
            if c == 0x7D:
                self.i += 1
                return
            raise self.err("after object key:value pair")

    def arr(self) -> None:
        self.i += 1
        if self.ws() == 0x5D:
            self.i += 1
            return
        while True:
            self.value()
            c = self.ws()
            if c == 0x2C:
                self.i += 1
                continue
            if c == 0x5D:
                self.i += 1
                return
            raise self.err("after array element")

    def string(self) -> None:
        b = self.b
        self.i += 1
        while True:
            c = b[self.i]
            if c == 0x22:
                self.i += 1
                return
            if c == 0x5C:
                self.i += 1
                e = b[self.i]
                if e == 0x75:
                    for _ in range(4):
                        self.i += 1
                        if b[self.i] not in _HEX:
                            raise self.err("in \\u hexadecimal character escape")
                elif e not in b'bfnrt\\/"':
                    raise self.err("in string escape code")
            elif c < 0x20:
                raise self.err("in string literal")
            self.i += 1

    def number(self) -> None:
        b = self.b
        if b[self.i] == 0x2D:
            self.i += 1
            if not 0x30 <= self._peek() <= 0x39:
                raise self.err("in numeric literal")
        if b[self.i] == 0x30:
            self.i += 1
        else:
            while 0x30 <= self._peek() <= 0x39:
                self.i += 1
        if self._peek() == 0x2E:
            self.i += 1
            if not 0x30 <= self._peek() <= 0x39:
                raise self.err("after decimal point in numeric literal")
            while 0x30 <= self._peek() <= 0x39:
                self.i += 1
        if self._peek() in (0x65, 0x45):
            self.i += 1
            if self._peek() in (0x2B, 0x2D):
                self.i += 1
            if not 0x30 <= self._peek() <= 0x39:
                raise self.err("in exponent of numeric literal")
            while 0x30 <= self._peek() <= 0x39:
                self.i += 1

    def _peek(self) -> int:
        if self.i >= len(self.b):
            # inside a number, the end of input either ends it or is unexpected
            return -1
        return self.b[self.i]


@builtin("json.unmarshal", 1, cancellable=True)
def json_unmarshal(ctx: EvalContext, x: Any) -> Any:
    text = _string(x)
    return go_json_loads(text, Deadline(ctx) if len(text) >= _LARGE else None)


@builtin("json.is_valid", 1)
def json_is_valid(x: Any) -> bool:
    if type(x) is not str:
        return False
    try:
        _, end = _DECODER.raw_decode(x, len(x) - len(x.lstrip(_WS)))
    except (ValueError, RecursionError, IndexError):
        return False
    return not x[end:].strip(_WS)
