"""semver.is_valid and semver.compare.

Versions follow SemVer 2.0.0 strictly (no leading zeros in numeric parts,
no empty pre-release or build sections), as OPA's newer releases and its
conformance cases do; like OPA, a leading ``v`` is accepted and the
major/minor/patch numbers must fit in a signed 64-bit integer.
"""

from __future__ import annotations

import re
from typing import Any

from ._goutil import go_quote
from .registry import BuiltinError, builtin, operand_error

_NUM = r"(0|[1-9][0-9]*)"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)"
_SEMVER = re.compile(
    rf"v?{_NUM}\.{_NUM}\.{_NUM}"
    rf"(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?"
    r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?",
    re.ASCII,
)
_INT64_MAX = (1 << 63) - 1


def parse(version: str) -> tuple[int, int, int, str] | None:
    """(major, minor, patch, pre-release) or None when not a valid version."""
    m = _SEMVER.fullmatch(version)
    if m is None:
        return None
    major, minor, patch = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if max(major, minor, patch) > _INT64_MAX:
        return None
    return major, minor, patch, m.group(4) or ""


def _compare_pre(a: str, b: str) -> int:
    if a == b:
        return 0
    # a version without a pre-release ranks higher
    if not a:
        return 1
    if not b:
        return -1
    pa, pb = a.split("."), b.split(".")
    for x, y in zip(pa, pb):
        xi, yi = x.isdigit(), y.isdigit()
        if xi and yi:
            # Go's Atoi saturates at the int64 maximum
            xn, yn = min(int(x), _INT64_MAX), min(int(y), _INT64_MAX)
            if xn != yn:
                return 1 if xn > yn else -1
        elif xi != yi:
            return -1 if xi else 1  # numeric identifiers rank lower
        elif x != y:
            return 1 if x > y else -1
    if len(pa) != len(pb):
        return 1 if len(pa) > len(pb) else -1
    return 0


def compare(a: tuple[int, int, int, str], b: tuple[int, int, int, str]) -> int:
    for x, y in zip(a[:3], b[:3]):
        if x != y:
            return 1 if x > y else -1
    return _compare_pre(a[3], b[3])


@builtin("semver.is_valid", 1)
def semver_is_valid(x: Any) -> bool:
    return type(x) is str and parse(x) is not None


@builtin("semver.compare", 2)
def semver_compare(a: Any, b: Any) -> int:
    if type(a) is not str:
        raise operand_error(1, a, "string")
    if type(b) is not str:
        raise operand_error(2, b, "string")
    va = parse(a)
    if va is None:
        raise BuiltinError(f"operand 1: string {go_quote(a)} is not a valid SemVer")
    vb = parse(b)
    if vb is None:
        raise BuiltinError(f"operand 2: string {go_quote(b)} is not a valid SemVer")
    return compare(va, vb)
