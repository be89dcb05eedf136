"""Go's ``time`` package pieces the time.* builtins need, on integers only.

- civil calendar arithmetic (proleptic Gregorian, any year);
- zones: UTC, fixed offsets, IANA zones (``zoneinfo`` + ``tzdata``) and the
  machine's local zone, all answering "offset and abbreviation at this UTC
  second";
- ``time.Date`` with Go's normalisation and its choice of offset around DST
  transitions;
- layouts: Go's reference-time layouts (``2006-01-02T15:04:05Z07:00``) for
  ``Format`` and ``Parse``, with Go's error texts;
- ``time.ParseDuration``.

Times are (unix seconds, nanoseconds) pairs of Python ints: no floats, so no
precision is lost.
"""

from __future__ import annotations

import time as _time
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# ---------------------------------------------------------------- calendar

_DAYS_BEFORE = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365]
LONG_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
SHORT_MONTHS = [m[:3] for m in LONG_MONTHS]
LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
SHORT_DAYS = [d[:3] for d in LONG_DAYS]


def is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def days_in(month: int, year: int) -> int:
    if month == 2 and is_leap(year):
        return 29
    return _DAYS_BEFORE[month] - _DAYS_BEFORE[month - 1]


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a (normalised month) date."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    mp = (m + 9) % 12
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return y + (m <= 2), m, d


# ---------------------------------------------------------------- zones

# datetime can only look zones up within its year range; further out the
# result is outside the int64-nanosecond range anyway.
_MIN_LOOKUP = -62135596800 + 86400 * 2  # 0001-01-03
_MAX_LOOKUP = 253402300799 - 86400 * 2  # 9999-12-29


class Zone:
    """A location: the offset (seconds east of UTC) and abbreviation at a UTC second."""

    name = "UTC"

    def lookup(self, unix: int) -> tuple[str, int]:
        return "UTC", 0


UTC = Zone()


class FixedZone(Zone):
    def __init__(self, name: str, offset: int) -> None:
        self.name = name
        self.offset = offset

    def lookup(self, unix: int) -> tuple[str, int]:
        return self.name, self.offset


class IanaZone(Zone):
    def __init__(self, name: str, tz: Any) -> None:
        self.name = name
        self.tz = tz

    def lookup(self, unix: int) -> tuple[str, int]:
        unix = min(max(unix, _MIN_LOOKUP), _MAX_LOOKUP)
        dt = datetime.fromtimestamp(unix, timezone.utc).astimezone(self.tz)
        off = dt.utcoffset()
        return dt.tzname() or "", int(off.total_seconds()) if off is not None else 0


class LocalZone(Zone):
    """The machine's zone, as Go's ``time.Local``."""

    name = "Local"

    def lookup(self, unix: int) -> tuple[str, int]:
        unix = min(max(unix, _MIN_LOOKUP), _MAX_LOOKUP)
        try:
            lt = _time.localtime(unix)
        except (OverflowError, OSError, ValueError):
            return "UTC", 0
        return lt.tm_zone, lt.tm_gmtoff


_zones: dict[str, Zone] = {}


class UnknownZone(Exception):
    pass


def load_location(name: str) -> Zone:
    """Go's ``time.LoadLocation`` (errors: ``unknown time zone X``)."""
    if name in ("", "UTC"):
        return UTC
    if name == "Local":
        return LocalZone()
    z = _zones.get(name)
    if z is not None:
        return z
    if ".." in name or name[0] in "/\\":
        raise UnknownZone("time: invalid location name")
    try:
        tz = ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise UnknownZone(f"unknown time zone {name}") from None
    z = _zones[name] = IanaZone(name, tz)
    return z


# ---------------------------------------------------------------- Date


def go_date(year: int, month: int, day: int, hour: int, minute: int, sec: int, nsec: int, zone: Zone) -> tuple[int, int]:
    """Go's ``time.Date``: out-of-range fields carry over; returns (unix, nsec)."""
    m = month - 1
    year += m // 12
    m = m % 12 + 1
    sec += nsec // 1_000_000_000
    nsec %= 1_000_000_000
    minute += sec // 60
    sec %= 60
    hour += minute // 60
    minute %= 60
    day += hour // 24
    hour %= 24
    days = days_from_civil(year, m, 1) + day - 1
    unix = days * 86400 + hour * 3600 + minute * 60 + sec
    # Go looks the offset up at the local time read as UTC, then checks it
    # again at the resulting instant (the right answer near transitions).
    if zone is not UTC:
        _, offset = zone.lookup(unix)
        if offset:
            utc = unix - offset
            _, offset2 = zone.lookup(utc)
            if offset2 != offset:
                offset = offset2
            unix -= offset
    return unix, nsec


class Civil:
    """A time's fields in a zone."""

    __slots__ = ("year", "month", "day", "hour", "minute", "second", "nsec", "weekday", "yday", "zone_name", "offset")

    def __init__(self, unix: int, nsec: int, zone: Zone) -> None:
        name, offset = zone.lookup(unix)
        local = unix + offset
        days, secs = divmod(local, 86400)
        self.year, self.month, self.day = civil_from_days(days)
        self.hour, rem = divmod(secs, 3600)
        self.minute, self.second = divmod(rem, 60)
        self.nsec = nsec
        self.weekday = (days + 4) % 7  # 1970-01-01 was a Thursday
        self.yday = days - days_from_civil(self.year, 1, 1) + 1
        self.zone_name = name
        self.offset = offset


# ---------------------------------------------------------------- layouts

(
    _LONG_MONTH, _MONTH, _NUM_MONTH, _ZERO_MONTH, _LONG_WEEKDAY, _WEEKDAY, _DAY, _UNDER_DAY, _ZERO_DAY,
    _UNDER_YEARDAY, _ZERO_YEARDAY, _HOUR, _HOUR12, _ZERO_HOUR12, _MINUTE, _ZERO_MINUTE, _SECOND,
    _ZERO_SECOND, _LONG_YEAR, _YEAR, _PM, _LOWER_PM, _TZ, _ISO_TZ, _ISO_SECONDS_TZ, _ISO_SHORT_TZ,
    _ISO_COLON_TZ, _ISO_COLON_SECONDS_TZ, _NUM_TZ, _NUM_SECONDS_TZ, _NUM_SHORT_TZ, _NUM_COLON_TZ,
    _NUM_COLON_SECONDS_TZ, _FRAC0, _FRAC9,
) = range(1, 36)  # fmt: skip

_STD0X = [_ZERO_MONTH, _ZERO_DAY, _ZERO_HOUR12, _ZERO_MINUTE, _ZERO_SECOND, _YEAR]
_ISO_TZS = {_ISO_TZ, _ISO_SECONDS_TZ, _ISO_SHORT_TZ, _ISO_COLON_TZ, _ISO_COLON_SECONDS_TZ}
_NUM_TZS = {_NUM_TZ, _NUM_SECONDS_TZ, _NUM_SHORT_TZ, _NUM_COLON_TZ, _NUM_COLON_SECONDS_TZ}

_TZ_PATTERNS = [
    ("-070000", _NUM_SECONDS_TZ), ("-07:00:00", _NUM_COLON_SECONDS_TZ), ("-0700", _NUM_TZ),
    ("-07:00", _NUM_COLON_TZ), ("-07", _NUM_SHORT_TZ),
]  # fmt: skip
_Z_PATTERNS = [
    ("Z070000", _ISO_SECONDS_TZ), ("Z07:00:00", _ISO_COLON_SECONDS_TZ), ("Z0700", _ISO_TZ),
    ("Z07:00", _ISO_COLON_TZ), ("Z07", _ISO_SHORT_TZ),
]  # fmt: skip


class Std:
    """A layout element: kind, and for fractions the digit count and separator."""

    __slots__ = ("kind", "digits", "sep")

    def __init__(self, kind: int, digits: int = 0, sep: str = ".") -> None:
        self.kind = kind
        self.digits = digits
        self.sep = sep


def _is_digit(s: str, i: int) -> bool:
    return i < len(s) and "0" <= s[i] <= "9"


def next_std_chunk(layout: str) -> tuple[str, Std | None, str]:
    """Go's ``nextStdChunk``: (literal prefix, element, rest)."""
    n = len(layout)
    for i in range(n):
        c = layout[i]
        rest = layout[i:]
        if c == "J":
            if rest.startswith("Jan"):
                if rest.startswith("January"):
                    return layout[:i], Std(_LONG_MONTH), layout[i + 7 :]
                if not ("a" <= rest[3:4] <= "z" and rest[3:4]):
                    return layout[:i], Std(_MONTH), layout[i + 3 :]
        elif c == "M":
            if rest.startswith("Mon"):
                if rest.startswith("Monday"):
                    return layout[:i], Std(_LONG_WEEKDAY), layout[i + 6 :]
                if not ("a" <= rest[3:4] <= "z" and rest[3:4]):
                    return layout[:i], Std(_WEEKDAY), layout[i + 3 :]
            if rest.startswith("MST"):
                return layout[:i], Std(_TZ), layout[i + 3 :]
        elif c == "0":
            if len(rest) >= 2 and "1" <= rest[1] <= "6":
                return layout[:i], Std(_STD0X[ord(rest[1]) - ord("1")]), layout[i + 2 :]
            if rest.startswith("002"):
                return layout[:i], Std(_ZERO_YEARDAY), layout[i + 3 :]
        elif c == "1":
            if rest.startswith("15"):
                return layout[:i], Std(_HOUR), layout[i + 2 :]
            return layout[:i], Std(_NUM_MONTH), layout[i + 1 :]
        elif c == "2":
            if rest.startswith("2006"):
                return layout[:i], Std(_LONG_YEAR), layout[i + 4 :]
            return layout[:i], Std(_DAY), layout[i + 1 :]
        elif c == "_":
            if rest.startswith("_2"):
                if rest.startswith("_2006"):
                    return layout[: i + 1], Std(_LONG_YEAR), layout[i + 5 :]
                return layout[:i], Std(_UNDER_DAY), layout[i + 2 :]
            if rest.startswith("__2"):
                return layout[:i], Std(_UNDER_YEARDAY), layout[i + 3 :]
        elif c == "3":
            return layout[:i], Std(_HOUR12), layout[i + 1 :]
        elif c == "4":
            return layout[:i], Std(_MINUTE), layout[i + 1 :]
        elif c == "5":
            return layout[:i], Std(_SECOND), layout[i + 1 :]
        elif c == "P":
            if rest.startswith("PM"):
                return layout[:i], Std(_PM), layout[i + 2 :]
        elif c == "p":
            if rest.startswith("pm"):
                return layout[:i], Std(_LOWER_PM), layout[i + 2 :]
        elif c == "-":
            for pat, kind in _TZ_PATTERNS:
                if rest.startswith(pat):
                    return layout[:i], Std(kind), layout[i + len(pat) :]
        elif c == "Z":
            for pat, kind in _Z_PATTERNS:
                if rest.startswith(pat):
                    return layout[:i], Std(kind), layout[i + len(pat) :]
        elif c in ".,":
            if len(rest) >= 2 and rest[1] in "09":
                ch = rest[1]
                j = i + 1
                while j < n and layout[j] == ch:
                    j += 1
                # only a fraction when the run of digits ends here
                if not _is_digit(layout, j):
                    kind = _FRAC0 if ch == "0" else _FRAC9
                    return layout[:i], Std(kind, j - (i + 1), c), layout[j:]
    return layout, None, ""


def _pad(x: int, width: int) -> str:
    if x < 0:
        return "-" + str(-x).rjust(width, "0")
    return str(x).rjust(width, "0")


def format_time(unix: int, nsec: int, zone: Zone, layout: str) -> str:
    """Go's ``Time.Format``."""
    t = Civil(unix, nsec, zone)
    out: list[str] = []
    while layout:
        prefix, std, suffix = next_std_chunk(layout)
        out.append(prefix)
        if std is None:
            break
        layout = suffix
        k = std.kind
        if k == _YEAR:
            out.append(_pad(t.year % 100 if t.year >= 0 else -(-t.year % 100), 2))
        elif k == _LONG_YEAR:
            out.append(_pad(t.year, 4))
        elif k == _MONTH:
            out.append(SHORT_MONTHS[t.month - 1])
        elif k == _LONG_MONTH:
            out.append(LONG_MONTHS[t.month - 1])
        elif k == _NUM_MONTH:
            out.append(str(t.month))
        elif k == _ZERO_MONTH:
            out.append(_pad(t.month, 2))
        elif k == _WEEKDAY:
            out.append(SHORT_DAYS[t.weekday])
        elif k == _LONG_WEEKDAY:
            out.append(LONG_DAYS[t.weekday])
        elif k == _DAY:
            out.append(str(t.day))
        elif k == _UNDER_DAY:
            out.append(str(t.day).rjust(2, " "))
        elif k == _ZERO_DAY:
            out.append(_pad(t.day, 2))
        elif k == _UNDER_YEARDAY:
            out.append(str(t.yday).rjust(3, " "))
        elif k == _ZERO_YEARDAY:
            out.append(_pad(t.yday, 3))
        elif k == _HOUR:
            out.append(_pad(t.hour, 2))
        elif k == _HOUR12 or k == _ZERO_HOUR12:
            hr = t.hour % 12 or 12
            out.append(str(hr) if k == _HOUR12 else _pad(hr, 2))
        elif k == _MINUTE:
            out.append(str(t.minute))
        elif k == _ZERO_MINUTE:
            out.append(_pad(t.minute, 2))
        elif k == _SECOND:
            out.append(str(t.second))
        elif k == _ZERO_SECOND:
            out.append(_pad(t.second, 2))
        elif k == _PM:
            out.append("PM" if t.hour >= 12 else "AM")
        elif k == _LOWER_PM:
            out.append("pm" if t.hour >= 12 else "am")
        elif k in _ISO_TZS or k in _NUM_TZS:
            out.append(_format_offset(k, t.offset))
        elif k == _TZ:
            if t.zone_name:
                out.append(t.zone_name)
            else:
                z = int(t.offset / 60)
                out.append(("-" if z < 0 else "+") + _pad(abs(z) // 60, 2) + _pad(abs(z) % 60, 2))
        elif k == _FRAC0 or k == _FRAC9:
            out.append(_format_nanos(t.nsec, std))
    return "".join(out)


def _format_offset(k: int, offset: int) -> str:
    if offset == 0 and k in _ISO_TZS:
        return "Z"
    zone = int(offset / 60)  # Go's division truncates toward zero
    absoffset = abs(offset)
    sign = "-" if zone < 0 else "+"
    zone = abs(zone)
    s = sign + _pad(zone // 60, 2)
    if k in (_ISO_COLON_TZ, _NUM_COLON_TZ, _ISO_COLON_SECONDS_TZ, _NUM_COLON_SECONDS_TZ):
        s += ":"
    if k not in (_NUM_SHORT_TZ, _ISO_SHORT_TZ):
        s += _pad(zone % 60, 2)
    if k in (_ISO_SECONDS_TZ, _NUM_SECONDS_TZ, _NUM_COLON_SECONDS_TZ, _ISO_COLON_SECONDS_TZ):
        if k in (_NUM_COLON_SECONDS_TZ, _ISO_COLON_SECONDS_TZ):
            s += ":"
        s += _pad(absoffset % 60, 2)
    return s


def _format_nanos(nsec: int, std: Std) -> str:
    trim = std.kind == _FRAC9
    n = std.digits
    if trim and (n == 0 or nsec == 0):
        return ""
    digits = _pad(nsec, 9)
    if n < 9:
        digits = digits[:n]
    if trim:
        digits = digits.rstrip("0")
        if not digits:
            return ""
    return std.sep + digits


# ---------------------------------------------------------------- parsing


class TimeError(Exception):
    """A parse failure, with Go's message."""


def go_time_quote(s: str) -> str:
    """Go's ``time.quote``: non-ASCII and control bytes as \\x escapes."""
    out = ['"']
    for c in s:
        o = ord(c)
        if o >= 0x80 or o < 0x20:
            b = c.encode("utf-8", "surrogateescape") if not 0xD800 <= o <= 0xDFFF or 0xDC80 <= o <= 0xDCFF else b"\xef\xbf\xbd"
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
        "parsing time " + go_time_quote(value) + " as " + go_time_quote(layout) + ": cannot parse "
        + go_time_quote(value_elem) + " as " + go_time_quote(layout_elem)
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
    if i == 0 and s or i != len(s):
        raise _Bad
    x = int(s) if s else 0
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


def parse_duration(orig: str) -> int:
    """Go's ``time.ParseDuration`` in nanoseconds (fractions via float64, as Go)."""
    s = orig
    bad = TimeError("time: invalid duration " + go_time_quote(orig))
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
        v = int(s[:i]) if pre else 0
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
            raise TimeError("time: missing unit in duration " + go_time_quote(orig))
        u, s = s[:i], s[i:]
        unit = _UNITS.get(u)
        if unit is None:
            raise TimeError("time: unknown unit " + go_time_quote(u) + " in duration " + go_time_quote(orig))
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
