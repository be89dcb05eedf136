"""``sprintf`` with Go's ``fmt`` semantics, as OPA runs it.

OPA hands Go's ``fmt.Sprintf`` one Go value per array element: an integer
that fits 64 bits is an ``int64``, a larger one a ``*big.Int``, any other
number a ``float64`` when its text has a decimal point and else that text (an
integral float counts as an integer), a string a ``string``, and every other value (booleans,
null, arrays, objects, sets) the *string* of its Rego text (so ``%v`` of
``true`` is ``true`` but ``%t`` of it is ``%!t(string=true)``). This module
re-implements the part of ``fmt`` those types reach: flags ``+ - # 0 space``,
width and precision (also ``*``), explicit argument indexes ``%[n]d``, every
verb, and Go's error notes (``%!d(string=x)``, ``%!d(MISSING)``,
``%!(EXTRA ...)``, ``%!(NOVERB)``, ``%!d(BADINDEX)``).

Integers print in full at any size up to :data:`~.limits.MAX_INT_BITS`, and
the padding that widths and precisions add counts against
:data:`~.limits.MAX_STRING` (Go allows 10**7 per verb).
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import Any

from pyrego.builtins._goutil import int_to_decimal
from pyrego.builtins.limits import MAX_STRING, check_string_size
from pyrego.builtins.registry import builtin
from pyrego.builtins.sprintf_float import format_float, sharp_float
from pyrego.builtins.types import INT64_MAX, INT64_MIN, type_err
from pyrego.runtime.bigint import MAX_INT_BITS, text_int
from pyrego.runtime.budget import tick
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.numbers import format_number
from pyrego.runtime.values import check_plain, freeze, sort_key, thaw

# ---------------------------------------------------------------- Rego text of values


def go_quote(s: str, ascii_only: bool = False, quote: str = '"') -> str:
    """Go's ``strconv.Quote`` (or ``QuoteToASCII`` / ``QuoteRune`` style)."""
    if s.isascii() and s.isprintable() and quote not in s and "\\" not in s:
        # Printable ASCII (Go's strconv.IsPrint there is 0x20-0x7E, as Python's) with nothing to escape.
        return quote + s + quote
    out = [quote]
    for ch in s:
        r = ord(ch)
        if ch == quote or ch == "\\":
            out.append("\\" + ch)
            continue
        if 0xD800 <= r <= 0xDFFF:
            if 0xDC80 <= r <= 0xDCFF:
                # A byte that is not UTF-8, kept as a surrogateescape code point.
                out.append(f"\\x{r - 0xDC00:02x}")
                continue
            # Any other lone surrogate: Go would have read U+FFFD.
            ch, r = "\ufffd", 0xFFFD
        if ascii_only:
            if r < 0x80 and ch.isprintable():
                out.append(ch)
                continue
        elif ch.isprintable():
            out.append(ch)
            continue
        out.append(_escape_rune(r))
    out.append(quote)
    return "".join(out)


_SIMPLE_ESCAPES = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def _escape_rune(r: int) -> str:
    esc = _SIMPLE_ESCAPES.get(r)
    if esc is not None:
        return esc
    if r < 0x20 or r == 0x7F:
        return f"\\x{r:02x}"
    if r < 0x10000:
        return f"\\u{r:04x}"
    return f"\\U{r:08x}"


def format_value(value: Any) -> str:
    """A value as OPA writes it as Rego text (strings quoted, sets as ``{...}``).

    A part met twice (values may share parts) keeps its text for the next
    times, and the walk checks the evaluation's deadline."""
    t = type(value)
    if t is str:
        return go_quote(value)
    if t is bool:
        return "true" if value else "false"
    if value is None:
        return "null"
    if t is int:
        return int_to_decimal(value)
    if t is float or t is Decimal:
        return format_number(value)
    return _format_composite(value, {})


def _format_composite(value: Any, shared: dict[int, Any]) -> str:
    t = type(value)
    if t is not list and t is not tuple and t is not dict and t is not frozenset and t is not set:
        if t in _SCALARS:
            return format_value(value)
        check_plain(value)  # (a caller's object of no Rego type: an error, not its repr)
        return str(value)
    done = shared.get(id(value))
    if done is not None and done[1] is not None:
        check_string_size(len(done[1]), "the formatted value")
        return done[1]  # type: ignore[no-any-return]
    tick(len(value) + 1)
    if t is list or t is tuple:
        text = "[" + ", ".join(_format_composite(v, shared) for v in value) + "]"
    elif t is dict:
        keys = sorted((thaw(k) for k in value), key=sort_key)
        text = "{" + ", ".join(_format_composite(k, shared) + ": " + _format_composite(value[freeze(k)], shared) for k in keys) + "}"
    elif not value:
        text = "set()"
    else:
        members = sorted((thaw(k) for k in value), key=sort_key)
        text = "{" + ", ".join(_format_composite(v, shared) for v in members) + "}"
    # (The value is kept with its text: its id stays its own while the walk runs.)
    shared[id(value)] = (value, None if done is None else text)
    return text


_SCALARS = frozenset((str, bool, int, float, Decimal, type(None)))


# ---------------------------------------------------------------- Go values

# A Go argument: (Go type name, value). Rego values only make "int64",
# "*big.Int", "float64" and "string"; the template engine also passes
# "int", "bool", "json.Number", "nil" and composites as pre-printed text.
_GoArg = tuple[str, Any]
_INT_KINDS = ("int64", "int")
_STRING_KINDS = ("string", "json.Number")


def _go_arg(value: Any) -> _GoArg:
    t = type(value)
    if t is int:
        return ("int64", value) if INT64_MIN <= value <= INT64_MAX else ("*big.Int", value)
    if t is float or t is Decimal:
        return _go_number_arg(format_number(value))
    if t is str:
        return ("string", value)
    return ("string", format_value(value))


def _go_number_arg(text: str) -> _GoArg:
    """The Go value OPA makes of a number with the text ``text``: an integer
    text is an int64 or a ``*big.Int``; a text with a decimal point is the
    nearest float64 (``1.5e-400`` is 0); any other (``1e-07``, ``1e-400``) is
    passed as its text, a string (so ``%d`` of ``1 / 10000000`` is
    ``%!d(string=1e-07)`` but ``%d`` of ``3 / 20000000`` is
    ``%!d(float64=1.5e-07)``)."""
    if "." in text:
        f = float(text)
        return ("float64", f) if f - f == 0 else ("string", text)
    if "e" in text:
        return ("string", text)
    if text[-1] in "nf":  # (nan, inf, -inf: only a Python caller can pass one)
        raise BuiltinError(f"{text} is not a number: Rego numbers are finite")
    if len(text) > 4000:
        # Past Python's int-from-text digit limit: the integer still, made in
        # close to linear time (and past pyrego's integer size limit, its text).
        if len(text) * 3.33 > MAX_INT_BITS:
            return ("string", text)
        n = -text_int(text[1:]) if text[0] == "-" else text_int(text)
        return ("*big.Int", n)
    n = int(text)
    return ("int64", n) if INT64_MIN <= n <= INT64_MAX else ("*big.Int", n)


class _Flags:
    __slots__ = ("plus", "minus", "sharp", "space", "zero", "plus_v", "sharp_v", "wid", "wid_present", "prec", "prec_present")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.plus = self.minus = self.sharp = self.space = self.zero = False
        self.plus_v = self.sharp_v = False
        self.wid = 0
        self.wid_present = False
        self.prec = 0
        self.prec_present = False


def _too_large(n: int) -> bool:
    return n > 1_000_000 or n < -1_000_000


def _parse_num(s: str, start: int, end: int) -> tuple[int, bool, int]:
    """Go's parsenum: (number, found, new index)."""
    if start >= end:
        return 0, False, end
    num = 0
    found = False
    i = start
    while i < end and "0" <= s[i] <= "9":
        if _too_large(num):
            return 0, False, end
        num = num * 10 + ord(s[i]) - 48
        found = True
        i += 1
    return num, found, i


class _Printer:
    """One ``Sprintf`` call: Go's ``pp`` and ``fmt`` state."""

    def __init__(self) -> None:
        self.buf: list[str] = []
        self.f = _Flags()
        self.arg: _GoArg | None = None
        self.reordered = False
        self.good_arg_num = True
        self.grown = 0

    def grow(self, n: int) -> None:
        """Count ``n`` characters a width or precision adds (Go allows up to
        10**7 per verb, so a short format could build gigabytes)."""
        self.grown += n
        if self.grown > MAX_STRING:
            check_string_size(self.grown, "the formatted string")

    # -- padding

    def write_padding(self, n: int) -> None:
        if n <= 0:
            return
        self.grow(n)
        f = self.f
        self.buf.append(("0" if f.zero and not f.minus else " ") * n)

    def pad(self, s: str) -> None:
        f = self.f
        if not f.wid_present or f.wid == 0:
            self.buf.append(s)
            return
        width = f.wid - len(s)
        if not f.minus:
            self.write_padding(width)
            self.buf.append(s)
        else:
            self.buf.append(s)
            self.write_padding(width)

    def pad_no_zero(self, s: str) -> None:
        old = self.f.zero
        self.f.zero = False
        self.pad(s)
        self.f.zero = old

    # -- argument dispatch

    def print_arg(self, arg: _GoArg, verb: str) -> None:
        self.arg = arg
        kind, value = arg
        if kind == "nil":
            if verb == "T" or verb == "v":
                self.pad("<nil>")
            else:
                self.bad_verb(verb)
            return
        if verb == "T":
            self.fmt_s(kind)
            return
        if verb == "p":
            self.bad_verb(verb)
            return
        if kind in _INT_KINDS:
            self.fmt_integer(value, verb)
        elif kind in _STRING_KINDS:
            self.fmt_string(value, verb)
        elif kind == "float64":
            self.fmt_float(value, verb)
        elif kind == "*big.Int":
            self.fmt_big(value, verb)
        elif kind == "bool":
            if verb == "t" or verb == "v":
                self.pad("true" if value else "false")
            else:
                self.bad_verb(verb)
        elif verb == "v" or verb == "s":
            # A composite from the template engine, already printed with %v.
            self.pad(value)
        else:
            self.bad_verb(verb)

    def bad_verb(self, verb: str) -> None:
        self.buf.append("%!" + verb + "(")
        if self.arg is not None and self.arg[0] != "nil":
            self.buf.append(self.arg[0] + "=")
            self.print_arg(self.arg, "v")
        else:
            self.buf.append("<nil>")
        self.buf.append(")")

    # -- strings

    def truncate(self, s: str) -> str:
        f = self.f
        if f.prec_present and f.prec < len(s):
            return s[: f.prec]
        return s

    def fmt_s(self, s: str) -> None:
        self.pad(self.truncate(s))

    def fmt_q(self, s: str) -> None:
        f = self.f
        s = self.truncate(s)
        if f.sharp and _can_backquote(s):
            self.pad("`" + s + "`")
        else:
            self.pad(go_quote(s, ascii_only=f.plus))

    def fmt_sx(self, s: str, upper: bool) -> None:
        f = self.f
        data = _go_bytes(s)
        length = len(data)
        if f.prec_present and f.prec < length:
            length = f.prec
        width = 2 * length
        if width > 0:
            if f.space:
                if f.sharp:
                    width *= 2
                width += length - 1
            elif f.sharp:
                width += 2
        else:
            if f.wid_present:
                self.write_padding(f.wid)
            return
        if f.wid_present and f.wid > width and not f.minus:
            self.write_padding(f.wid - width)
        prefix = "0X" if upper else "0x"
        parts = []
        if f.sharp:
            parts.append(prefix)
        for i in range(length):
            if f.space and i > 0:
                parts.append(" ")
                if f.sharp:
                    parts.append(prefix)
            parts.append(f"{data[i]:02X}" if upper else f"{data[i]:02x}")
        self.buf.append("".join(parts))
        if f.wid_present and f.wid > width and f.minus:
            self.write_padding(f.wid - width)

    def fmt_string(self, s: str, verb: str) -> None:
        if verb == "v":
            if self.f.sharp_v:
                self.fmt_q(s)
            else:
                self.fmt_s(s)
        elif verb == "s":
            self.fmt_s(s)
        elif verb == "x" or verb == "X":
            self.fmt_sx(s, verb == "X")
        elif verb == "q":
            self.fmt_q(s)
        else:
            self.bad_verb(verb)

    # -- int64

    def fmt_integer(self, v: int, verb: str) -> None:
        if verb == "v" or verb == "d":
            self.fmt_int_base(v, 10, verb, False)
        elif verb == "b":
            self.fmt_int_base(v, 2, verb, False)
        elif verb == "o" or verb == "O":
            self.fmt_int_base(v, 8, verb, False)
        elif verb == "x":
            self.fmt_int_base(v, 16, verb, False)
        elif verb == "X":
            self.fmt_int_base(v, 16, verb, True)
        elif verb == "c":
            self.pad(_rune_char(v))
        elif verb == "q":
            r = _rune_char(v)
            self.pad(go_quote(r, ascii_only=self.f.plus, quote="'"))
        elif verb == "U":
            self.fmt_unicode(v)
        else:
            self.bad_verb(verb)

    def fmt_int_base(self, v: int, base: int, verb: str, upper: bool) -> None:
        f = self.f
        negative = v < 0
        u = -v if negative else v
        prec = 0
        if f.prec_present:
            prec = f.prec
            if prec == 0 and u == 0:
                old = f.zero
                f.zero = False
                self.write_padding(f.wid)
                f.zero = old
                return
        elif f.zero and not f.minus and f.wid_present:
            prec = f.wid
            if negative or f.plus or f.space:
                prec -= 1
        digits = _digits(u, base, upper)
        if len(digits) < prec:
            self.grow(prec - len(digits))
            digits = "0" * (prec - len(digits)) + digits
        if f.sharp:
            if base == 2:
                digits = "0b" + digits
            elif base == 8:
                if digits[0] != "0":
                    digits = "0" + digits
            elif base == 16:
                digits = ("0X" if upper else "0x") + digits
        if verb == "O":
            digits = "0o" + digits
        if negative:
            digits = "-" + digits
        elif f.plus:
            digits = "+" + digits
        elif f.space:
            digits = " " + digits
        self.pad_no_zero(digits)

    def fmt_unicode(self, v: int) -> None:
        f = self.f
        u = v & 0xFFFFFFFFFFFFFFFF
        prec = 4
        if f.prec_present and f.prec > 4:
            prec = f.prec
            self.grow(prec)
        text = "U+" + format(u, "X").rjust(prec, "0")
        if f.sharp and u <= 0x10FFFF and not 0xD800 <= u <= 0xDFFF and chr(u).isprintable():
            text += " '" + chr(u) + "'"
        self.pad_no_zero(text)

    # -- *big.Int (Go's big.Int.Format)

    def fmt_big(self, v: int, verb: str) -> None:
        f = self.f
        bases = {"b": 2, "o": 8, "O": 8, "d": 10, "s": 10, "v": 10, "x": 16, "X": 16}
        base = bases.get(verb)
        if base is None:
            self.buf.append(f"%!{verb}(big.Int={v})")
            return
        if v < 0:
            sign = "-"
        elif f.plus or f.plus_v:
            sign = "+"
        elif f.space:
            sign = " "
        else:
            sign = ""
        prefix = ""
        if f.sharp or f.sharp_v:
            prefix = {"b": "0b", "o": "0", "x": "0x", "X": "0X"}.get(verb, "")
        if verb == "O":
            prefix = "0o"
        digits = _digits(abs(v), base, verb == "X")
        zeros = 0
        if f.prec_present:
            if len(digits) < f.prec:
                zeros = f.prec - len(digits)
            elif digits == "0" and f.prec == 0:
                return
        self.grow(zeros)
        left = right = 0
        length = len(sign) + len(prefix) + zeros + len(digits)
        if f.wid_present and length < f.wid:
            d = f.wid - length
            if f.minus:
                right = d
            elif f.zero and not f.prec_present:
                zeros = d
            else:
                left = d
            self.grow(d)
        self.buf.append(" " * left + sign + prefix + "0" * zeros + digits + " " * right)

    # -- float64

    def fmt_float(self, v: float, verb: str) -> None:
        if verb == "v":
            self.fmt_float_go(v, "g", -1)
        elif verb in ("b", "g", "G", "x", "X"):
            self.fmt_float_go(v, verb, -1)
        elif verb in ("f", "F", "e", "E"):
            self.fmt_float_go(v, "f" if verb == "F" else verb, 6)
        else:
            self.bad_verb(verb)

    def fmt_float_go(self, v: float, verb: str, prec: int) -> None:
        f = self.f
        if f.prec_present:
            prec = f.prec
            self.grow(prec)
        num = format_float(v, verb, prec)
        num = num if num[0] in "+-" else "+" + num
        if f.space and num[0] == "+" and not f.plus:
            num = " " + num[1:]
        if f.sharp and verb != "b":
            num = sharp_float(num, verb, prec)
        if f.plus or num[0] != "+":
            if f.zero and not f.minus and f.wid_present and f.wid > len(num):
                self.buf.append(num[0])
                self.write_padding(f.wid - len(num))
                self.buf.append(num[1:])
                return
            self.pad(num)
            return
        self.pad(num[1:])

def _go_bytes(s: str) -> bytes:
    """The bytes of a Rego string (surrogateescape code points are raw bytes)."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        fixed = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF and not 0xDC80 <= ord(c) <= 0xDCFF else c for c in s)
        return fixed.encode("utf-8", "surrogateescape")


def _can_backquote(s: str) -> bool:
    for ch in s:
        if ch == "\ufeff":
            return False
        r = ord(ch)
        if (r < 0x20 and ch != "\t") or ch == "`" or r == 0x7F or 0xD800 <= r <= 0xDFFF:
            return False
    return True


def _rune_char(v: int) -> str:
    if 0 <= v <= 0x10FFFF and not 0xD800 <= v <= 0xDFFF:
        return chr(v)
    return "\ufffd"


def _digits(u: int, base: int, upper: bool) -> str:
    if base == 10:
        return int_to_decimal(u)
    spec = {2: "b", 8: "o", 16: "X" if upper else "x"}[base]
    return format(u, spec)

# ---------------------------------------------------------------- Sprintf


def go_sprintf(fmt: str, values: list[Any]) -> str:
    """Go's ``fmt.Sprintf(fmt, args...)`` over Rego values."""
    return go_sprintf_args(fmt, [_go_arg(v) for v in values])


def go_sprintf_args(fmt: str, args: list[_GoArg]) -> str:
    """Go's ``fmt.Sprintf`` over Go arguments given as (type name, value)."""
    p = _Printer()
    buf = p.buf
    f = p.f
    end = len(fmt)
    n_args = len(args)
    arg_num = 0
    i = 0
    while i < end:
        p.good_arg_num = True
        j = fmt.find("%", i)
        if j < 0:
            buf.append(fmt[i:])
            break
        if j > i:
            buf.append(fmt[i:j])
        i = j + 1
        f.clear()
        after_index = False
        simple = False
        # flags, and the fast path of a plain lowercase verb
        while i < end:
            c = fmt[i]
            if c == "#":
                f.sharp = True
            elif c == "0":
                f.zero = not f.minus
            elif c == "+":
                f.plus = True
            elif c == "-":
                f.minus = True
                f.zero = False
            elif c == " ":
                f.space = True
            else:
                if "a" <= c <= "z" and arg_num < n_args:
                    if c == "v":
                        f.sharp_v, f.sharp = f.sharp, False
                        f.plus_v, f.plus = f.plus, False
                    p.print_arg(args[arg_num], c)
                    arg_num += 1
                    i += 1
                    simple = True
                break
            i += 1
        if simple:
            continue

        arg_num, i, after_index = _arg_number(p, arg_num, fmt, i, n_args)

        # width
        if i < end and fmt[i] == "*":
            i += 1
            f.wid, f.wid_present, arg_num = _int_from_arg(args, arg_num)
            if not f.wid_present:
                buf.append("%!(BADWIDTH)")
            if f.wid < 0:
                f.wid = -f.wid
                f.minus = True
                f.zero = False
            after_index = False
        else:
            f.wid, f.wid_present, i = _parse_num(fmt, i, end)
            if after_index and f.wid_present:
                p.good_arg_num = False

        # precision
        if i + 1 < end and fmt[i] == ".":
            i += 1
            if after_index:
                p.good_arg_num = False
            arg_num, i, after_index = _arg_number(p, arg_num, fmt, i, n_args)
            if i < end and fmt[i] == "*":
                i += 1
                f.prec, f.prec_present, arg_num = _int_from_arg(args, arg_num)
                if f.prec < 0:
                    f.prec = 0
                    f.prec_present = False
                if not f.prec_present:
                    buf.append("%!(BADPREC)")
                after_index = False
            else:
                f.prec, f.prec_present, i = _parse_num(fmt, i, end)
                if not f.prec_present:
                    f.prec = 0
                    f.prec_present = True

        if not after_index:
            arg_num, i, after_index = _arg_number(p, arg_num, fmt, i, n_args)

        if i >= end:
            buf.append("%!(NOVERB)")
            break

        verb = fmt[i]
        i += 1
        if verb == "%":
            buf.append("%")
        elif not p.good_arg_num:
            buf.append(f"%!{verb}(BADINDEX)")
        elif arg_num >= n_args:
            buf.append(f"%!{verb}(MISSING)")
        else:
            if verb == "v":
                f.sharp_v, f.sharp = f.sharp, False
                f.plus_v, f.plus = f.plus, False
            p.print_arg(args[arg_num], verb)
            arg_num += 1

    if not p.reordered and arg_num < n_args:
        f.clear()
        buf.append("%!(EXTRA ")
        for k, arg in enumerate(args[arg_num:]):
            if k:
                buf.append(", ")
            if arg[0] == "nil":
                buf.append("<nil>")
                continue
            buf.append(arg[0] + "=")
            p.print_arg(arg, "v")
        buf.append(")")
    return "".join(buf)


def _arg_number(p: _Printer, arg_num: int, fmt: str, i: int, n_args: int) -> tuple[int, int, bool]:
    """Go's argNumber: an explicit ``[n]`` index, if one starts at i."""
    if i >= len(fmt) or fmt[i] != "[":
        return arg_num, i, False
    p.reordered = True
    index, width, ok = _parse_arg_number(fmt[i:])
    if ok and 0 <= index < n_args:
        return index, i + width, True
    p.good_arg_num = False
    return arg_num, i + width, ok


def _parse_arg_number(s: str) -> tuple[int, int, bool]:
    if len(s) < 3:
        return 0, 1, False
    for k in range(1, len(s)):
        if s[k] == "]":
            num, ok, newi = _parse_num(s, 1, k)
            if not ok or newi != k:
                return 0, k + 1, False
            return num - 1, k + 1, True
    return 0, 1, False


def _int_from_arg(args: list[_GoArg], arg_num: int) -> tuple[int, bool, int]:
    num, is_int = 0, False
    if arg_num < len(args):
        kind, value = args[arg_num]
        if kind in _INT_KINDS:
            num, is_int = value, True
        arg_num += 1
        if _too_large(num):
            num, is_int = 0, False
    return num, is_int, arg_num


_SIMPLE_VERB = re.compile(r"%(.)", re.DOTALL)


@lru_cache(maxsize=512)
def _simple_plan(fmt: str) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """For a format made only of text and bare %s/%d/%v/%q/%%: its text up to
    the first verb, then each verb that takes an argument with the text after
    it (``%%`` is text)."""
    first: str | None = None
    verbs: list[tuple[str, str]] = []
    text: list[str] = []
    last = 0
    for m in _SIMPLE_VERB.finditer(fmt):
        verb = m.group(1)
        if verb not in "sdvq%":
            return None
        text.append(fmt[last : m.start()])
        last = m.end()
        if verb == "%":
            text.append("%")
            continue
        if first is None:
            first = "".join(text)
        else:
            verbs[-1] = (verbs[-1][0], "".join(text))
        text = []
        verbs.append((verb, ""))
    rest = fmt[last:]
    if "%" in rest:
        return None  # a lone "%" at the end (every other one starts a match)
    text.append(rest)
    if first is None:
        return "".join(text), ()
    verbs[-1] = (verbs[-1][0], "".join(text))
    return first, tuple(verbs)


def _simple_sprintf(fmt: str, values: Any) -> str | None:
    """The common case without Go's machinery: strings under %s/%v/%q and 64-bit ints under %d/%v."""
    plan = _simple_plan(fmt)
    if plan is None:
        return None
    first, verbs = plan
    if len(verbs) != len(values):
        return None
    out = [first]
    for (verb, piece), v in zip(verbs, values):
        t = type(v)
        if t is str:
            if verb == "s" or verb == "v":
                out.append(v)
            elif verb == "q":
                out.append(go_quote(v))
            else:
                return None
        elif t is int and (verb == "d" or verb == "v") and INT64_MIN <= v <= INT64_MAX:
            out.append(str(v))
        else:
            return None
        out.append(piece)
    return "".join(out)


@builtin("sprintf", 2)
def sprintf(fmt: Any, values: Any) -> str:
    if type(fmt) is not str:
        raise type_err(1, fmt, "string")
    t = type(values)
    if t is not list and t is not tuple:
        raise type_err(2, values, "array")
    text = _simple_sprintf(fmt, values)
    if text is not None:
        return text
    return go_sprintf(fmt, list(values))
