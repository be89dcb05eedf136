"""Go's ``time.Parse`` and ``time.ParseDuration`` (with OPA's d/w/y units), with Go's error texts.

Works with the layout elements of :mod:`time_layout`; results are
(unix seconds, nanoseconds) pairs of ints.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from pyrego.builtins._goutil import go_quote
from pyrego.builtins.time_layout import (
    _DAY,
    _DAYS_BEFORE,
    _FRAC0,
    _FRAC9,
    _HOUR,
    _HOUR12,
    _ISO_COLON_SECONDS_TZ,
    _ISO_COLON_TZ,
    _ISO_SECONDS_TZ,
    _ISO_SHORT_TZ,
    _ISO_TZS,
    _LONG_MONTH,
    _LONG_WEEKDAY,
    _LONG_YEAR,
    _LOWER_PM,
    _MINUTE,
    _MONTH,
    _NUM_COLON_SECONDS_TZ,
    _NUM_COLON_TZ,
    _NUM_MONTH,
    _NUM_SECONDS_TZ,
    _NUM_SHORT_TZ,
    _NUM_TZS,
    _PM,
    _SECOND,
    _TZ,
    _UNDER_DAY,
    _UNDER_YEARDAY,
    _WEEKDAY,
    _YEAR,
    _ZERO_DAY,
    _ZERO_HOUR12,
    _ZERO_MINUTE,
    _ZERO_MONTH,
    _ZERO_SECOND,
    _ZERO_YEARDAY,
    LONG_DAYS,
    LONG_MONTHS,
    SHORT_DAYS,
    SHORT_MONTHS,
    UTC,
    _is_digit,
    days_in,
    go_date,
    is_leap,
    next_std_chunk,
)

# ---------------------------------------------------------------- parsing


class TimeError(Exception):
    """A parse failure, with Go's message."""


def go_time_quote(s: str) -> str:
    """Go's ``time.quote``: non-ASCII and control bytes as \\x escapes."""
    out = ['"']
    for c in s:
        o = ord(c)
        if o >= 0x80 or o < 0x20:
            b = (
                c.encode("utf-8", "surrogateescape")
                if not 0xD800 <= o <= 0xDFFF or 0xDC80 <= o <= 0xDCFF
                else b"\xef\xbf\xbd"
            )
            out.append("".join(f"\\x{x:02x}" for x in b))
        else:
            if c in '"\\':
                out.append("\\")
            out.append(c)
    out.append('"')
    return "".join(out)


def _parse_error(layout: str, value: str, layout_elem: str, value_elem: str, message: str = "") -> TimeError:
    if message:
        return TimeError("parsing time " + go_time_quote(value) + message)
    return TimeError(
        "parsing time "
        + go_time_quote(value)
        + " as "
        + go_time_quote(layout)
        + ": cannot parse "
        + go_time_quote(value_elem)
        + " as "
        + go_time_quote(layout_elem)
    )


class _Bad(Exception):
    pass


def _getnum(s: str, fixed: bool) -> tuple[int, str]:
    if not _is_digit(s, 0):
        raise _Bad
    if not _is_digit(s, 1):
        if fixed:
            raise _Bad
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def _getnum3(s: str, fixed: bool) -> tuple[int, str]:
    i = 0
    while i < 3 and _is_digit(s, i):
        i += 1
    if i == 0 or (fixed and i != 3):
        raise _Bad
    return int(s[:i]), s[i:]


def _atoi(s: str) -> int:
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    i = 0
    while i < len(s) and "0" <= s[i] <= "9":
        i += 1
    if i == 0 and s or i != len(s) or len(s.lstrip("0")) > 19:
        raise _Bad
    x = int(s.lstrip("0") or "0") if s else 0
    if x >= 1 << 63:
        raise _Bad
    return -x if neg else x


def _lookup(table: list[str], value: str) -> tuple[int, str]:
    for i, name in enumerate(table):
        if len(value) >= len(name) and value[: len(name)].lower() == name.lower() and value[: len(name)].isascii():
            return i, value[len(name) :]
    raise _Bad


def _skip(value: str, prefix: str) -> str:
    while prefix:
        if prefix[0] == " ":
            if value and value[0] != " ":
                raise _Bad
            prefix = prefix.lstrip(" ")
            value = value.lstrip(" ")
            continue
        if not value or value[0] != prefix[0]:
            raise _Bad
        prefix = prefix[1:]
        value = value[1:]
    return value


def _parse_nanos(value: str, nbytes: int) -> int:
    if value[0] not in ".,":
        raise _Bad
    if nbytes > 10:
        value = value[:10]
        nbytes = 10
    ns = _atoi(value[1:nbytes])
    return ns * 10 ** (10 - nbytes)


def _signed_offset_len(value: str) -> int:
    if value[:1] not in ("-", "+"):
        return 0
    i = 1
    while i < len(value) and "0" <= value[i] <= "9":
        i += 1
    if i == 1 or int(value[1:i]) > 23:
        return 0
    return i


def _time_zone_len(value: str) -> int:
    """Go's ``parseTimeZone``: the length of a zone abbreviation, 0 if none."""
    if len(value) < 3:
        return 0
    if value[:4] in ("ChST", "MeST"):
        return 4
    if value[:3] == "GMT":
        return 3 + (_signed_offset_len(value[3:]) if len(value) > 3 else 0)
    if value[0] in "+-":
        return _signed_offset_len(value)
    n = 0
    while n < 6 and n < len(value) and "A" <= value[n] <= "Z":
        n += 1
    if n == 5 and value[4] == "T":
        return 5
    if n == 4 and (value[3] == "T" or value[:4] == "WITA"):
        return 4
    if n == 3:
        return 3
    return 0


def parse_time(layout: str, value: str) -> tuple[int, int]:
    """Go's ``time.Parse`` (UTC default, local zone taken as UTC): (unix, nsec)."""
    alayout, avalue = layout, value
    am = pm = False
    year, month, day, yday = 0, -1, -1, -1
    hour = minute = sec = nsec = 0
    z_utc = False
    zone_offset = -1
    while True:
        prefix, std, suffix = next_std_chunk(layout)
        stdstr = layout[len(prefix) : len(layout) - len(suffix)]
        try:
            value = _skip(value, prefix)
        except _Bad:
            raise _parse_error(alayout, avalue, prefix, value) from None
        if std is None:
            if value:
                raise _parse_error(alayout, avalue, "", value, ": extra text: " + go_time_quote(value))
            break
        layout = suffix
        hold = value
        range_err = ""
        k = std.kind
        try:
            if k == _YEAR:
                if len(value) < 2:
                    raise _Bad
                year = _atoi(value[:2])
                value = value[2:]
                year += 1900 if year >= 69 else 2000
            elif k == _LONG_YEAR:
                if len(value) < 4 or not _is_digit(value, 0):
                    raise _Bad
                year = _atoi(value[:4])
                value = value[4:]
            elif k == _MONTH or k == _LONG_MONTH:
                month, value = _lookup(SHORT_MONTHS if k == _MONTH else LONG_MONTHS, value)
                month += 1
            elif k == _NUM_MONTH or k == _ZERO_MONTH:
                month, value = _getnum(value, k == _ZERO_MONTH)
                if month <= 0 or month > 12:
                    range_err = "month"
            elif k == _WEEKDAY or k == _LONG_WEEKDAY:
                _, value = _lookup(SHORT_DAYS if k == _WEEKDAY else LONG_DAYS, value)
            elif k in (_DAY, _UNDER_DAY, _ZERO_DAY):
                if k == _UNDER_DAY and value[:1] == " ":
                    value = value[1:]
                day, value = _getnum(value, k == _ZERO_DAY)
            elif k == _UNDER_YEARDAY or k == _ZERO_YEARDAY:
                for _ in range(2):
                    if k == _UNDER_YEARDAY and value[:1] == " ":
                        value = value[1:]
                yday, value = _getnum3(value, k == _ZERO_YEARDAY)
            elif k == _HOUR:
                hour, value = _getnum(value, False)
                if hour >= 24:
                    range_err = "hour"
            elif k == _HOUR12 or k == _ZERO_HOUR12:
                hour, value = _getnum(value, k == _ZERO_HOUR12)
                if hour > 12:
                    range_err = "hour"
            elif k == _MINUTE or k == _ZERO_MINUTE:
                minute, value = _getnum(value, k == _ZERO_MINUTE)
                if minute >= 60:
                    range_err = "minute"
            elif k == _SECOND or k == _ZERO_SECOND:
                sec, value = _getnum(value, k == _ZERO_SECOND)
                if sec >= 60:
                    range_err = "second"
                elif len(value) >= 2 and value[0] in ".," and _is_digit(value, 1):
                    # a fraction in the value but none in the layout: read it anyway
                    _, nxt, _ = next_std_chunk(layout)
                    if nxt is None or nxt.kind not in (_FRAC0, _FRAC9):
                        n = 2
                        while _is_digit(value, n):
                            n += 1
                        nsec = _parse_nanos(value, n)
                        value = value[n:]
            elif k == _PM or k == _LOWER_PM:
                if len(value) < 2:
                    raise _Bad
                p, value = value[:2], value[2:]
                if p == ("PM" if k == _PM else "pm"):
                    pm = True
                elif p == ("AM" if k == _PM else "am"):
                    am = True
                else:
                    raise _Bad
            elif k in _ISO_TZS and value[:1] == "Z":
                value = value[1:]
                z_utc = True
            elif k in _ISO_TZS or k in _NUM_TZS:
                value, zone_offset, range_err = _parse_offset(k, value)
            elif k == _TZ:
                if value[:3] == "UTC":
                    z_utc = True
                    value = value[3:]
                else:
                    n = _time_zone_len(value)
                    if not n:
                        raise _Bad
                    value = value[n:]
            elif k == _FRAC0:
                ndigit = 1 + std.digits
                if len(value) < ndigit:
                    raise _Bad
                nsec = _parse_nanos(value, ndigit)
                value = value[ndigit:]
            elif k == _FRAC9:
                if len(value) >= 2 and value[0] in ".," and "0" <= value[1] <= "9":
                    i = 0
                    while i + 1 < len(value) and "0" <= value[i + 1] <= "9":
                        i += 1
                    nsec = _parse_nanos(value, 1 + i)
                    value = value[1 + i :]
        except _Bad:
            if range_err:
                raise _parse_error(alayout, avalue, stdstr, value, f": {range_err} out of range") from None
            raise _parse_error(alayout, avalue, stdstr, hold) from None
        if range_err:
            raise _parse_error(alayout, avalue, stdstr, value, f": {range_err} out of range")
    if pm and hour < 12:
        hour += 12
    elif am and hour == 12:
        hour = 0
    if yday >= 0:
        m = d = 0
        if is_leap(year):
            if yday == 31 + 29:
                m, d = 2, 29
            elif yday > 31 + 29:
                yday -= 1
        if yday < 1 or yday > 365:
            raise _parse_error(alayout, avalue, "", value, ": day-of-year out of range")
        if m == 0:
            m = (yday - 1) // 31 + 1
            if _DAYS_BEFORE[m] < yday:
                m += 1
            d = yday - _DAYS_BEFORE[m - 1]
        if month >= 0 and month != m:
            raise _parse_error(alayout, avalue, "", value, ": day-of-year does not match month")
        month = m
        if day >= 0 and day != d:
            raise _parse_error(alayout, avalue, "", value, ": day-of-year does not match day")
        day = d
    else:
        if month < 0:
            month = 1
        if day < 0:
            day = 1
    if day < 1 or day > days_in(month, year):
        raise _parse_error(alayout, avalue, "", value, ": day out of range")
    unix, ns = go_date(year, month, day, hour, minute, sec, nsec, UTC)
    if z_utc:
        return unix, ns
    if zone_offset != -1:
        return unix - zone_offset, ns
    # A zone abbreviation the (UTC) local zone does not know only names a
    # fixed zone: the instant is read as UTC, as Go does.
    return unix, ns


def _parse_offset(k: int, value: str) -> tuple[str, int, str]:
    """A numeric zone offset: (rest, offset seconds, range error)."""
    if k in (_ISO_COLON_TZ, _NUM_COLON_TZ):
        if len(value) < 6 or value[3] != ":":
            raise _Bad
        sign, hh, mm, ss, value = value[0], value[1:3], value[4:6], "00", value[6:]
    elif k in (_NUM_SHORT_TZ, _ISO_SHORT_TZ):
        if len(value) < 3:
            raise _Bad
        sign, hh, mm, ss, value = value[0], value[1:3], "00", "00", value[3:]
    elif k in (_ISO_COLON_SECONDS_TZ, _NUM_COLON_SECONDS_TZ):
        if len(value) < 9 or value[3] != ":" or value[6] != ":":
            raise _Bad
        sign, hh, mm, ss, value = value[0], value[1:3], value[4:6], value[7:9], value[9:]
    elif k in (_ISO_SECONDS_TZ, _NUM_SECONDS_TZ):
        if len(value) < 7:
            raise _Bad
        sign, hh, mm, ss, value = value[0], value[1:3], value[3:5], value[5:7], value[7:]
    else:
        if len(value) < 5:
            raise _Bad
        sign, hh, mm, ss, value = value[0], value[1:3], value[3:5], "00", value[5:]
    hr = _getnum(hh, True)[0]
    mi = _getnum(mm, True)[0]
    se = _getnum(ss, True)[0]
    range_err = ""
    if hr > 24:
        range_err = "time zone offset hour"
    if mi > 60:
        range_err = "time zone offset minute"
    if se > 60:
        range_err = "time zone offset second"
    offset = (hr * 60 + mi) * 60 + se
    if sign == "-":
        offset = -offset
    elif sign != "+":
        raise _Bad
    return value, offset, range_err


# ---------------------------------------------------------------- durations

_UNITS = {
    "ns": 1, "us": 1_000, "\u00b5s": 1_000, "\u03bcs": 1_000, "ms": 1_000_000,
    "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000,
}  # fmt: skip


def parse_duration(orig: str, quoted: str | None = None) -> int:
    """Go's ``time.ParseDuration`` in nanoseconds (fractions via float64, as Go).

    Error messages name the duration as ``quoted`` when given (the text the
    user wrote, when ``orig`` is a rewriting of it), else as ``orig``.
    """
    s = orig
    if quoted is None:
        quoted = go_time_quote(orig)
    bad = TimeError("time: invalid duration " + quoted)
    neg = False
    if s[:1] in ("-", "+"):
        neg = s[0] == "-"
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise bad
    d = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise bad
        i = 0
        while i < len(s) and "0" <= s[i] <= "9":
            i += 1
        pre = i > 0
        if len(s[:i].lstrip("0")) > 19:
            raise bad  # overflows int64 (and is too long for int() to read)
        v = int(s[:i].lstrip("0") or "0") if pre else 0
        if v > 1 << 63:
            raise bad
        s = s[i:]
        post = False
        f, scale = 0, 1.0
        if s[:1] == ".":
            s = s[1:]
            i = 0
            overflow = False
            while i < len(s) and "0" <= s[i] <= "9":
                if not overflow:
                    if f > ((1 << 63) - 1) // 10:
                        overflow = True
                    else:
                        y = f * 10 + int(s[i])
                        if y > 1 << 63:
                            overflow = True
                        else:
                            f = y
                            scale *= 10
                i += 1
            post = i > 0
            s = s[i:]
        if not pre and not post:
            raise bad
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise TimeError("time: missing unit in duration " + quoted)
        u, s = s[:i], s[i:]
        unit = _UNITS.get(u)
        if unit is None:
            raise TimeError("time: unknown unit " + go_time_quote(u) + " in duration " + quoted)
        if v > (1 << 63) // unit:
            raise bad
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > 1 << 63:
                raise bad
        d += v
        if d > 1 << 63:
            raise bad
    if neg:
        return -d
    if d > (1 << 63) - 1:
        raise bad
    return d


# OPA's time.parse_duration_ns also takes days, weeks and (365-day) years.
_LONG_UNIT_HOURS = {"d": 24, "w": 168, "y": 8760}
# One segment of such a duration: digits and dots, then a unit; a unit OPA
# does not know still parses here and is reported as unknown afterwards.
_LONG_SEGMENT = re.compile(r"([0-9.]+)(ms|us|\u00b5s|ns|[a-z])")


def parse_rego_duration(orig: str) -> int:
    """``time.parse_duration_ns``: Go's durations plus the units d, w and y.

    Text without those letters is Go's syntax. Otherwise OPA rewrites each
    d/w/y segment into hours (the float64 product, in its shortest decimal
    form) and parses the result with Go's rules, so fractions round as that
    two-step conversion does and overflow is Go's "invalid duration". Text
    that does not split into segments (one sign, then number-unit pairs) is
    invalid too. Messages on this path quote as strconv.Quote does.
    """
    if not any(c in orig for c in "dwy"):
        return parse_duration(orig)
    quoted = go_quote(orig)
    bad = TimeError("time: invalid duration " + quoted)
    sign = orig[:1] if orig[:1] in ("-", "+") else ""
    body = orig[len(sign) :]
    if not body:
        raise bad
    parts = [sign]
    pos = 0
    while pos < len(body):
        m = _LONG_SEGMENT.match(body, pos)
        if m is None:
            raise bad
        digits, unit = m.groups()
        pos = m.end()
        hours = _LONG_UNIT_HOURS.get(unit)
        if hours is None:
            parts.append(digits + unit)
            continue
        try:
            value = float(digits) * hours
        except ValueError:
            raise bad from None
        if not math.isfinite(value):
            raise bad
        parts.append(format(Decimal(repr(value)), "f") + "h")
    return parse_duration("".join(parts), quoted)
