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
LONG_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
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


def go_date(
    year: int, month: int, day: int, hour: int, minute: int, sec: int, nsec: int, zone: Zone
) -> tuple[int, int]:
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
