"""time.* builtins (OPA's ``time.go``); Go's time semantics live in :mod:`time_layout`.

Timestamps are nanoseconds since the epoch as Python ints, within Go's
int64 range (1677-09-21 .. 2262-04-11), as in OPA.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from pyrego.builtins.registry import builtin, operand_error
from pyrego.builtins.time_layout import (
    LONG_DAYS,
    UTC,
    Civil,
    UnknownZone,
    Zone,
    days_from_civil,
    days_in,
    go_date,
    load_location,
)
from pyrego.builtins.time_layout import (
    format_time as _format,
)
from pyrego.builtins.time_parse import TimeError, parse_rego_duration, parse_time
from pyrego.runtime.bigfloat import from_number
from pyrego.runtime.builtin_errors import BuiltinError, OperandTypeError
from pyrego.runtime.context import EvalContext

_NS = 1_000_000_000
_MIN_NS = -(1 << 63)
_MAX_NS = (1 << 63) - 1

# Names OPA accepts for Go's predefined layouts.
LAYOUTS = {
    "ANSIC": "Mon Jan _2 15:04:05 2006",
    "UnixDate": "Mon Jan _2 15:04:05 MST 2006",
    "RubyDate": "Mon Jan 02 15:04:05 -0700 2006",
    "RFC822": "02 Jan 06 15:04 MST",
    "RFC822Z": "02 Jan 06 15:04 -0700",
    "RFC850": "Monday, 02-Jan-06 15:04:05 MST",
    "RFC1123": "Mon, 02 Jan 2006 15:04:05 MST",
    "RFC1123Z": "Mon, 02 Jan 2006 15:04:05 -0700",
    "RFC3339": "2006-01-02T15:04:05Z07:00",
    "RFC3339Nano": "2006-01-02T15:04:05.999999999Z07:00",
}
RFC3339 = LAYOUTS["RFC3339"]
RFC3339_NANO = LAYOUTS["RFC3339Nano"]


def _to_ns(unix: int, nsec: int) -> int:
    ns = unix * _NS + nsec
    if ns < _MIN_NS or ns > _MAX_NS:
        raise BuiltinError("time outside of valid range")
    return ns


def _split(ns: int) -> tuple[int, int]:
    return divmod(ns, _NS)


_TZ_TIME = "either number (ns) or [number (ns), string (tz)]"


def _tz_time(x: Any) -> tuple[int, int, Zone, str]:
    """OPA's ``tzTime``: a number, or [ns, tz] / [ns, tz, layout] -> (unix, nsec, zone, layout)."""
    zone: Zone = UTC
    layout = ""
    t = type(x)
    if t is list:
        if not x:
            raise OperandTypeError(f"operand 1 must be {_TZ_TIME} but got array")
        n = x[0]
        if type(n) is not int and type(n) is not float and type(n) is not Decimal:
            raise operand_error(1, n, "number")
        if len(x) > 1:
            tz = x[1]
            if type(tz) is not str:
                raise operand_error(1, tz, "string")
            try:
                zone = load_location(tz)
            except UnknownZone as e:
                raise BuiltinError(str(e)) from None
        if len(x) > 2:
            lay = x[2]
            if type(lay) is not str:
                raise operand_error(1, lay, "string")
            layout = lay
    elif t is int or t is float or t is Decimal:
        n = x
    else:
        raise OperandTypeError(f"operand 1 must be {_TZ_TIME} but got {_type(x)}")
    if type(n) is float or type(n) is Decimal:
        n = _whole(n)
    if n < _MIN_NS or n > _MAX_NS:
        raise BuiltinError("timestamp too big")
    unix, nsec = _split(n)
    return unix, nsec, zone, layout


def _whole(n: float | Decimal) -> int:
    """The integer OPA makes of a timestamp number: its 64-bit-mantissa float
    (``1.7e18`` written with 40 digits rounds to a whole number), which must be whole."""
    f = from_number(n)
    if f.exp >= 0:
        m = f.mant << f.exp
    elif f.mant & ((1 << -f.exp) - 1):
        raise BuiltinError("timestamp too big")
    else:
        m = f.mant >> -f.exp
    return -m if f.neg else m


def _type(x: Any) -> str:
    from pyrego.runtime.values import type_name

    return type_name(x)


def _string(x: Any, pos: int) -> str:
    if type(x) is not str:
        raise operand_error(pos, x, "string")
    return x


@builtin("time.now_ns", 0, needs_context=True)
def time_now_ns(ctx: EvalContext) -> int:
    return ctx.now_ns


@builtin("time.parse_ns", 2)
def time_parse_ns(layout: Any, value: Any) -> int:
    lay = _string(layout, 1)
    val = _string(value, 2)
    try:
        unix, nsec = parse_time(LAYOUTS.get(lay, lay), val)
    except TimeError as e:
        raise BuiltinError(str(e)) from None
    return _to_ns(unix, nsec)


_RFC3339_FAST = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:Z|([+-])(\d\d):(\d\d))", re.ASCII
)


def _rfc3339_fast(text: str) -> tuple[int, int] | None:
    """The common shapes of RFC 3339, as Go's own fast path reads them."""
    m = _RFC3339_FAST.fullmatch(text)
    if m is None:
        return None
    y, mo, d, h, mi, se = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    if not (1 <= mo <= 12 and 1 <= d <= days_in(mo, y) and h <= 23 and mi <= 59 and se <= 59):
        return None
    frac = m.group(7)
    nsec = int(frac.ljust(9, "0")) if frac else 0
    unix = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se
    if m.group(8):
        oh, om = int(m.group(9)), int(m.group(10))
        if oh > 23 or om > 59:
            return None
        off = (oh * 60 + om) * 60
        unix -= off if m.group(8) == "+" else -off
    return unix, nsec


@builtin("time.parse_rfc3339_ns", 1)
def time_parse_rfc3339_ns(value: Any) -> int:
    fast = _rfc3339_fast(value) if type(value) is str else None
    if fast is not None:
        return _to_ns(*fast)
    try:
        unix, nsec = parse_time(RFC3339, _string(value, 1))
    except TimeError as e:
        raise BuiltinError(str(e)) from None
    return _to_ns(unix, nsec)


@builtin("time.parse_duration_ns", 1)
def time_parse_duration_ns(duration: Any) -> int:
    try:
        return parse_rego_duration(_string(duration, 1))
    except TimeError as e:
        raise BuiltinError(str(e)) from None


@builtin("time.format", 1)
def time_format(x: Any) -> str:
    unix, nsec, zone, layout = _tz_time(x)
    if layout == "":
        layout = RFC3339_NANO
    else:
        layout = LAYOUTS.get(layout, layout)
    return _format(unix, nsec, zone, layout)


@builtin("time.date", 1)
def time_date(x: Any) -> list[int]:
    unix, nsec, zone, _ = _tz_time(x)
    c = Civil(unix, nsec, zone)
    return [c.year, c.month, c.day]


@builtin("time.clock", 1)
def time_clock(x: Any) -> list[int]:
    unix, nsec, zone, _ = _tz_time(x)
    c = Civil(unix, nsec, zone)
    return [c.hour, c.minute, c.second]


@builtin("time.weekday", 1)
def time_weekday(x: Any) -> str:
    unix, nsec, zone, _ = _tz_time(x)
    return LONG_DAYS[Civil(unix, nsec, zone).weekday]


def _int_operand(x: Any, pos: int) -> int:
    # Go's IntOperand: an integer that fits in int64
    if type(x) is int:
        if _MIN_NS <= x <= _MAX_NS:
            return x
    elif type(x) is not float:
        raise operand_error(pos, x, "number")
    raise OperandTypeError(f"operand {pos} must be integer number but got floating-point number")


@builtin("time.add_date", 4)
def time_add_date(ns: Any, years: Any, months: Any, days: Any) -> int:
    unix, nsec, zone, _ = _tz_time(ns)
    y = _int_operand(years, 2)
    m = _int_operand(months, 3)
    d = _int_operand(days, 4)
    c = Civil(unix, nsec, zone)
    year = c.year + y
    # beyond a few thousand years the result cannot fit in int64 nanoseconds
    if abs(year) > 1_000_000 or abs(m) > 12_000_000 or abs(d) > 400_000_000:
        raise BuiltinError("time outside of valid range")
    unix2, nsec2 = go_date(year, c.month + m, c.day + d, c.hour, c.minute, c.second, c.nsec, zone)
    return _to_ns(unix2, nsec2)


@builtin("time.diff", 2)
def time_diff(ns1: Any, ns2: Any) -> list[int]:
    u1, n1, z1, _ = _tz_time(ns1)
    u2, n2, _, _ = _tz_time(ns2)
    # both in the first one's zone; earlier first
    if (u1, n1) > (u2, n2):
        u1, n1, u2, n2 = u2, n2, u1, n1
    a = Civil(u1, n1, z1)
    b = Civil(u2, n2, z1)
    year = b.year - a.year
    month = b.month - a.month
    day = b.day - a.day
    hour = b.hour - a.hour
    minute = b.minute - a.minute
    sec = b.second - a.second
    if sec < 0:
        sec += 60
        minute -= 1
    if minute < 0:
        minute += 60
        hour -= 1
    if hour < 0:
        hour += 24
        day -= 1
    if day < 0:
        # days in a's month: Go computes Date(y, m, 32) and looks at its day
        day += days_in(a.month, a.year)
        month -= 1
    if month < 0:
        month += 12
        year -= 1
    return [year, month, day, hour, minute, sec]
