"""units.*, semver.*, uuid.*, net.* and graph.* builtins (expected values from OPA v1.20.2)."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import UNDEF, freeze, make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


def error(name: str, *args: Any) -> BuiltinError:
    with pytest.raises(BuiltinError) as info:
        call(name, *args)
    return info.value


# ---------------------------------------------------------------- units


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1.5Ki", 1536),
        ("1m", 0.001),
        ("500m", 0.5),
        ("0.0005K", 0.5),
        ("1G", 1000000000),
        ("1MI", 1048576),
        ("1e-3", 0.001),
        ('"10"', 10),
        ("3.3333333333333333m", 0.0033333333),
        ("1000000000000m", Decimal("1000000000.0000000208")),  # m is the float64 0.001
    ],
)
def test_units_parse(text: str, want: Any) -> None:
    got = call("units.parse", text)
    assert got == want
    if type(want) is int:
        assert type(got) is int  # whole results print without decimals


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("1KB", 1000),
        ("1KiB", 1024),
        ("1.5e3", 1500),
        ("0.0000001", 0),
        ("-1.5k", -1500),
        ("1e", 1000000000000000000),  # "e" is the exabyte unit
        ("123456789012345678901234567", 123456789012345678899183616),  # 64-bit mantissa, as OPA
    ],
)
def test_units_parse_bytes(text: str, want: int) -> None:
    assert call("units.parse_bytes", text) == want


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("units.parse", "", "units.parse: no amount provided"),
        ("units.parse", "1x", "units.parse: unit x not recognized"),
        ("units.parse", "1Mb", "units.parse: unit Mb not recognized"),
        ("units.parse", "1..2", "units.parse: could not parse amount to a number"),
        ("units.parse", "1 k", "units.parse: spaces not allowed in resource strings"),
        ("units.parse", "1e1000000", "units.parse: exponent too large"),
        ("units.parse_bytes", "KB", "units.parse_bytes: no byte amount provided"),
        ("units.parse_bytes", "1.5.5", "units.parse_bytes: could not parse byte amount to a number"),
        ("units.parse_bytes", "1 KB", "units.parse_bytes: spaces not allowed in resource strings"),
        ("units.parse_bytes", "1xb", "units.parse_bytes: byte unit xb not recognized"),
    ],
)
def test_units_errors(name: str, text: str, message: str) -> None:
    assert str(error(name, text)) == message


# ---------------------------------------------------------------- semver


@pytest.mark.parametrize(
    ("version", "valid"),
    [
        ("1.0.0", True),
        ("0.0.0", True),
        ("1.2.3-0", True),
        ("1.2.3-0a", True),
        ("1.2.3+01", True),
        ("v1.0.0", True),
        ("1.0.0-rc.1+build.1", True),
        ("1", False),
        # OPA v1.20.2 allows leading zeros and empty pre-release/build sections
        ("01.2.3", True),
        ("1.02.3", True),
        ("1.2.03", True),
        ("1.2.3-01", True),
        ("1.2.3-alpha.01", True),
        ("1.2.3-", True),
        ("1.2.3+", True),
        ("1.0.0-alpha..1", False),
        (" 1.0.0", False),
        ("99999999999999999999.0.0", False),
        (1, False),
    ],
)
def test_semver_is_valid(version: Any, valid: bool) -> None:
    assert call("semver.is_valid", version) is valid


def test_semver_compare() -> None:
    order = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            assert call("semver.compare", a, b) == (i > j) - (i < j), (a, b)
    assert call("semver.compare", "1.2.3+01", "1.2.3+2") == 0
    assert call("semver.compare", "2.0.0", "10.0.0") == -1
    assert str(error("semver.compare", "1", "1.0.0")) == 'operand 1: string "1" is not a valid SemVer'
    assert str(error("semver.compare", "1.0.0", "1.2.3-a..b")) == 'operand 2: string "1.2.3-a..b" is not a valid SemVer'
    assert call("semver.compare", "01.0.0", "2.0.0") == -1
    assert call("semver.compare", "1.0.0-01", "1.0.0-2") == -1
    assert isinstance(error("semver.compare", 1, "1.0.0"), OperandTypeError)


# ---------------------------------------------------------------- uuid


def test_uuid_rfc4122_is_stable_per_query_and_key() -> None:
    b = lookup("uuid.rfc4122")
    assert b is not None and b.needs_context and b.nondeterministic
    ctx = EvalContext()
    a1, a2, c = b.fn(ctx, "a"), b.fn(ctx, "a"), b.fn(ctx, "c")
    assert a1 == a2 != c
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", a1)
    assert b.fn(EvalContext(), "a") != a1


def test_uuid_parse() -> None:
    assert call("uuid.parse", "{00000000-0000-4000-8000-000000000000}") == {"variant": "RFC4122", "version": 4}
    assert call("uuid.parse", "6bea8ef2d3d33cd184e09bab06a52ece") == {"variant": "RFC4122", "version": 3}
    assert call("uuid.parse", "urn:uuid:000003e8-48b9-21ee-b200-325096b39f47") == {
        "clocksequence": 12800,
        "domain": "Person",
        "id": 1000,
        "macvariables": "local:unicast",
        "nodeid": "32-50-96-b3-9f-47",
        "time": 1693566990121469600,
        "variant": "RFC4122",
        "version": 2,
    }
    # int64 overflow of the timestamp wraps, as in Go
    assert call("uuid.parse", "00000000-0000-1000-8000-000000000000")["time"] == 6227451273709551616
    assert call("uuid.parse", "00000000-0000-0000-c000-000000000000") == {"variant": "Microsoft", "version": 0}
    assert call("uuid.parse", "not-a-uuid") is UNDEF
    assert isinstance(error("uuid.parse", 123), OperandTypeError)


# ---------------------------------------------------------------- net


@pytest.mark.parametrize(
    ("cidr", "other", "want"),
    [
        ("10.0.0.0/8", "10.1.0.0/24", True),
        ("10.0.0.0/8", "10.1.2.3", True),
        ("2001:4860:4860::8888/32", "2001:4860:4860:1234::8888/40", True),
        ("1.2.3.0/24", "1.2.3.0/23", False),
        ("::ffff:1.2.3.0/120", "1.2.3.5", True),  # v4-mapped networks hold IPv4 addresses
        ("0.0.0.0/0", "::1", False),
        ("1.2.3.0/024", "1.2.3.4", True),
    ],
)
def test_cidr_contains(cidr: str, other: str, want: bool) -> None:
    assert call("net.cidr_contains", cidr, other) is want
    assert call("net.cidr_overlap", cidr, other) is want


def test_cidr_errors() -> None:
    assert str(error("net.cidr_contains", "not-a-cidr", "1.2.3.4")) == "invalid CIDR address: not-a-cidr"
    assert (
        str(error("net.cidr_contains", "1.2.3.0/28", "x"))
        == "not a valid textual representation of an IP address or CIDR: x"
    )
    assert str(error("net.cidr_contains", "1.2.3.0/24", 1)) == "operand 1 must be string but got number"
    assert str(error("net.cidr_intersects", "1.2.3.0/24", "1.2.3.4")) == "invalid CIDR address: 1.2.3.4"
    assert str(error("net.cidr_expand", "192.168.1.1/33")) == "invalid CIDR address: 192.168.1.1/33"


def test_cidr_intersects_and_is_valid() -> None:
    assert call("net.cidr_intersects", "fd1e:5bfe:8af3:9ddc::/64", "fd1e:5bfe:8af3:9ddc:1111::/72") is True
    assert call("net.cidr_intersects", "fd1e:5bfe:8af3:9ddc::/64", "2001:4860:4860::8888/32") is False
    assert call("net.cidr_is_valid", "10.0.0.0/8") is True
    assert call("net.cidr_is_valid", "01.2.3.0/24") is False
    assert call("net.cidr_is_valid", "fe80::1%eth0/64") is False
    assert call("net.cidr_is_valid", 5) is False


def test_cidr_expand() -> None:
    assert call("net.cidr_expand", "192.168.1.1/30") == make_set(
        ["192.168.1.0", "192.168.1.1", "192.168.1.2", "192.168.1.3"]
    )
    assert call("net.cidr_expand", "::ffff:1.2.3.0/127") == make_set(["1.2.3.0", "1.2.3.1"])
    assert call("net.cidr_expand", "0:0:0:1::/127") == make_set(["0:0:0:1::", "::1:0:0:0:1"])


def test_cidr_contains_matches() -> None:
    got = call("net.cidr_contains_matches", ["1.1.2.0/24", "1.1.1.0/24"], ["1.1.1.1", "1.1.2.1"])
    assert got == make_set([[0, 1], [1, 0]])
    got = call("net.cidr_contains_matches", [["1.1.2.0/24", 1], "1.1.1.0/24"], ["1.1.1.1", "1.1.2.1"])
    assert got == make_set([[0, 1], [1, 0]])
    got = call("net.cidr_contains_matches", make_set(["1.1.1.0/24", "1.1.2.0/24"]), make_set(["1.1.1.1", "1.1.2.1"]))
    assert got == make_set([["1.1.1.0/24", "1.1.1.1"], ["1.1.2.0/24", "1.1.2.1"]])
    got = call("net.cidr_contains_matches", {"a": "1.1.1.0/24"}, "1.1.1.9")
    assert got == make_set([["a", "1.1.1.9"]])
    bad = make_set([["1.1.1.0/24", "bar"], []])
    assert (
        str(error("net.cidr_contains_matches", bad, "1.1.1.1"))
        == "operand 1: element must be string or non-empty array"
    )


@pytest.mark.parametrize(
    ("cidrs", "want"),
    [
        (["192.168.1.0/24", "192.168.0.0/24"], ["192.168.0.0/23"]),
        (["1.2.3.7/32", "1.2.3.8/32", "1.2.3.6/32", "1.2.3.9/32"], ["1.2.3.6/31", "1.2.3.8/31"]),
        (
            ["2601:600:8a80:207e:a57d:7567:e2c9:e7b3/64", "2601:600:8a80:207e:a57d:7567:e2c9:e7b3/128"],
            ["2601:600:8a80:207e::/64"],
        ),
        (["::/0", "0.0.0.0/0"], ["::/0"]),
        (["1.2.3.4"], ["1.2.3.4/8"]),  # a lone address gets Go's classful default mask
        (["1.2.3.4", "1.2.3.5"], ["1.0.0.0/8"]),
        (["::ffff:1.2.3.0/120", "1.2.4.0/24"], ["1.2.3.0/24", "1.2.4.0/24"]),
        ([], []),
    ],
)
def test_cidr_merge(cidrs: list[str], want: list[str]) -> None:
    assert call("net.cidr_merge", cidrs) == make_set(want)
    assert call("net.cidr_merge", make_set(cidrs)) == make_set(want)


def test_cidr_merge_errors() -> None:
    assert str(error("net.cidr_merge", ["::1"])) == "IPv6 invalid: needs prefix length"
    assert str(error("net.cidr_merge", [1])) == "element must be string"
    assert str(error("net.cidr_merge", "x")) == "operand must be an array"


def test_lookup_ip_addr() -> None:
    b = lookup("net.lookup_ip_addr")
    assert b is not None and b.nondeterministic
    assert b.fn(EvalContext(), "10.0.0.0") == make_set(["10.0.0.0"])
    assert b.fn(EvalContext(), "::") == make_set(["::"])
    assert b.fn(EvalContext(), "localhost") in (
        make_set(["127.0.0.1"]),
        make_set(["127.0.0.1", "::1"]),
        make_set(["::1"]),
    )
    with pytest.raises(BuiltinError, match="network access is disabled"):
        b.fn(EvalContext(options={"allow_net": False}), "localhost")
    with pytest.raises(BuiltinError, match="unallowed host"):
        b.fn(EvalContext(options={"allow_net": ["example.com"]}), "localhost")


# ---------------------------------------------------------------- graph

GRAPH = {
    "a": make_set(["b", "c"]),
    "b": make_set(["d"]),
    "c": make_set(["d"]),
    "d": make_set([]),
    "e": make_set(["f"]),
    "f": make_set(["e"]),
    "x": make_set(["x"]),
}


def test_reachable() -> None:
    assert call("graph.reachable", GRAPH, make_set(["b", "e"])) == make_set(["b", "d", "e", "f"])
    assert call("graph.reachable", {"a": ["b"], "b": ["c"], "c": ["a"]}, ["a"]) == make_set(["a", "b", "c"])
    assert call("graph.reachable", {1: [2.0], 2: [1]}, [1]) == make_set([1, 2])
    assert call("graph.reachable", GRAPH, ["zz"]) == make_set([])
    assert str(error("graph.reachable", GRAPH, "a")) == "operand 2 must be {array, set} but got string"
    assert str(error("graph.reachable", [], ["a"])) == "operand 1 must be object but got array"


def test_reachable_paths() -> None:
    assert call("graph.reachable_paths", GRAPH, make_set(["b", "e"])) == make_set([["b", "d"], ["e", "f"]])
    assert call("graph.reachable_paths", {"a": ["b"], "b": ["c"], "c": ["a"]}, ["a"]) == make_set([["a", "b", "c"]])
    assert call("graph.reachable_paths", {}, make_set(["a"])) == make_set([])
    # a node missing from the graph ends the path before it
    assert call("graph.reachable_paths", {"a": ["b", "z"], "b": []}, ["a"]) == make_set([["a", "b"], ["a"]])
    assert freeze(["a"]) in call("graph.reachable_paths", {"a": None}, ["a"])
