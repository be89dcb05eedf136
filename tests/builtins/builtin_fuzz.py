"""A type-directed random fuzzer of the builtins against OPA v1.20.2.

For each builtin of the capabilities file, argument tuples are drawn from
pools of edge values per declared type (most well typed, some with a wrong
type in one position), ``x := f(args)`` is evaluated in OPA (the oracle
always runs with strict builtin errors) and in pyrego with strict builtin
errors on and off, and the outcomes are compared: the value in JSON form
(numbers by value), undefined, or the error code.  Without strict errors a
builtin's error must make the expression undefined.

The arguments are written into the query as Rego literals wrapped in
``object.get({"v": ...}, input.k, null)`` so that neither type checker sees
their types and a deliberately wrong argument reaches the builtin.

``python tests/builtins/builtin_fuzz.py [calls-per-builtin] [seed] [name-prefix]``
runs a larger campaign and prints the disagreements.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from oracle_harness import plain, same

import pyrego
from opa_oracle import Oracle
from pyrego.runtime.numbers import format_number, parse_number

CAPABILITIES = Path(__file__).resolve().parents[2] / "src" / "pyrego" / "data" / "capabilities" / "v1.20.2.json"

# Not deterministic, not callable as plain functions, or about the policy around the call.
SKIP = frozenset({
    "time.now_ns", "http.send", "net.lookup_ip_addr", "opa.runtime",
    "assign", "eq", "print", "internal.print", "trace", "internal.test_case", "internal.member_2",
    "internal.member_3", "internal.template_string", "rego.metadata.chain", "rego.metadata.rule",
})
# Random answers (ECDSA and PSS signatures, rand.intn, uuid.rfc4122): only the
# kind of outcome is compared, which still checks their arguments.
OUTCOME_ONLY = frozenset({"io.jwt.encode_sign", "io.jwt.encode_sign_raw", "rand.intn", "uuid.rfc4122"})


class Num(str):
    """A number written in Rego as this text (``1e3``, ``-0``, ``1.0``)."""


@dataclass(frozen=True)
class RSet:
    """A set literal (members may repeat: the literal has them all)."""

    members: tuple[Any, ...]


@dataclass(frozen=True)
class RObj:
    """An object literal (keys of any type, all distinct in text)."""

    items: tuple[tuple[Any, Any], ...]


def lit(v: Any, canonical: bool = False) -> str:
    """``v`` as a Rego literal; ``canonical`` writes numbers as pyrego prints them
    (OPA keeps a number literal's text: ``1e3``, ``-0``, ``1.0``)."""
    if isinstance(v, Num):
        return format_number(parse_number(str(v))) if canonical else str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if v is True:
        return "true"
    if v is False:
        return "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return format_number(parse_number(repr(v))) if canonical else repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(lit(x, canonical) for x in v) + "]"
    if isinstance(v, RSet):
        return "{" + ", ".join(lit(x, canonical) for x in v.members) + "}" if v.members else "set()"
    if isinstance(v, RObj):
        return "{" + ", ".join(f"{lit(k, canonical)}: {lit(x, canonical)}" for k, x in v.items) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{lit(k, canonical)}: {lit(x, canonical)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


# ---------------------------------------------------------------- pools

NUMBERS: list[Any] = [
    0, Num("-0"), 1, -1, Num("1.0"), 0.5, -0.5, 2, 3, 7, 10, 16, 100, 255, 256, -7, 1.5, -1.5, 2.5, 0.1,
    2**31, 2**32, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**64), 10**30, -(10**30), 1e308, -1e308, 1e-30,
    Num("1e3"), Num("1E-2"), Num("0.000001"), Num("123456789.123456789"), 1.0e15, 3.14159, -0.0001,
    Num("3.00000000000000000001"), Num("0.1000000000000000055511151231257827"), Num("1700000000000000000.000000000000000000001"),
    Num("-2.5e-400"), Num("1e400"),
]
SMALL_INTS = [0, 1, 2, 3, -1, -2, 5, 8, 10, 16, 36, 64, 100]

STRINGS: list[Any] = [
    "", " ", "a", "abc", "ABC", "aBc", "hello world", "é", "ß", "ǅ", "İ", "ﬀ", "😀", "👍🏽", "e\u0301", "\u05e9\u05dc\u05d5\u05dd",
    "\u202eabc", "日本語", "\t\n", "  padded  ", "\x00", "a\u00a0b", "a,b,c", "a.b.c", "a/b/c", "a-b_c",
    "1", "-1", "0", "1.5", "1e3", "1E3", "0x10", "007", "+5", ".5", "1_000", "NaN", "Inf", "-Inf", "1e400",
    "123456789012345678901234567890", "true", "false", "null", "[]", "{}", '{"a":1}', '{"a": [1, 2]}', "[1,2",
    '"x"', "a: 1", "- a\n- b", "a: [1, 2", "~", "yes", "---\na: 1\n---\nb: 2",
    "2024-02-29", "2024-02-29T12:34:56Z", "1970-01-01T00:00:00+01:00", "2006-01-02T15:04:05.999999999Z",
    "10:30", "1h30m", "1.5h", "-3m", "300ms", "1us", "1µs",
    "10.0.0.0/8", "192.168.1.1", "192.168.1.0/24", "::1", "2001:db8::/32", "10.0.0.0/33", "0.0.0.0/0", "::ffff:1.2.3.4",
    "1.0.0", "1.0.0-alpha.1", "v1.0.0", "1.0", "1.0.0+build.5", "01.0.0",
    "aGVsbG8=", "aGVsbG8", "YQ", "-_-_", "+/+/", "====", "48656c6c6f", "4",
    "https://user:pw@example.com:8080/p/a?q=1&r=a+b#frag", "http://[::1]:80/", "mailto:x@y", "/rel?x=1", "%zz", "a%20b", "a+b",
    "a=1&b=2&a=3", "*", "a*", "**", "?.com", "*.example.com", "[a-c]", "{a,b}", "\\*", "[",
    "a+", "^a.*z$", "(a)(b)?", "\\d+", "(?i)AbC", "a{2,3}", "(?P<n>x)", "\\p{L}+", ".", "|", "(",
    "%d", "%s", "%v", "%.2f", "%x", "%e", "%%", "%!", "%q",
    "10K", "1Ki", "1.5G", "1mb", "1MiB", "-1k", "1m", "1M",
    "550e8400-e29b-41d4-a716-446655440000", "urn:uuid:550e8400-e29b-41d4-a716-446655440000",
    "UTC", "America/New_York", "Local", "Asia/Kolkata", "Nope/Zone",
    "x" * 300, "é" * 200, "ab" * 2000,
]


def _hints() -> dict[str, list[Any]]:
    layouts = ["2006-01-02", "2006-01-02T15:04:05Z07:00", "Mon Jan _2 15:04:05 2006", "15:04", "Jan 2, 2006 at 3:04pm (MST)",
               "2006-01-02 15:04:05.000", "RFC3339", "RFC822", "Kitchen", "02 Jan 06 15:04 -0700", "20060102150405"]
    dates = ["2024-02-29", "2024-02-29T12:34:56Z", "2024-02-29T12:34:56.123+05:30", "1970-01-01T00:00:00Z", "2023-13-01",
             "Mon Jan  2 15:04:05 2006", "3:04PM", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2024-02-29T12:34:56z",
             "2024-02-29T24:00:00Z", "2024-02-29 12:34:56", "1900-01-01T00:00:00-00:00"]
    tz = ["UTC", "America/New_York", "Local", "", "Asia/Kolkata", "Nope/Zone", "Europe/London", "EST"]
    ns = [0, 1, -1, 1_700_000_000_000_000_000, -62_135_596_800_000_000_000, 253_402_300_800_000_000_000, 1.5e18, 86_400 * 10**9]
    regexes = ["a+", "^$", "(a)(b)?", "[", "\\d+", "(?i)abc", "a{2,3}", "\\p{L}+", "(?P<n>x)y", ".*", "\\b", "é+", "a|b",
               "^(\\w+)@(\\w+)\\.com$", "[[:alpha:]]+", "\\Qa.b\\E", "x*", "(?s).", "\\z", "a{,2}", "(?m)^b"]
    cidrs = ["10.0.0.0/8", "192.168.1.1", "192.168.1.0/24", "::1", "2001:db8::/32", "10.0.0.0/33", "192.168.1.0/30",
             "10.1.2.3/31", "::ffff:1.2.3.4/128", "fe80::1%eth0", "01.2.3.4", "1.2.3.4/0", "2001:db8::/126", "10.0.0.0/16",
             "not-an-ip", "192.168.1.255/32", "10.0.0.0/ 8", "1.2.3"]
    small_cidrs = ["192.168.1.0/30", "10.1.2.3/31", "192.168.1.255/32", "2001:db8::/126", "10.0.0.0/29", "1.2.3.4", "bad",
                   "10.0.0.0/33", "::1/128", "10.0.0.1/30"]
    semvers = ["1.0.0", "1.0.0-alpha", "1.0.0+build", "v1.0.0", "1.0", "01.0.0", "1.0.0-alpha.1", "1.0.0-0", "1.0.0-alpha..1",
               "2.0.0-rc.1+b.2", "1.0.0-beta.11", "1.0.0-beta.2", "1.0.0-rc.1", "10.20.30", "1.2.3-0A", "1.2.3-01"]
    units = ["10K", "1Ki", "1.5G", "1e3", "1mb", "1MiB", "  5 ", "-1k", "1m", "1M", "0.5Ki", "10KB", "1kib", "1.0", "1 k",
             "2Ei", "1E", "100", ".5", "1e-3", "5x", "1Y", "1Q", "0x10", "1.", "1_0", "1e3k", "999999999999999999999Ei"]
    b64 = ["aGVsbG8=", "aGVsbG8", "aGVsbG8===", "====", "YQ", "YQ==", "-_-_", "+/+/", "aGVs bG8=", "aGVsbG8=\n", "=", "YWJj ZA=="]
    hexs = ["48656c6c6f", "4", "zz", "0x12", "", "ABCDEF", "aBcD", "e9"]
    jsons = ['{"a":1}', "[1,2", "1e400", "123456789012345678901234567890", '"x"', "null", '{"a":1,"a":2}', " 1 ", "-0", "1.0",
             "1.5e3", '{"a":{"b":[1,{"c":null}]}}', "[]", '"\\ud800"', "tru", "1 2", '{"a":1}x', "0.1e-400", "-1e400"]
    yamls = ["a: 1", "- a\n- b", "a: [1, 2", "!!binary aGk=", "yes", "on", "0x10", "1e3", "a: &x 1\nb: *x", "~",
             "---\na: 1\n---\nb: 2", "010", "0o10", ".inf", "1_000", "2001-12-14", "a: 1\na: 2", "{a: 1, b: [x]}", "? [1]\n: 2",
             "key: 'v'", "1.0", "-.5", "null", "a:\n  - b: c", "\t", "123456789012345678901234567890", "0b11", "+12", "1e400"]
    urls = ["https://user:pw@example.com:8080/p/a?q=1&r=a+b#frag", "http://[::1]:80/", "mailto:x@y", "/relative?x", "%zz",
            "a b", "http://example.com/%41", "http://%41.com", "ftp://x", "http://example.com:abc/", "http://a/b?c=%zz",
            "//host/path", "http://[fe80::1%25en0]/"]
    queries = ["a=1&b=2", "a=%zz", "a+b", "a;b", "=", "&&", "a=1&a=2", "a", "%41=%42", "a=b=c", "é=ü"]
    formats = ["%d", "%s", "%v", "%.2f", "%x", "%5s|%-5s", "%e", "%g", "%%", "%d %d", "%!", "%q", "%T", "%o", "%b", "%c",
               "%U", "%08.3f", "%+d", "%t", "%X", "%#v", "%6.2e", "%s %s %s", "%[2]d %[1]d", "%*d", "%.0f", "%.3g"]
    globs = ["*", "a*", "**", "?.com", "*.github.com", "[a-c]", "{a,b}", "\\*", "[", "a.*.c", "**.c", "[!a]*", "{*.a,b}",
             "a\\.b", "?", "[^a]", "{a", "a}", "*é"]
    durations = ["1h", "1.5h", "-3m", "1h30m", "0", "1us", "1µs", "300ms", ".5s", "1e3s", "1d", "", "5", "1H", "-0", "+2s",
                 "9223372036854775807ns", "9999999999h", "1.h", "1ns1ns"]
    uuids = ["550e8400-e29b-41d4-a716-446655440000", "urn:uuid:550e8400-e29b-41d4-a716-446655440000",
             "{550e8400-e29b-41d4-a716-446655440000}", "550e8400e29b41d4a716446655440000", "550e8400-e29b-41d4-a716-44665544000g",
             "00000000-0000-0000-0000-000000000000", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "a0eebc99-9c0b-1ef8-bb6d-6bb9bd380a11",
             "550E8400-E29B-41D4-A716-446655440000"]
    gql_schema = ["type Query { a: Int }", "type Query { a: Int b(x: String!): [String] }", "type Query {", "schema { query: Q } type Q { a: Int }",
                  "type Query { a: Int } type Query { b: Int }", "enum E { A B } type Query { e: E }", "scalar S type Query { s: S }"]
    gql_query = ["{ a }", "query { b }", "{", "query Q($x: String) { b(x: $x) }", "{ a a }", "fragment f on Query { a } { ...f }",
                 "mutation { a }", "{ __typename }", "{ b(x: 1) }", "query { a } query { a }"]
    modules = ["package a\np := 1", "package a\np {", "package a\nimport rego.v1\np if true", "package a.b\n# c\nq contains 1",
               "package a\np := input.x", "x", "package a\np[x] = y { y := 1; x := 2 }", "package a\ndefault p := false"]
    paths = ["a", "a/b", "/a/b", "a.b", "a/0", "/", "", "a/~1b", "a/~0b", "a/-", "a/*"]
    tmpl = ["{{.a}}", "{{range .}}x{{end}}", "{{.a", "{{if .a}}y{{else}}n{{end}}", "plain", "{{.a.b}}", "{{len .}}", "{{printf \"%d\" .a}}"]
    tokens = [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
        "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "eyJhbGciOiJub25lIn0.eyJhIjoxfQ.", "a.b.c", "a.b", "", "eyJhbGciOiJIUzI1NiJ9.e30.x",
    ]
    return {
        "time.parse_ns": [layouts, dates], "time.parse_rfc3339_ns": [dates], "time.parse_duration_ns": [durations],
        "time.format": [ns, tz, layouts], "time.date": [ns, tz], "time.clock": [ns, tz], "time.weekday": [ns, tz],
        "time.add_date": [ns, SMALL_INTS], "time.diff": [ns, tz],
        "regex.match": [regexes], "re_match": [regexes], "regex.is_valid": [regexes], "regex.split": [regexes],
        "regex.find_n": [regexes], "regex.find_all_string_submatch_n": [regexes], "regex.replace": [regexes],
        "regex.globs_match": [regexes], "regex.template_match": [regexes],
        "net.cidr_contains": [cidrs], "net.cidr_intersects": [cidrs], "net.cidr_overlap": [cidrs], "net.cidr_is_valid": [cidrs],
        "net.cidr_contains_matches": [cidrs], "net.cidr_merge": [cidrs], "net.cidr_expand": [small_cidrs],
        "semver.is_valid": [semvers], "semver.compare": [semvers],
        "units.parse": [units], "units.parse_bytes": [units],
        "base64.decode": [b64], "base64.is_valid": [b64], "base64url.decode": [b64], "hex.decode": [hexs],
        "json.unmarshal": [jsons], "json.is_valid": [jsons], "yaml.unmarshal": [yamls], "yaml.is_valid": [yamls],
        "uri.parse": [urls], "uri.is_valid": [urls], "urlquery.decode": [queries + urls], "urlquery.decode_object": [queries],
        "urlquery.encode": [queries + urls], "sprintf": [formats], "glob.match": [globs], "glob.quote_meta": [globs],
        "uuid.parse": [uuids], "graphql.parse": [gql_query, gql_schema], "graphql.parse_query": [gql_query],
        "graphql.parse_schema": [gql_schema], "graphql.schema_is_valid": [gql_schema], "graphql.is_valid": [gql_query, gql_schema],
        "graphql.parse_and_verify": [gql_query, gql_schema], "rego.parse_module": [["a.rego", ""], modules],
        "json.filter": [[], paths], "json.remove": [[], paths], "strings.render_template": [tmpl],
        "io.jwt.decode": [tokens], "io.jwt.decode_verify": [tokens], "io.jwt.verify_hs256": [tokens, ["secret", "your-256-bit-secret", ""]],
        "to_number": [jsons + units], "format_int": [NUMBERS, [2, 8, 10, 16, 3, 36, 0, 1, 37]],
        "numbers.range": [SMALL_INTS + [1.5, 2.0], SMALL_INTS + [1.5, 2.0]],
        "numbers.range_step": [SMALL_INTS + [1.5], SMALL_INTS + [1.5], [1, 2, 3, 0, -1, 0.5, 1.0]],
        "bits.lsh": [NUMBERS, SMALL_INTS], "bits.rsh": [NUMBERS, SMALL_INTS],
        "substring": [[], SMALL_INTS, SMALL_INTS], "array.slice": [[], SMALL_INTS, SMALL_INTS],
        "strings.split_n": [[], [], SMALL_INTS], "strings.replace_n": [], "indexof_n": [],
        "regex.find_n_": [],
    }


HINTS = _hints()
# Builtins whose numeric arguments must stay small (OPA and pyrego would build huge values).
SMALL_NUMBERS = frozenset({"numbers.range", "numbers.range_step", "bits.lsh"})
# Builtins whose string arguments come only from their hints (net.cidr_expand("0.0.0.0/0") never ends).
HINTS_ONLY = frozenset({"net.cidr_expand"})


def scalar_pool() -> list[Any]:
    return NUMBERS + STRINGS + [True, False, None]


class Gen:
    """Random values of declared types."""

    def __init__(self, rnd: random.Random) -> None:
        self.r = rnd

    def any(self, depth: int = 0) -> Any:
        r = self.r
        k = r.random()
        if depth >= 2 or k < 0.6:
            return r.choice(scalar_pool())
        if k < 0.75:
            return [self.any(depth + 1) for _ in range(r.randint(0, 3))]
        if k < 0.87:
            return self.object({}, depth + 1)
        return self.set({"type": "any"}, depth + 1)

    def key(self, t: dict[str, Any], depth: int) -> Any:
        return self.value(t, depth + 1) if self.r.random() < 0.3 else self.r.choice(["a", "b", "c", "", "é", "1", "a.b"])

    def object(self, t: dict[str, Any], depth: int) -> RObj:
        r = self.r
        items: list[tuple[Any, Any]] = []
        for s in t.get("static") or []:
            if r.random() < 0.9:
                items.append((s["key"], self.value(s["value"], depth + 1)))
        dyn = t.get("dynamic")
        n = r.randint(0, 3) if dyn or not t.get("static") else 0
        for _ in range(n):
            kt = dyn["key"] if dyn else {"type": "any"}
            vt = dyn["value"] if dyn else {"type": "any"}
            items.append((self.key(kt, depth), self.value(vt, depth + 1)))
        seen: set[str] = set()
        out = []
        for k, v in items:
            # Distinct keys by value (1 and 1.0 are one key).
            norm = str(Decimal(str(k)).normalize()) if _kind(k) == "number" else lit(k)
            if norm not in seen:
                seen.add(norm)
                out.append((k, v))
        return RObj(tuple(out))

    def set(self, t: dict[str, Any], depth: int) -> RSet:
        of = t.get("of") or {"type": "any"}
        members = [self.value(of, depth + 1) for _ in range(self.r.randint(0, 4))]
        if members and self.r.random() < 0.2:
            members.append(members[0])
        return RSet(tuple(members))

    def array(self, t: dict[str, Any], depth: int) -> list[Any]:
        r = self.r
        out = [self.value(s, depth + 1) for s in t.get("static") or []]
        dyn = t.get("dynamic")
        if dyn or not t.get("static"):
            out += [self.value(dyn or {"type": "any"}, depth + 1) for _ in range(r.randint(0, 4))]
        if out and r.random() < 0.1:
            out.append(out[0])
        return out

    def value(self, t: dict[str, Any], depth: int = 0, hint: list[Any] | None = None, only: bool = False) -> Any:
        r = self.r
        if hint and (only or r.random() < 0.6):
            return r.choice(hint)
        kind = t.get("type", "any")
        of = t.get("of")
        if kind == "any" and of:
            return self.value(r.choice(of), depth, hint)
        if kind == "any":
            return self.any(depth)
        if kind == "number":
            return r.choice(NUMBERS)
        if kind == "string":
            return r.choice(STRINGS)
        if kind == "boolean":
            return r.random() < 0.5
        if kind == "null":
            return None
        if kind == "array":
            return self.array(t, depth)
        if kind == "object":
            return self.object(t, depth)
        if kind == "set":
            return self.set(t, depth)
        return self.any(depth)

    def wrong(self, t: dict[str, Any]) -> Any:
        """A value not of type ``t`` (as far as a quick look can tell)."""
        kind = t.get("type", "any")
        for _ in range(20):
            v = self.any(1)
            if kind == "any" and not t.get("of"):
                return v
            if not _fits(v, t):
                return v
        return None if kind != "null" else 0


def _kind(v: Any) -> str:
    if isinstance(v, Num) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bool):
        return "boolean"
    if v is None:
        return "null"
    if isinstance(v, list):
        return "array"
    if isinstance(v, RSet):
        return "set"
    return "object"


def _fits(v: Any, t: dict[str, Any]) -> bool:
    kind = t.get("type", "any")
    if kind == "any":
        of = t.get("of")
        return not of or any(_fits(v, o) for o in of)
    return _kind(v) == kind


def load_builtins() -> dict[str, dict[str, Any]]:
    caps = json.loads(CAPABILITIES.read_text())
    return {b["name"]: b for b in caps["builtins"] if b["name"] not in SKIP and b.get("decl", {}).get("args") is not None}


def arg_tuples(name: str, decl: dict[str, Any], rnd: random.Random, n: int) -> Iterator[list[Any]]:
    g = Gen(rnd)
    args_t = decl["args"]
    hints = HINTS.get(name, [])
    for _ in range(n):
        args = [g.value(t, 0, hints[i] if i < len(hints) and hints[i] else None, name in HINTS_ONLY) for i, t in enumerate(args_t)]
        if name in SMALL_NUMBERS:
            args = [a if not isinstance(a, (int, float, Num)) or isinstance(a, bool) or (isinstance(a, (int, float)) and abs(a) <= 100)
                    else rnd.choice(SMALL_INTS) for a in args]
        if args_t and rnd.random() < 0.2 and name not in HINTS_ONLY:
            i = rnd.randrange(len(args_t))
            args[i] = g.wrong(args_t[i])
        yield args


# ---------------------------------------------------------------- evaluation

Outcome = tuple[str, Any]
_ALWAYS_RAISED = ("eval_cancel_error", "eval_conflict_error")


def query(name: str, args: list[Any], canonical: bool = False) -> str:
    operands = ", ".join(f'object.get({{"v": {lit(a, canonical)}}}, input.k, null)' for a in args)
    return f"x := {name}({operands})"


def opa(oracle: Oracle, q: str) -> Outcome:
    got = oracle.evaluate({}, q, input={"k": "v"})
    if got.is_error:
        return "error", got.error_code
    if not got.bindings:
        return "undefined", None
    return "value", plain(got.bindings[0]["x"])


def _engine(strict: bool) -> pyrego.Engine:
    e = pyrego.Engine()
    e.set_strict_builtin_errors(strict)
    e.set_input({"k": "v"})
    return e


_ENGINES: dict[bool, pyrego.Engine] = {}


def ours(q: str, strict: bool) -> Outcome:
    e = _ENGINES.get(strict)
    if e is None:
        e = _ENGINES[strict] = _engine(strict)
    try:
        res = e.eval_query(q)["result"]
    except pyrego.RegoError as exc:
        return "error", exc.code
    except Exception as exc:  # noqa: BLE001 - a raw exception is a finding in itself
        return "crash", f"{type(exc).__name__}: {exc}"
    if not res:
        return "undefined", None
    return "value", plain(res[0]["bindings"]["x"])


def agree(a: Outcome, b: Outcome, *, kind_only: bool = False) -> bool:
    if a[0] != b[0]:
        return False
    if kind_only or a[0] == "undefined":
        return True
    if a[0] == "error":
        return a[1] == b[1]
    return same(a[1], b[1])


def non_strict_expectation(theirs: Outcome) -> Outcome:
    """What OPA answers without strict builtin errors, from its strict answer."""
    if theirs[0] == "error" and theirs[1] not in _ALWAYS_RAISED:
        return "undefined", None
    return theirs


@dataclass
class Finding:
    name: str
    query: str
    strict: bool
    opa: Outcome
    pyrego: Outcome
    text_kept: bool  # OPA agrees when the numbers are written as pyrego prints them


def run(
    oracle: Oracle,
    names: Collection[str] | None,
    per_builtin: int,
    seed: int,
    known: Callable[[str, str], bool] = lambda name, q: False,
    progress: Callable[[str, float], None] | None = None,
) -> tuple[dict[str, int], list[Finding]]:
    """Fuzz each builtin of ``names`` (all when None) ``per_builtin`` times;
    the calls counted per builtin and the disagreements."""
    builtins = load_builtins()
    counts: dict[str, int] = {}
    findings: list[Finding] = []
    for name in sorted(builtins):
        if names is not None and name not in names:
            continue
        rnd = random.Random(f"{seed}:{name}")
        seen: set[str] = set()
        started = time.monotonic()
        for args in arg_tuples(name, builtins[name]["decl"], rnd, per_builtin):
            q = query(name, args)
            if q in seen:
                continue
            seen.add(q)
            counts[name] = counts.get(name, 0) + 1
            if known(name, q):
                continue
            theirs = opa(oracle, q)
            if theirs[0] == "error" and theirs[1] not in ("eval_builtin_error", "eval_type_error") + _ALWAYS_RAISED:
                continue  # OPA could not take the query at all (a literal it rejects): nothing to compare
            kind_only = name in OUTCOME_ONLY
            strict = ours(q, True)
            lax = ours(q, False)
            expected_lax = non_strict_expectation(theirs)
            if agree(theirs, strict, kind_only=kind_only) and agree(expected_lax, lax, kind_only=kind_only):
                continue
            qc = query(name, args, canonical=True)
            kept = qc != q and agree(opa(oracle, qc), strict, kind_only=kind_only)
            if not agree(theirs, strict, kind_only=kind_only):
                findings.append(Finding(name, q, True, theirs, strict, kept))
            if not agree(expected_lax, lax, kind_only=kind_only):
                findings.append(Finding(name, q, False, expected_lax, lax, kept))
        if progress:
            progress(name, time.monotonic() - started)
    return counts, findings


def main(argv: list[str]) -> None:
    from opa_oracle import get_oracle

    per = int(argv[1]) if len(argv) > 1 else 100
    seed = int(argv[2]) if len(argv) > 2 else 1
    prefixes = argv[3].split(",") if len(argv) > 3 else None
    names = [n for n in load_builtins() if any(n.startswith(p) for p in prefixes)] if prefixes else None
    def progress(name: str, seconds: float) -> None:
        print(f"{name} {seconds:.1f}s", file=sys.stderr, flush=True)

    counts, findings = run(get_oracle(), names, per, seed, progress=progress)
    fams: dict[str, int] = {}
    for n, c in counts.items():
        fam = n.split(".")[0] if "." in n else "core"
        fams[fam] = fams.get(fam, 0) + c
    print("calls", sum(counts.values()), json.dumps(fams, sort_keys=True))
    print("text-kept findings", sum(f.text_kept for f in findings))
    for f in findings:
        if f.text_kept:
            continue
        print(f"{f.name}\tstrict={f.strict}\t{f.query[:400]}\n\tOPA={str(f.opa)[:300]}\n\tpyrego={str(f.pyrego)[:300]}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    main(sys.argv)
