"""time.* builtins (expected values from OPA v1.20.2 / its conformance cases)."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.context import EvalContext

MIN_NS = -9223372036854775808
MAX_NS = 9223372036854775807


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


def error(name: str, *args: Any) -> BuiltinError:
    with pytest.raises(BuiltinError) as info:
        call(name, *args)
    return info.value


def test_now_ns_is_fixed_per_query() -> None:
    b = lookup("time.now_ns")
    assert b is not None and b.needs_context and b.nondeterministic
    ctx = EvalContext()
    first = b.fn(ctx)
    assert type(first) is int and first == b.fn(ctx)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1677-09-21T00:12:43.145224192-00:00", MIN_NS),
        ("1970-01-01T00:00:00-00:00", 0),
        ("2262-04-11T23:47:16.854775807-00:00", MAX_NS),
        ("2017-06-02T19:00:00-05:00", 1496448000000000000),
        ("2006-01-02T15:04:05.123456789123Z", 1136214245123456789),
        ("2006-01-02T15:04:05,5+01:00", 1136210645500000000),
    ],
)
def test_parse_rfc3339(text: str, want: int) -> None:
    assert call("time.parse_rfc3339_ns", text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1677-09-21T00:12:43.145224191-00:00", "time outside of valid range"),
        ("2262-04-11T23:47:16.854775808-00:00", "time outside of valid range"),
        ("2006-02-30T00:00:00Z", 'parsing time "2006-02-30T00:00:00Z": day out of range'),
        ("2006-13-01T00:00:00Z", 'parsing time "2006-13-01T00:00:00Z": month out of range'),
        (
            "2006-01-02",
            'parsing time "2006-01-02" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"',
        ),
        ("2006-01-02T15:04:05Zx", 'parsing time "2006-01-02T15:04:05Zx": extra text: "x"'),
        ("x", 'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'),
    ],
)
def test_parse_rfc3339_errors(text: str, message: str) -> None:
    assert str(error("time.parse_rfc3339_ns", text)) == message


@pytest.mark.parametrize(
    ("layout", "value", "want"),
    [
        ("2006-01-02", "2017-06-02", 1496361600000000000),
        ("RFC1123", "Mon, 02 Jan 2006 15:04:05 MST", 1136214245000000000),
        ("RFC1123Z", "Mon, 02 Jan 2006 15:04:05 -0700", 1136239445000000000),
        ("ANSIC", "Mon Jan  2 15:04:05 2006", 1136214245000000000),
        ("Jan 2 2006 3:04pm", "feb 3 2013 7:54pm", 1359921240000000000),
        ("2006 002", "2020 060", 1582934400000000000),
        ("06-01-02", "69-01-02", -31449600000000000),
        ("2006-01-02 15:04:05.000", "2006-01-02 15:04:05.123", 1136214245123000000),
    ],
)
def test_parse_ns(layout: str, value: str, want: int) -> None:
    assert call("time.parse_ns", layout, value) == want


def test_parse_ns_errors() -> None:
    assert str(error("time.parse_ns", "2006 002", "2021 366")) == 'parsing time "2021 366": day-of-year out of range'
    assert (
        str(error("time.parse_ns", "Monday", "Tusday"))
        == 'parsing time "Tusday" as "Monday": cannot parse "Tusday" as "Monday"'
    )
    assert str(error("time.parse_ns", "x", 1)) == "operand 2 must be string but got number"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("100ms", 100000000),
        ("1.5h", 5400000000000),
        ("-1.5h", -5400000000000),
        ("+2m3s", 123000000000),
        ("0", 0),
        ("1µs", 1000),
        ("1μs", 1000),
        ("1.0000000001s", 1000000000),
        ("3.3333333333333333333333333h", 12000000000000),
        ("9223372036854775807ns", 9223372036854775807),
        ("-9223372036854775808ns", -9223372036854775808),
    ],
)
def test_parse_duration(text: str, want: int) -> None:
    assert call("time.parse_duration_ns", text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("1", 'time: missing unit in duration "1"'),
        ("1x", 'time: unknown unit "x" in duration "1x"'),
        (".s", 'time: invalid duration ".s"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("1 h", 'time: unknown unit " h" in duration "1 h"'),
    ],
)
def test_parse_duration_errors(text: str, message: str) -> None:
    assert str(error("time.parse_duration_ns", text)) == message


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1d2h", 93600000000000),
        ("1d", 86400000000000),
        ("1w", 604800000000000),
        ("1y", 31536000000000000),
        ("1.5d", 129600000000000),
        ("-1.5d", -129600000000000),
        ("+1d", 86400000000000),
        ("1h1d", 90000000000000),
        ("1w1d", 691200000000000),
        ("1d1d1d", 259200000000000),
        ("2d3h4m5s6ms7us8ns", 183845006007008),
        ("1d1\u00b5s", 86400000001000),
        ("1d0.3s", 86400300000000),
        (".5d", 43200000000000),
        ("5.d", 432000000000000),
        ("0d", 0),
        # The d/w/y part becomes float64 hours before Go's rules apply.
        ("0.3d", 25919999999999),
        ("0.0000001y", 3153599999),
        ("1.0000000001y", 31536000003153600),
        ("106751.99116730063d", 9223372036854774000),
        ("106751d", 9223286400000000000),
        ("292y", 9208512000000000000),
        ("-292y", -9208512000000000000),
    ],
)
def test_parse_duration_long_units(text: str, want: int) -> None:
    assert call("time.parse_duration_ns", text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("106752d", 'time: invalid duration "106752d"'),
        ("293y", 'time: invalid duration "293y"'),
        ("1d9223372036854775807ns", 'time: invalid duration "1d9223372036854775807ns"'),
        ("1dd", 'time: invalid duration "1dd"'),
        ("1day", 'time: invalid duration "1day"'),
        ("1d2", 'time: invalid duration "1d2"'),
        ("1d-1h", 'time: invalid duration "1d-1h"'),
        ("1.2.3d", 'time: invalid duration "1.2.3d"'),
        ("1d ", 'time: invalid duration "1d "'),
        ("1D2d", 'time: invalid duration "1D2d"'),
        ("1" * 400 + "d", 'time: invalid duration "' + "1" * 400 + 'd"'),
        ("1x2d", 'time: unknown unit "x" in duration "1x2d"'),
        ("1e3d", 'time: unknown unit "e" in duration "1e3d"'),
        # Without d, w or y the text is Go's, and so are the messages.
        ("1mo", 'time: unknown unit "mo" in duration "1mo"'),
        ("1D", 'time: unknown unit "D" in duration "1D"'),
        # strconv.Quote on the d/w/y path, Go's time quoting on the other.
        ("1\u00e92d", 'time: invalid duration "1\u00e92d"'),
        ("1\x01d", 'time: invalid duration "1\\x01d"'),
        ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
    ],
)
def test_parse_duration_long_unit_errors(text: str, message: str) -> None:
    assert str(error("time.parse_duration_ns", text)) == message


def test_date_clock_weekday() -> None:
    assert call("time.date", 1518177600000000000) == [2018, 2, 9]
    assert call("time.clock", [1518177600000000000, "America/New_York"]) == [7, 0, 0]
    assert call("time.weekday", 1518177600000000000) == "Friday"
    assert call("time.date", MIN_NS) == [1677, 9, 21]
    assert call("time.clock", -1) == [23, 59, 59]
    assert call("time.clock", [0, "Australia/Lord_Howe"]) == [10, 0, 0]
    assert call("time.date", 1.5e18) == [2017, 7, 14]


def test_tz_time_errors() -> None:
    assert str(error("time.date", 9223372036854775808)) == "timestamp too big"
    assert str(error("time.date", 1.5)) == "timestamp too big"
    assert str(error("time.date", [0, "Foo/Bar"])) == "unknown time zone Foo/Bar"
    assert (
        str(error("time.date", "x"))
        == "operand 1 must be either number (ns) or [number (ns), string (tz)] but got string"
    )
    assert str(error("time.date", ["x"])) == "operand 1 must be number but got string"
    assert isinstance(error("time.date", [1, 2]), OperandTypeError)


def test_format() -> None:
    ns = 1669999253141828752
    assert call("time.format", ns) == "2022-12-02T16:40:53.141828752Z"
    assert call("time.format", [ns, "Asia/Kolkata"]) == "2022-12-02T22:10:53.141828752+05:30"
    assert (
        call("time.format", [ns, "Asia/Kolkata", "Mon Jan 02 15:04:05 -0700 2006"]) == "Fri Dec 02 22:10:53 +0530 2022"
    )
    assert call("time.format", [ns, "Asia/Kolkata", "RFC1123Z"]) == "Fri, 02 Dec 2022 22:10:53 +0530"
    assert call("time.format", [ns, "America/New_York", "RFC1123"]) == "Fri, 02 Dec 2022 11:40:53 EST"
    # a .999 fraction of a whole second disappears entirely
    assert call("time.format", [1000000000123, "UTC", "2006-01-02 03:04:05.000 PM Z07 .999 ,9"]) == (
        "1970-01-01 12:16:40.000 AM Z  "
    )
    assert call("time.format", [0, "UTC", "__2 002 _2 Monday January"]) == "  1 001  1 Thursday January"


def test_add_date() -> None:
    assert call("time.add_date", 1585852421593912000, 3, 9, 12) == 1705257221593912000
    # 2000-02-08 + 1 month + 30 days: days carry over month ends, as in Go's AddDate
    assert call("time.add_date", 950000000000000000, 0, 1, 30) == 955097600000000000
    assert call("time.add_date", 950000000000000000, 0, 0, 30) == 952592000000000000
    assert str(error("time.add_date", 0, 2262, 1, 1)) == "time outside of valid range"
    assert str(error("time.add_date", 0, 0, 1.5, 0)) == "operand 3 must be integer number but got floating-point number"
    # the local clock time is kept in the zone: 04:30 EST stays 04:30 EST
    assert call("time.add_date", [1604223000000000000, "America/New_York"], 0, 0, 1) == 1604309400000000000
    # across the spring-forward change a day is 23 hours long
    assert call("time.add_date", [1615624200000000000, "America/New_York"], 0, 0, 1) == 1615707000000000000


def test_diff() -> None:
    assert call("time.diff", 0, 86400000000000) == [0, 0, 1, 0, 0, 0]
    assert call("time.diff", 1583020800000000000, 1580515200000000000) == [0, 1, 0, 0, 0, 0]
    assert call("time.diff", [0, "America/New_York"], [5000000000000000, "Asia/Kolkata"]) == [0, 1, 26, 20, 53, 20]
    assert call("time.diff", 1669999253141828752, 1000000000123) == [52, 11, 1, 16, 24, 13]
