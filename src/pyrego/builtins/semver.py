"""semver.is_valid and semver.compare, as OPA v1.20.2 has them.

OPA v1.20.2 parses versions with its own small SemVer package, which is more
lenient than SemVer 2.0.0 (newer OPA releases tightened it; their conformance
cases expect the strict rules, v1.20.2 does not follow them):

* one leading ``v`` is dropped;
* the text after the first ``+`` is build metadata and the text before it,
  after the first ``-``, the pre-release; either may be empty, and when not
  empty it is dot-separated non-empty identifiers of ``[0-9A-Za-z-]``;
* what remains must hold exactly two dots around three decimal numbers that
  fit in a signed 64-bit integer; leading zeros are allowed everywhere.

Precedence compares major, minor and patch numerically, ranks a version with
a pre-release below the same version without one, then compares pre-release
identifiers in turn: all-digit identifiers numerically (values beyond the
int64 range count as its maximum, as Go's ``Atoi`` saturates) and below
others, others byte-wise; with equal identifiers the longer list ranks higher.
Build metadata plays no part. OPA v1.20.2 never returns when two different
pre-releases are equal identifier by identifier (``1.0.0-01`` against
``1.0.0-1``); pyrego answers 0 there.
"""

from __future__ import annotations

import re
from typing import Any

from pyrego.builtins._goutil import go_quote
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import BuiltinError

_IDENTIFIERS = re.compile(r"[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*", re.ASCII)
_DIGITS = re.compile(r"[0-9]+", re.ASCII)
_INT64_MAX = (1 << 63) - 1

Version = tuple[int, int, int, str]


def parse(version: str) -> Version | None:
    """(major, minor, patch, pre-release) or None when OPA rejects the text."""
    if version.startswith("v"):
        version = version[1:]
    version, _, metadata = version.partition("+")
    if metadata and _IDENTIFIERS.fullmatch(metadata) is None:
        return None
    version, _, pre = version.partition("-")
    if pre and _IDENTIFIERS.fullmatch(pre) is None:
        return None
    parts = version.split(".")
    if len(parts) != 3:
        return None
    numbers = []
    for part in parts:
        # strconv.ParseInt(part, 10, 64): ASCII digits (no sign can be left here)
        if _DIGITS.fullmatch(part) is None:
            return None
        n = int(part)
        if n > _INT64_MAX:
            return None
        numbers.append(n)
    return numbers[0], numbers[1], numbers[2], pre


def _identifier_order(x: str, y: str) -> int:
    xi, yi = _DIGITS.fullmatch(x) is not None, _DIGITS.fullmatch(y) is not None
    if xi != yi:
        return -1 if xi else 1  # numeric identifiers rank lower
    if xi:
        xn, yn = min(int(x), _INT64_MAX), min(int(y), _INT64_MAX)
        return (xn > yn) - (xn < yn)
    return (x > y) - (x < y)


def _compare_pre(a: str, b: str) -> int:
    if a == b:
        return 0
    if not a:
        return 1  # a version without a pre-release ranks higher
    if not b:
        return -1
    pa, pb = a.split("."), b.split(".")
    for x, y in zip(pa, pb):
        order = _identifier_order(x, y)
        if order:
            return order
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


def compare(a: Version, b: Version) -> int:
    """-1, 0 or 1 as version ``a`` ranks below, level with or above ``b``."""
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
