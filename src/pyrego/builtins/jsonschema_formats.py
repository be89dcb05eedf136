"""The ``format`` checks of OPA's gojsonschema (strings only; other values pass)."""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Callable

_HOSTNAME = re.compile(
    r"^([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]{0,61}[a-zA-Z0-9])(\.([a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9\-]{0,61}[a-zA-Z0-9]))*$"
)
_UUID = re.compile(r"^(?i:[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})$")
_JSON_POINTER = re.compile(r"^(?:/(?:[^~/]|~0|~1)*)*$")
_REL_JSON_POINTER = re.compile(r"^(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~0|~1)*)*)$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_URI_TEMPLATE = re.compile(r"^([^{}]|\{[^{}]*\})*$")


def _ip(version: int) -> Callable[[str], bool]:
    def check(s: str) -> bool:
        try:
            return ipaddress.ip_address(s).version == version and "%" not in s
        except ValueError:
            return False

    return check


def _time_layout(layout: str) -> Callable[[str], bool]:
    def check(s: str) -> bool:
        from pyrego.builtins.time_parse import TimeError, parse_time

        try:
            parse_time(layout, s)
        except TimeError:
            return False
        return True

    return check


def _any_layout(*layouts: str) -> Callable[[str], bool]:
    checks = [_time_layout(layout) for layout in layouts]
    return lambda s: any(check(s) for check in checks)


# gojsonschema accepts a time, a date or a full timestamp as a date-time
_date_time = _any_layout(
    "15:04:05", "15:04:05Z07:00", "2006-01-02", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05.999999999Z07:00"
)


def _uri(absolute: bool) -> Callable[[str], bool]:
    def check(s: str) -> bool:
        from pyrego.builtins.encoding_url import parse_url
        from pyrego.runtime.builtin_errors import BuiltinError

        try:
            u = parse_url(s)
        except BuiltinError:
            return False
        return bool(u.scheme) or not absolute

    return check


def _regex(s: str) -> bool:
    from pyrego.builtins.regex import compile_regex
    from pyrego.runtime.builtin_errors import BuiltinError

    try:
        compile_regex(s)
    except BuiltinError:
        return False
    return True


def _hostname(s: str) -> bool:
    return len(s) <= 255 and bool(_HOSTNAME.match(s))


_CHECKERS: dict[str, Callable[[str], bool]] = {
    "date-time": _date_time,
    "date": _time_layout("2006-01-02"),
    "time": _any_layout("15:04:05Z07:00", "15:04:05"),
    "email": lambda s: bool(_EMAIL.match(s)),
    "idn-email": lambda s: bool(_EMAIL.match(s)),
    "hostname": _hostname,
    "idn-hostname": lambda s: True,
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "uri": _uri(True),
    "uri-reference": _uri(False),
    "iri": _uri(True),
    "iri-reference": _uri(False),
    "uri-template": lambda s: bool(_URI_TEMPLATE.match(s)),
    "uuid": lambda s: bool(_UUID.match(s)),
    "regex": _regex,
    "json-pointer": lambda s: bool(_JSON_POINTER.match(s)),
    "relative-json-pointer": lambda s: bool(_REL_JSON_POINTER.match(s)),
}


def check_format(name: str, value: Any) -> bool:
    """Whether ``value`` has the format; unknown formats and non-strings pass."""
    if type(value) is not str:
        return True
    checker = _CHECKERS.get(name)
    return True if checker is None else checker(value)
