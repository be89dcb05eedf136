"""semver.is_valid and semver.compare against OPA v1.20.2 (the oracle), on
hand-picked edge cases and on generated version strings, through the Engine
with strict builtin errors on and off.

OPA v1.20.2 accepts more than SemVer 2.0.0 (leading zeros, empty pre-release
and build sections), so ``deny if semver.compare(input.v, "2.0.0") < 0`` must
hold for ``01.0.0`` as it does in OPA. Pairs on which OPA v1.20.2 never
returns (different pre-releases that are equal identifier by identifier) are
not sent to it; pyrego answers 0 for them.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

import pyrego
from opa_oracle import Oracle
from pyrego.errors import RegoError

EDGE = [
    "1.0.0", "0.0.0", "v1.0.0", "vv1.0.0", "V1.0.0", "01.0.0", "1.00.0", "1.0.00", "00.00.00",
    "1.0.0-", "1.0.0+", "1.0.0-+", "1.0.0+-", "1.0.0-01", "1.0.0-a.01", "1.0.0-0a", "1.0.0-0",
    "1.0.0-a-b", "1.0.0--", "1.0.0-a..b", "1.0.0-a.", "1.0.0-.a", "1.0.0+a+b", "1.0.0+a..b",
    "1.0.0-rc.1+build.01", "1.0.0+build-1", "1.0.0+a-b-c", "1.0.0-é", "1.0.0+é", "1.0.0-a_b",
    "9223372036854775807.0.0", "9223372036854775808.0.0", "0.9223372036854775807.9223372036854775807",
    "1.0.0-99999999999999999999", "1", "1.0", "1.0.0.0", "", "v", "-1.0.0", "+1.0.0", "1.-1.0",
    "1.+1.0", " 1.0.0", "1.0.0 ", "1.0.0\n", "\t1.0.0", "1 .0.0", "１.0.0", "1.0.٣", "1_0.0.0",
    "0x1.0.0", "1e2.0.0", ".1.0", "1..0", "1.0.", "1.0.0-alpha+", "1.0.0-+build", "v1.0.0-v1",
]

NUMBERS = ["0", "1", "00", "01", "10", "007", "9223372036854775807", "9223372036854775808", "", "a", " 1", "+1"]
PRE = ["", "-", "-0", "-00", "-01", "-1", "-a", "-a.01", "-0a", "-a-b", "-a..b", "-a.", "-.a",
       "-alpha.beta", "-rc.1", "-rc.01", "-99999999999999999999", "-x.7.z.92", "-é", "-a b"]
BUILD = ["", "+", "+01", "+a.b", "+a+b", "+a..b", "+-", "+x_y", "+20130313144700", "+sha.5114f85"]


def generated(rng: random.Random, n: int) -> list[str]:
    """Version strings built from good and bad parts."""
    out = []
    for _ in range(n):
        prefix = rng.choice(["", "", "", "v", "vv", "V"])
        pool = NUMBERS[:8] if rng.random() < 0.6 else NUMBERS  # mostly well-formed numbers
        nums = [rng.choice(pool) for _ in range(rng.choice([3, 3, 3, 3, 2, 4]))]
        out.append(prefix + ".".join(nums) + rng.choice(PRE) + rng.choice(BUILD))
    return out


def opa_never_returns(a: str, b: str) -> bool:
    """True for pairs OPA v1.20.2 loops on: equal versions whose pre-releases
    differ as text but are equal identifier by identifier (``01`` and ``1``)."""

    def pre(v: str) -> str:
        return v.removeprefix("v").partition("+")[0].partition("-")[2]

    def core(v: str) -> list[int]:
        return [int(p) for p in v.removeprefix("v").partition("+")[0].partition("-")[0].split(".")]

    pa, pb = pre(a), pre(b)
    if not pa or not pb or pa == pb or core(a) != core(b):
        return False
    ia, ib = pa.split("."), pb.split(".")
    if len(ia) != len(ib):
        return False
    big = (1 << 63) - 1
    for x, y in zip(ia, ib):
        numeric = re.fullmatch("[0-9]+", x, re.ASCII) and re.fullmatch("[0-9]+", y, re.ASCII)
        if x != y and not (numeric and min(int(x), big) == min(int(y), big)):
            return False
    return True


def pyrego_query(query: str, inp: Any, strict: bool) -> Any:
    eng = pyrego.Engine()
    eng.set_strict_builtin_errors(strict)
    result = eng.eval_query(query, input=inp)["result"]
    return result[0]["bindings"]["x"] if result else None


def opa_query(oracle: Oracle, query: str, inp: Any) -> Any:
    got = oracle.evaluate({}, query, input=inp)
    assert not got.is_error, got.error_message
    return got.bindings[0]["x"]


VERSIONS = list(dict.fromkeys(EDGE + generated(random.Random(20), 400)))
IS_VALID = "x := [semver.is_valid(s) | some s in input.vs]"
COMPARE = "x := [semver.compare(p[0], p[1]) | some p in input.ps]"


@pytest.mark.parametrize("strict", [True, False])
def test_is_valid_matches_opa(oracle: Oracle, strict: bool) -> None:
    want = opa_query(oracle, IS_VALID, {"vs": VERSIONS})
    got = pyrego_query(IS_VALID, {"vs": VERSIONS}, strict)
    diff = [(v, w, g) for v, w, g in zip(VERSIONS, want, got) if w is not g]
    assert not diff, diff[:20]
    # both kinds are well represented
    assert 50 < sum(want) < len(want) - 50


@pytest.mark.parametrize("strict", [True, False])
def test_compare_matches_opa(oracle: Oracle, strict: bool) -> None:
    valid = [v for v, ok in zip(VERSIONS, opa_query(oracle, IS_VALID, {"vs": VERSIONS})) if ok]
    rng = random.Random(7)
    ordered = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
               "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.0-0", "1.0.0-00", "1.0.0-01.a", "1.0.0-1.a",
               "1.0.0-a.01", "1.0.0-a.1.b", "1.0.0-", "1.0.0+x", "01.0.0", "1.0.0-99999999999999999999",
               "1.0.0-9223372036854775807", "1.0.0-a-b", "1.0.0-A", "1.0.0--", "v1.0.0-0a"]
    pairs = [[a, b] for a in ordered for b in ordered]
    pairs += [[rng.choice(valid), rng.choice(valid)] for _ in range(600)]
    pairs += [[v, "2.0.0"] for v in valid]
    looping = [p for p in pairs if opa_never_returns(*p)]
    pairs = [p for p in pairs if not opa_never_returns(*p)]
    want = opa_query(oracle, COMPARE, {"ps": pairs})
    got = pyrego_query(COMPARE, {"ps": pairs}, strict)
    diff = [(p, w, g) for p, w, g in zip(pairs, want, got) if w != g]
    assert not diff, diff[:20]
    assert {-1, 0, 1} <= set(want)
    assert looping and pyrego_query(COMPARE, {"ps": looping}, strict) == [0] * len(looping)


@pytest.mark.parametrize(("a", "b"), [("1", "1.0.0"), ("1.0.0", "1.0.0-a..b"), ("v1.0.0+", " 1.0.0"), ("1.0.0", "92233720368547758070.0.0")])
def test_compare_errors_match_opa(oracle: Oracle, a: str, b: str) -> None:
    query = f"x := semver.compare({json.dumps(a)}, {json.dumps(b)})"
    want = oracle.evaluate({}, query)
    assert want.error_code == "eval_builtin_error"
    eng = pyrego.Engine()
    eng.set_strict_builtin_errors(True)
    with pytest.raises(RegoError) as exc:
        eng.eval_query(query)
    assert exc.value.code == "eval_builtin_error"
    assert want.error_message is not None and str(exc.value.message) in want.error_message
    eng.set_strict_builtin_errors(False)
    assert eng.eval_query(query)["result"] == []


def test_lenient_versions_still_deny(oracle: Oracle) -> None:
    """A version OPA v1.20.2 reads as below 2.0.0 must not slip past a deny rule."""
    policy = 'package p\ndeny if semver.compare(input.v, "2.0.0") < 0\nallow if not deny\n'
    for v in ("01.0.0", "1.0.0-01", "1.0.0-a.01", "1.0.0-", "1.9.9+"):
        want = oracle.evaluate({"p.rego": policy}, "x := data.p.allow", input={"v": v}).bindings
        eng = pyrego.Engine()
        eng.add_policy("p.rego", policy)
        got = eng.eval_query("x := data.p.allow", input={"v": v})["result"]
        assert want == [] and got == [], v
