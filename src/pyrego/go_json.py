"""JSON text as Go's ``encoding/json`` writes it (the form of OPA's command output).

OPA's commands print Go values with ``json.MarshalIndent(x, "", "  ")`` or an
``Encoder`` with the same indent. What differs from Python's :mod:`json`:

- ``<``, ``>`` and ``&`` are written ``\\u003c``, ``\\u003e``, ``\\u0026`` (Go
  escapes HTML characters by default), and so are U+2028 and U+2029;
  ``\\b`` and ``\\f`` keep their short escapes, other control characters
  are ``\\u00XX`` in lower-case hex; text that is not valid UTF-8 (a lone
  surrogate here) becomes U+FFFD.
- A number OPA keeps as source text (``json.Number``) is written as that
  text: :class:`GoNumber` carries it. A float is written the shortest way
  that reads back (``1e+21``, ``1.5e-07`` past Go's thresholds).
- Objects keep the key order of the dict given: callers build them in the
  order of the Go struct, or sorted (:func:`sorted_map`) where Go marshals a
  map.
- Empty arrays and objects are ``[]`` and ``{}`` even when indenting.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from typing import Any

__all__ = ["GoNumber", "marshal", "go_float", "go_string", "json_kind", "sorted_map"]


class GoNumber(str):
    """A number written as this exact text (OPA's ``json.Number``)."""

    __slots__ = ()


_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_string(s: str) -> str:
    """A JSON string literal as Go writes it."""
    out = ['"']
    for ch in s:
        esc = _SHORT_ESCAPES.get(ch) or _HTML.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        elif "\ud800" <= ch <= "\udfff":
            out.append("\ufffd")  # not UTF-8 encodable: Go writes the replacement character
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def go_float(f: float) -> str:
    """A float64 as Go's encoding/json writes it (``strconv`` shortest form)."""
    if math.isnan(f) or math.isinf(f):
        raise ValueError(f"json: unsupported value: {f}")
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    a = abs(f)
    sign, digits, exp = Decimal(repr(f)).normalize().as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits))
    neg = "-" if sign else ""
    if a < 1e-6 or a >= 1e21:
        # d.ddde±XX with at least two exponent digits, then Go trims "e-07" to "e-7"
        e = exp + len(ds) - 1
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{neg}{mant}e{'-' if e < 0 else '+'}{abs(e):d}"
    point = len(ds) + exp  # position of the decimal point within the digits
    if point <= 0:
        return f"{neg}0.{'0' * -point}{ds}"
    if point >= len(ds):
        return f"{neg}{ds}{'0' * (point - len(ds))}"
    return f"{neg}{ds[:point]}.{ds[point:]}"


def json_kind(value: Any) -> str:
    """The name Go's ``encoding/json`` gives the type of a decoded JSON value
    (not null) in its errors: ``cannot unmarshal <kind> into ...``."""
    if type(value) is bool:
        return "bool"
    if type(value) is str:
        return "string"
    if type(value) is list:
        return "array"
    return "object" if type(value) is dict else "number"


def sorted_map(d: dict[str, Any]) -> dict[str, Any]:
    """A dict with its keys in Go's map order (sorted by their UTF-8 bytes)."""
    return {k: d[k] for k in sorted(d, key=lambda k: k.encode("utf-8", "surrogatepass"))}


def marshal(value: Any, indent: str | None = "  ") -> str:
    """``value`` as Go's ``json.MarshalIndent(value, "", indent)`` writes it
    (``indent=None``: ``json.Marshal``, no whitespace)."""
    parts: list[str] = []
    _write(value, indent, 0, parts)
    return "".join(parts)


def _write(v: Any, indent: str | None, level: int, out: list[str]) -> None:
    if v is None:
        out.append("null")
    elif v is True:
        out.append("true")
    elif v is False:
        out.append("false")
    elif isinstance(v, GoNumber):
        out.append(str.__str__(v))
    elif isinstance(v, str):
        out.append(go_string(v))
    elif isinstance(v, int):
        out.append(str(v))
    elif isinstance(v, float):
        out.append(go_float(v))
    elif isinstance(v, Decimal):
        out.append(_decimal_text(v))
    elif isinstance(v, dict):
        if not v:
            out.append("{}")
            return
        out.append("{")
        first = True
        for k, x in v.items():
            out.append("" if first else ",")
            first = False
            _newline(indent, level + 1, out)
            out.append(go_string(str(k)))
            out.append(":" if indent is None else ": ")
            _write(x, indent, level + 1, out)
        _newline(indent, level, out)
        out.append("}")
    elif isinstance(v, (list, tuple)):
        if not v:
            out.append("[]")
            return
        out.append("[")
        for i, x in enumerate(v):
            if i:
                out.append(",")
            _newline(indent, level + 1, out)
            _write(x, indent, level + 1, out)
        _newline(indent, level, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(v).__name__} as JSON")


def _newline(indent: str | None, level: int, out: list[str]) -> None:
    if indent is not None:
        out.append("\n" + indent * level)


#: Exact: normalize() in the default context would round to 28 digits.
_EXACT = decimal.Context(prec=decimal.MAX_PREC, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)

#: Exponents past which a decimal is written in exponent form (all its digits
#: would take seconds and gigabytes: JSON input ``1e999999999``).
_PLAIN_EXPONENT = 1_000_000


def _decimal_text(d: Decimal) -> str:
    if not d.is_finite():
        raise ValueError(f"json: unsupported value: {d}")
    n = d.normalize(_EXACT)
    if n and not -_PLAIN_EXPONENT <= n.adjusted() < _PLAIN_EXPONENT:
        text = "".join(map(str, n.as_tuple().digits))
        mant = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{'-' if n.is_signed() else ''}{mant}e{n.adjusted()}"
    return format(n, "f")  # (str(int(d)) stops at Python's 4,300-digit limit)
