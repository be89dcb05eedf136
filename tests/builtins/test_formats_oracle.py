"""The data-format and matching builtins against OPA v1.20.2 (skipped without the oracle).

Each case runs one builtin on literal arguments in OPA (through ``object.get``
so OPA's type checker cannot reject a deliberately wrong argument) and in
pyrego, and compares values, or error codes and messages.

Deliberate differences are left out of the cases (see the modules' docs):
numbers whose text OPA keeps (``1e-07``, ``-0.0``), strings holding bytes
that are not UTF-8, json.patch failures (undefined here, as in newer OPA;
errors in v1.20.2), glob rules that newer OPA tightened,
yaml.is_valid on content after the first document, YAML output of strings
holding U+2028/U+2029/U+0085 line breaks, and a few gobwas/glob
matcher bugs (``a?`` with the delimiter as the last character).
"""

from __future__ import annotations

from typing import Any

import pytest
from oracle_harness import ours, same, theirs

from opa_oracle import Oracle
from pyrego.runtime.values import make_set

S = make_set


CASES: list[tuple[str, list[Any]]] = []


def case(name: str, *args: Any) -> None:
    CASES.append((name, list(args)))


# encodings
for s in ("", "hello", "subjects?_d", "é😀", 1):
    for op in ("base64.encode", "base64url.encode", "base64url.encode_no_pad", "hex.encode", "urlquery.encode"):
        case(op, s)
for s in ("aGVsbG8=", "aGVsbG8", "ab=c", "!!", "aGVs\nbG8=", "YQ==YQ==", "=", "aGVsbA", 1):
    case("base64.decode", s)
    case("base64.is_valid", s)
    case("base64url.decode", s)
for s in ("6869", "686", "fghijkl", "0 "):
    case("hex.decode", s)
for s in ("a%3Db%2B1+c", "%zz", "abc%", "%C3%A9"):
    case("urlquery.decode", s)
for s in ("a=1&b=2&a=3", "a=%zz;b", "&&x", "a=1;b=2"):
    case("urlquery.decode_object", s)
for o in ({"a": ["x", "y"], "b": S(["z"]), "c": "d"}, {"a": 1}, {}):
    case("urlquery.encode_object", o)
for u in (
    "http://user:pw@a.com:80/b%20c?c=d#e",
    "mailto:x@y",
    "/p?q",
    "http://[::1]:8/",
    "http://a b/",
    "%zz",
    ":x",
    "http://[fe80::1%25en0]/",
    "",
):
    case("uri.parse", u)
    case("uri.is_valid", u)

# json / yaml
for v in (None, [1, "<&>"], {"b": 1, "a": S([2, 1])}, {1: "x"}, "x\u2028"):
    case("json.marshal", v)
    case("json.marshal_with_options", v, {"indent": "  ", "prefix": "> "})
    if v != "x\u2028":  # libyaml and go-yaml fold a U+2028 line break differently
        case("yaml.marshal", v)
case("json.marshal_with_options", [1], {"bogus": 1})
for t in ('{"a": [1, 2.5]}', "{", "01", "1 2", '{"a" 1}', "trUe", "1 null", "", '"\\x"'):
    case("json.unmarshal", t)
    case("json.is_valid", t)
for t in (
    "a: yes\nb: 017\nc: 2001-12-14\nd: 1e3\n",
    "[1,2,",
    "a: [1, 2]: 3\n",
    "a: .inf\n",
    "1: a\n1.5: b\n",
    "a: &x 1\nb: *x\n",
    "- !!binary aGVsbG8=\n",
):
    case("yaml.unmarshal", t)
    case("yaml.is_valid", t)

# regex and glob
for p in ("^[a-z]+$", "(", "a**", "\\C", "x{1001}", "(?i)A", ""):
    case("regex.match", p, "abc")
    case("regex.is_valid", p)
case("regex.split", "a*", "baaac")
case("regex.find_n", "a*|b", "b", -1)
case("regex.find_n", "a", "aaa", 1.5)
case("regex.find_all_string_submatch_n", "(a)(x)?", "aa", -1)
case("regex.replace", "abc", "(?P<n>b)", "[$n][${1}][$1x][$$][$]")
case("regex.replace", "abc", "x*", "-")
case("regex.template_match", "urn:{[a-z]+}:x", "urn:abc:x", "{", "}")
case("regex.template_match", "urn:{a}}", "x", "{", "}")
for a, b in (("a.a.", ".a.a"), ("[a-z]*", "[0-9]+"), ("a+b", "a*b"), ("[a", "x"), ("[z-a]", "x")):
    case("regex.globs_match", a, b)
for p, d, v in (
    ("*.github.com", ["."], "api.github.com"),
    ("{cat,[fr]at}", [], "rat"),
    ("[!a-c]at", None, "bat"),
    ("[", None, "x"),
    ("[z-a]", None, "x"),
    ("*", ["ab"], "x"),
    ("a**b", ["."], "a.x.b"),
):
    case("glob.match", p, d, v)
case("glob.quote_meta", "*.{a,b}[c]?\\")

# units, semver, uuid
for s in ("1.5Ki", "500m", "1MI", "1x", "", "1e1000000", "1.5e3", "3.3333333333333333m"):
    case("units.parse", s)
    case("units.parse_bytes", s)
for v in ("1.0.0", "v1.2.3-rc.1+b", "1", "1.0.0-alpha..1", "99999999999999999999.0.0"):
    case("semver.is_valid", v)
    case("semver.compare", v, "1.0.0-alpha.beta")
for u in (
    "urn:uuid:000003e8-48b9-21ee-b200-325096b39f47",
    "ffffffff-ffff-1fff-bfff-ffffffffffff",
    "00000000000040008000000000000000",
    "x",
):
    case("uuid.parse", u)

# net and graph
for a, b in (
    ("10.0.0.0/8", "10.1.0.0/24"),
    ("::ffff:1.2.3.0/120", "1.2.3.5"),
    ("1.2.3.0/24", "x"),
    ("x", "1.2.3.4"),
    ("2001:db8::/32", "2001:db8::1"),
):
    case("net.cidr_contains", a, b)
    case("net.cidr_intersects", a, b)
for m in (
    ["1.2.3.4", "1.2.3.5"],
    ["192.168.1.0/24", "192.168.0.0/24"],
    ["::/0", "0.0.0.0/0"],
    ["::1"],
    S(["1.2.3.0/25", "1.2.3.128/25"]),
):
    case("net.cidr_merge", m)
case("net.cidr_expand", "::ffff:1.2.3.0/126")
case("net.cidr_contains_matches", {"a": "1.1.1.0/24", "b": ["1.1.0.0/16", 3]}, ["1.1.1.1"])
GRAPH = {"a": S(["b", "c"]), "b": S(["d"]), "c": S(["d"]), "d": S([]), "e": ["f"], "f": ["e"]}
for start in (S(["a"]), ["e"], "a"):
    case("graph.reachable", GRAPH, start)
    case("graph.reachable_paths", GRAPH, start)

# json paths and schema
for paths in (S(["a/b", "c"]), [["a", "b"]], 1, [{"x": 1}]):
    case("json.filter", {"a": {"b": 1, "x": 2}, "c": [1]}, paths)
    case("json.remove", {"a": {"b": 1, "x": 2}, "c": [1]}, paths)
case(
    "json.patch",
    {"a": S([1, 2])},
    [{"op": "add", "path": ["a", 3], "value": 3}, {"op": "move", "from": "/a", "path": "/b"}],
)
for doc, schema in (
    ({"id": "x"}, {"properties": {"id": {"type": "integer"}}, "required": ["id", "z"]}),
    ([1, 1], {"uniqueItems": True, "minItems": 3}),
    ({"a": 1}, {"type": "unknown"}),
):
    case("json.match_schema", doc, schema)
for schema in ({"type": 5}, {"pattern": "("}, {"$ref": "#/x"}, {"items": 5}):
    case("json.verify_schema", schema)

# time
for ns in (
    0,
    1669999253141828752,
    -1,
    9223372036854775808,
    [1669999253141828752, "Asia/Kolkata"],
    [0, "Nope/Zone"],
    "x",
):
    case("time.date", ns)
    case("time.clock", ns)
    case("time.weekday", ns)
    case("time.format", ns)
case("time.format", [1669999253141828752, "America/St_Johns", "Mon Jan _2 03:04:05.000 PM -07:00:00 MST 2006"])
for layout, value in (
    ("RFC3339", "2017-06-02T19:00:00-05:00"),
    ("2006 002", "2020 366"),
    ("Jan 2 2006 3:04pm", "feb 3 2013 7:54pm"),
    ("2006-01-02", "x"),
):
    case("time.parse_ns", layout, value)
for value in ("2006-01-02T15:04:05.123Z", "2262-04-11T23:47:16.854775808Z", "2006-02-30T00:00:00Z"):
    case("time.parse_rfc3339_ns", value)
for d in ("1h30m", "1.5µs", "1", "1x", "-9223372036854775808ns"):
    case("time.parse_duration_ns", d)
case("time.add_date", 1585852421593912000, 3, 9, 12)
case("time.add_date", [1615624200000000000, "America/New_York"], 0, 0, 1)
case("time.add_date", 0, 2262, 1, 1)
case("time.diff", [0, "America/New_York"], [5000000000000000, "Asia/Kolkata"])


@pytest.mark.parametrize("name,args", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_agrees_with_opa(oracle: Oracle, name: str, args: list[Any]) -> None:
    want = theirs(oracle, name, args)
    got = ours(name, args)
    if want[0] == "error" and got[0] == "error":
        code, message = got[1]
        assert want[1][0] == code
        assert want[1][1].endswith(message), (want[1][1], message)
    else:
        assert got[0] == want[0] and same(got[1], want[1]), (got, want)
