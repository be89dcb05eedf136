"""``pyrego parse``: OPA's AST JSON and pretty tree (``opa parse``).

Where the expected output comes from, per test:

- OPA's own command tests (``cmd/parse_test.go`` of OPA v1.20): the exact
  output of ``opa parse`` for a few modules, pretty and JSON, with and without
  ``--json-include locations`` (``tests/parse_cases/*.json``, transcribed from
  those tests; ``TEMPDIR`` is the folder of the parsed file).
- OPA v1.20.2 itself, through the oracle: its ``rego.parse_module`` builtin
  returns the same AST JSON as ``opa parse --format json`` (without locations
  and annotations, which it does not read), so the values, keys and element
  orders of every module can be compared; key order is checked separately.
- Reading OPA's Go source: key order of Go structs versus Go maps
  (``v1/ast/policy.go``, ``term.go``, ``annotations_json.go``, checked against
  the struct layouts compiled into the OPA v1.20.2 library of the oracle), the
  pretty printer (``v1/ast/pretty.go`` walking with ``v1/ast/visit.go``'s
  ``BeforeAfterVisitor``), the error output of ``cmd/parse.go``
  (``internal/presentation``: a JSON ``{"errors": [...]}`` on stderr in
  every format, exit status 1).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from opa_oracle import OracleUnavailable, get_oracle
from pyrego.ast.opa_json import module_json
from pyrego.ast.pretty import go_quote, pretty_module
from pyrego.cli import main
from pyrego.errors import RegoError
from pyrego.parse.parser import parse_module
from shared_material import CONFORMANCE, SEED, need_shared

REPO = Path(__file__).resolve().parent.parent
CASES = Path(__file__).resolve().parent / "parse_cases"


def run_parse(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["parse", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write(tmp_path: Path, text: str, name: str = "x.rego") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- OPA's command tests


def test_pretty_output_as_opa_parse_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/parse_test.go TestParseExit0: the default format is OPA's pretty tree."""
    path = write(tmp_path, "package x\n\t\t\n\t\tp = 1\n\t\t")
    code, out, err = run_parse(capsys, str(path))
    assert (code, err) == (0, "")
    assert out == (
        'module\n package\n  ref\n   data\n   "x"\n rule\n  head\n   ref\n    p\n   1\n'
        "  body\n   expr index=0\n    true\n"
    )


def test_json_output_as_opa_parse_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/parse_test.go TestParseJSONOutput: exact text, Go's MarshalIndent layout,
    the head's keys in struct order (name, value, ref) and the generated body."""
    path = write(tmp_path, "package x\n\t\t\n\t\tp = 1\n\t\t")
    code, out, _ = run_parse(capsys, "--format", "json", str(path))
    assert code == 0
    expected = {
        "package": {"path": [{"type": "var", "value": "data"}, {"type": "string", "value": "x"}]},
        "rules": [
            {
                "body": [{"index": 0, "terms": {"type": "boolean", "value": True}}],
                "head": {"name": "p", "value": {"type": "number", "value": 1}, "ref": [{"type": "var", "value": "p"}]},
            }
        ],
    }
    assert out == json.dumps(expected, indent=2) + "\n"


def test_ref_head_json_as_opa_parse_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/parse_test.go TestParseRefsJSONOutput: a ref head has no name; value, assign, ref."""
    path = write(tmp_path, "package x\n\t\t\n    a.b.c := true\n\t\t")
    code, out, _ = run_parse(capsys, "--format", "json", str(path))
    assert code == 0
    head = {
        "value": {"type": "boolean", "value": True},
        "assign": True,
        "ref": [{"type": "var", "value": "a"}, {"type": "string", "value": "b"}, {"type": "string", "value": "c"}],
    }
    expected = {
        "package": {"path": [{"type": "var", "value": "data"}, {"type": "string", "value": "x"}]},
        "rules": [{"body": [{"index": 0, "terms": {"type": "boolean", "value": True}}], "head": head}],
    }
    assert out == json.dumps(expected, indent=2) + "\n"


@pytest.mark.parametrize("case", ["locations_simple", "locations_ref_head", "locations_rules_block"])
def test_locations_as_opa_parse_test(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/parse_test.go TestParseJSONOutputWithLocations, TestParseRefsJSONOutputWithLocations,
    TestParseRulesBlockJSONOutputWithLocations: every node's location with its base64 text;
    a rule read from `p = 1` has the statement's text, its body `true` sits at the value;
    `default` rules are located at the keyword alone; operators at their token."""
    path = tmp_path / "x.rego"
    path.write_text((CASES / f"{case}.rego").read_text())
    code, out, err = run_parse(capsys, "--format", "json", "--json-include", "locations", str(path))
    assert (code, err) == (0, "")
    assert out == (CASES / f"{case}.json").read_text().replace("TEMPDIR", str(tmp_path))


def located(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *flags: str) -> Any:
    path = write(tmp_path, text)
    code, out, err = run_parse(capsys, *flags, "--format", "json", "--json-include", "locations", str(path))
    assert (code, err) == (0, "")
    return json.loads(out)


def loc_text(node: dict[str, Any]) -> tuple[int, str] | None:
    """A node's location as (row, text), None when it has none."""
    loc = node.get("location")
    if loc is None:
        return None
    return loc["row"], base64.b64decode(loc.get("text", "")).decode()


def test_rule_locations_as_opa_parser_tests(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """v1/ast/parser_test.go TestRuleHeadLocation, TestRuleText and TestRuleElseText: a rule's
    text ends with its else chain, an extra body is a rule whose head copy takes the body's
    location throughout, an else head is located at the keyword (and its value when written),
    a generated value has no location, argument copies keep the first head's locations."""
    doc = located(
        tmp_path,
        capsys,
        'package pkg\n\np[x] {\n\tx = "hi"\n} {\n\tx = "bye"\n}\n\nf(x) {\n\tfalse\n} else = false {\n\ttrue\n}\n',
        "--v0-compatible",
    )
    p0, p1, f = doc["rules"]
    assert loc_text(p0) == (3, 'p[x] {\n\tx = "hi"\n}')
    assert loc_text(p0["head"]) == (3, "p[x]")
    assert loc_text(p0["head"]["key"]) == (3, "x")
    chained = (5, '{\n\tx = "bye"\n}')
    assert loc_text(p1) == loc_text(p1["head"]) == loc_text(p1["head"]["key"]) == chained
    assert loc_text(f) == (9, "f(x) {\n\tfalse\n} else = false {\n\ttrue\n}")
    assert loc_text(f["head"]) == (9, "f(x)")
    assert loc_text(f["head"]["args"][0]) == (9, "x")
    assert loc_text(f["head"]["value"]) is None
    assert loc_text(f["else"]) == (11, "else = false {\n\ttrue\n}")
    assert loc_text(f["else"]["head"]) == (11, "else = false")
    assert loc_text(f["else"]["head"]["args"][0]) == (9, "x")

    doc = located(
        tmp_path,
        capsys,
        ' package test\n\nr[x] = y {\n\tx = input.a\n\tx = "foo"\n} {\n\tx = input.b\n\tx = "bar"\n} {\n'
        '\tx = input.c\n\tx = "baz"\n}\n\nr[x] = y {\n\tx = input.d\n\tx = "qux"\n}\n',
        "--v0-compatible",
    )
    rules = doc["rules"]
    assert loc_text(rules[0]) == (3, 'r[x] = y {\n\tx = input.a\n\tx = "foo"\n}')
    assert loc_text(rules[0]["head"]) == (3, "r[x] = y")
    assert loc_text(rules[0]["head"]["value"]) == (3, "y")
    for rule, (row, name, value) in zip(rules[1:3], [(6, "b", "bar"), (9, "c", "baz")]):
        body = (row, f'{{\n\tx = input.{name}\n\tx = "{value}"\n}}')
        assert loc_text(rule) == loc_text(rule["head"]) == loc_text(rule["head"]["value"]) == body
    assert loc_text(rules[3]["head"]) == (14, "r[x] = y")

    doc = located(
        tmp_path,
        capsys,
        'package p\n\nr1 = x {\n\ta == "foo"\n} else = y {\n\tb == "bar"\n}\n\nelse {\n\tc == "baz"\n}\n\n'
        'else = {\n\t"k1": 1,\n\t"k2": 2\n} {\n\ttrue\n}\n',
        "--v0-compatible",
    )
    (rule,) = doc["rules"]
    rest = 'else {\n\tc == "baz"\n}\n\nelse = {\n\t"k1": 1,\n\t"k2": 2\n} {\n\ttrue\n}'
    assert loc_text(rule["head"]) == (3, "r1 = x")
    assert loc_text(rule["head"]["value"]) == (3, "x")
    e1 = rule["else"]
    assert loc_text(e1) == (5, 'else = y {\n\tb == "bar"\n}\n\n' + rest)
    assert loc_text(e1["head"]) == (5, "else = y")
    assert loc_text(e1["head"]["value"]) == (5, "y")
    e2 = e1["else"]
    assert loc_text(e2) == (9, rest)
    assert loc_text(e2["head"]) == (9, "else")
    assert loc_text(e2["head"]["value"]) is None
    e3 = e2["else"]
    assert loc_text(e3["head"]) == (13, 'else = {\n\t"k1": 1,\n\t"k2": 2\n}')
    assert loc_text(e3["head"]["value"]) == (13, '{\n\t"k1": 1,\n\t"k2": 2\n}')


@pytest.mark.parametrize(
    "statement",
    [
        "(1 == (2 > 3))",
        "[ ]",
        "[ 1 ]",
        "[1 , 2 , 3]",
        "{ }",
        '{ "foo": 1 }',
        '{"foo": 1, "bar": 2}',
        "{ 1 }",
        "{1 , 2 , 3}",
        "foo",
        "data.foo[x].bar",
        "data.foo.bar(x)",
        "data.foo[1](x).bar(y)[z]",
        "input = 1",
        "not x = 1",
        "x = 1 with input as 2 with input as 3",
    ],
)
def test_expression_text_as_opa_parser_test(statement: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """v1/ast/parser_test.go TestParserText: an expression's location text is exactly its
    source, whatever whitespace follows it."""
    for suffix in ("", "\t\n "):
        doc = located(tmp_path, capsys, "package p\n\np if {\n" + statement + suffix + "\n}\n")
        assert loc_text(doc["rules"][0]["body"][0]) == (4, statement)


def test_generated_parts_locations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """v1/ast/parser.go parseRules/parseHead: a `contains` rule without a body takes its
    head's location and gets the body `true` at the rule's first token; the value `true`
    of `p if ...` has no location, that of `p[x] if ...` the head's."""
    doc = located(tmp_path, capsys, "package p\n\nq contains 1\np if input.x\nr[x] if x := 1\n")
    q, p, r = doc["rules"]
    assert loc_text(q) == loc_text(q["head"]) == (3, "q contains 1")
    assert loc_text(q["body"][0]) == loc_text(q["body"][0]["terms"]) == (3, "q")
    assert loc_text(p["head"]["value"]) is None
    assert loc_text(p["body"][0]) == (4, "input.x")
    assert loc_text(r["head"]["value"]) == loc_text(r["head"]) == (5, "r[x]")


def test_comments_included_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/parse_test.go TestParseJSONOutputComments; Comment is a plain Go struct
    (``Text`` then ``Location``, location always present, text kept untrimmed)."""
    path = write(tmp_path, "package x\n\t\t\n\t\t# comment  \n\t\tp = 1\n\t\t")
    code, out, _ = run_parse(capsys, "--format", "json", "--json-include", "comments", str(path))
    assert code == 0
    assert "IGNvbW1lbnQ=" not in out  # the text keeps its trailing spaces
    comments = json.loads(out, object_pairs_hook=lambda kv: kv)
    (entry,) = dict(comments)["comments"]
    assert entry == [("Text", "IGNvbW1lbnQgIA=="), ("Location", [("file", str(path)), ("row", 3), ("col", 3)])]
    _, out, _ = run_parse(capsys, "--format", "json", str(path))
    assert "comments" in json.loads(out)
    _, out, _ = run_parse(capsys, "--format", "json", "--json-include=-comments", str(path))
    assert "comments" not in json.loads(out)
    _, out, _ = run_parse(capsys, "--json-include=-comments", str(path))
    assert "comment" not in out  # the pretty tree drops them too
    _, out, _ = run_parse(capsys, "--format", "json", "--json-include", "locations,comments", str(path))
    loc = json.loads(out)["comments"][0]["Location"]
    assert loc == {"file": str(path), "row": 3, "col": 3, "text": "IyBjb21tZW50ICA="}


def test_parse_error_is_json_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/parse_test.go TestParseExit1; cmd/parse.go prints errors with pr.JSON in
    every format: message, code, location, details (the parser's line and index)."""
    path = write(tmp_path, "???")
    for fmt in ("pretty", "json"):
        code, out, err = run_parse(capsys, "--format", fmt, str(path))
        assert (code, out) == (1, "")
        (e,) = json.loads(err)["errors"]
        assert list(e) == ["message", "code", "location", "details"]
        assert e["code"] == "rego_parse_error"
        assert e["location"] == {"file": str(path), "row": 1, "col": 1}
        assert e["details"] == {"line": "???", "idx": 0}
        assert err.startswith('{\n  "errors": [\n    {\n      "message": ')


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The loader's os error, as a message-only entry (OPA's OutputError for unknown errors)."""
    path = tmp_path / "nope.rego"
    code, out, err = run_parse(capsys, str(path))
    assert (code, out) == (1, "")
    assert json.loads(err) == {"errors": [{"message": f"open {path}: no such file or directory"}]}


def test_rego_version_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/parse_test.go TestParseCompatibleFlags: v1 by default, --v0-compatible wins."""
    path = write(tmp_path, "package test\np[v] { \n\tv := input.x\n}")
    code, _, err = run_parse(capsys, str(path))
    assert code == 1 and "`if` keyword is required before rule body" in err
    code, _, err = run_parse(capsys, "--v1-compatible", str(path))
    assert code == 1
    for flags in (["--v0-compatible"], ["--v0-compatible", "--v1-compatible"]):
        code, out, err = run_parse(capsys, *flags, "--format", "json", str(path))
        assert (code, err) == (0, "")
        # v0 `p[v] { }` is a partial set: name p, key v, ref [p] (OPA's parseRules)
        head = json.loads(out)["rules"][0]["head"]
        assert head == {"name": "p", "key": {"type": "var", "value": "v"}, "ref": [{"type": "var", "value": "p"}]}


# ---------------------------------------------------------------- key order (Go structs and maps)


def keys_in_order(text: str) -> Any:
    return json.loads(text, object_pairs_hook=lambda kv: {"__keys__": [k for k, _ in kv], **dict(kv)})


def test_key_order_of_go_structs_and_maps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Module and Head marshal as Go structs (declaration order; Head's wrapper
    struct puts ref and location after the embedded head's fields), Comment as
    a plain struct; Rule, Expr, Every, With, SomeDecl, Package, Import and terms
    as sorted Go maps (policy.go MarshalJSON methods)."""
    src = (
        "# METADATA\n# title: t\npackage p\n\nimport data.q as r\n\n"
        "f(x) := y if { some y; every a, b in x { a == b } with input as 1 } else := 2\n"
        "g contains 1\n"
        "default h := 1\n"
        "# c\n"
    )
    path = write(tmp_path, src)
    code, out, _ = run_parse(capsys, "--format", "json", "--json-include", "locations", str(path))
    assert code == 0
    doc = keys_in_order(out)
    assert doc["__keys__"] == ["package", "imports", "annotations", "rules", "comments"]
    assert doc["package"]["__keys__"] == ["location", "path"]
    assert doc["imports"][0]["__keys__"] == ["alias", "location", "path"]
    f, g, h = doc["rules"]
    assert f["__keys__"] == ["body", "else", "head", "location"]
    assert f["head"]["__keys__"] == ["name", "args", "value", "assign", "ref", "location"]
    assert f["body"][0]["__keys__"] == ["index", "location", "terms"]
    assert f["body"][0]["terms"]["__keys__"] == ["location", "symbols"]
    every = f["body"][1]
    assert every["__keys__"] == ["index", "location", "terms", "with"]
    assert every["terms"]["__keys__"] == ["body", "domain", "key", "location", "value"]
    assert every["with"][0]["__keys__"] == ["location", "target", "value"]
    assert every["terms"]["domain"]["__keys__"] == ["location", "type", "value"]
    assert g["head"]["__keys__"] == ["name", "key", "ref", "location"]
    assert h["__keys__"] == ["body", "default", "head", "location"]
    assert doc["comments"][0]["__keys__"] == ["Text", "Location"]
    assert doc["comments"][0]["Location"]["__keys__"] == ["file", "row", "col", "text"]


def test_go_json_escaping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """encoding/json escapes <, >, & and U+2028/9; number literals keep their text (json.Number)."""
    path = write(tmp_path, 'package p\n\ns := "<b>&\u2028"\nn := 1.50e3\n')
    _, out, _ = run_parse(capsys, "--format", "json", str(path))
    assert '"value": "\\u003cb\\u003e\\u0026\\u2028"' in out
    assert '"value": 1.50e3' in out


def test_annotations_in_module_and_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The parser processes METADATA (cmd/parse.go sets ProcessAnnotation): the module
    lists every annotation (annotations_json.go: a sorted Go map, scope always present);
    attachRuleAnnotations gives each rule the document annotations of its path and the
    rule annotation above the first rule of that path after it."""
    src = (
        "# METADATA\n# title: pkg\npackage p\n\n"
        "# METADATA\n# scope: document\n# title: doc\n\n"
        "# METADATA\n# title: r1\n# custom:\n#   b: [1, 2]\n#   a: {z: 1, y: null}\np := 1 if input.x\n\n"
        "p := 2 if input.y\n\n"
        "# METADATA\n# title: q\n# authors:\n# - Jane <jane@example.com>\nq := 1\n"
    )
    path = write(tmp_path, src)
    code, out, _ = run_parse(capsys, "--format", "json", str(path))
    assert code == 0
    doc = keys_in_order(out)
    pkg = {"__keys__": ["scope", "title"], "scope": "package", "title": "pkg"}
    document = {"__keys__": ["scope", "title"], "scope": "document", "title": "doc"}
    custom = {"__keys__": ["a", "b"], "a": {"__keys__": ["y", "z"], "y": None, "z": 1}, "b": [1, 2]}
    r1 = {"__keys__": ["custom", "scope", "title"], "custom": custom, "scope": "rule", "title": "r1"}
    author = {"__keys__": ["name", "email"], "name": "Jane", "email": "jane@example.com"}
    q = {"__keys__": ["authors", "scope", "title"], "authors": [author], "scope": "rule", "title": "q"}
    assert doc["annotations"] == [pkg, document, r1, q]
    p1, p2, q_rule = doc["rules"]
    assert p1["annotations"] == [document, r1]
    assert p2["annotations"] == [document]
    assert q_rule["annotations"] == [q]
    assert p1["__keys__"][0] == "annotations"
    _, out, _ = run_parse(capsys, "--format", "json", "--json-include", "locations", str(path))
    located = json.loads(out)["annotations"][0]
    assert located["location"] == {"file": str(path), "row": 1, "col": 1, "text": "IyBNRVRBREFUQQ=="}


# ---------------------------------------------------------------- OPA as oracle


def opa_ast(text: str, name: str = "x.rego") -> Any:
    """OPA's AST of ``text``: rego.parse_module marshals the module the same way."""
    result = get_oracle().evaluate({}, "x := rego.parse_module(input.f, input.s)", input={"f": name, "s": text})
    if result.is_error:
        return None
    return result.bindings[0]["x"]


def comparable(x: Any) -> Any:
    """Values with numbers as their exact decimal text; annotations left out
    (rego.parse_module does not read METADATA)."""
    if isinstance(x, dict):
        return {k: comparable(v) for k, v in x.items() if k != "annotations"}
    if isinstance(x, list):
        return [comparable(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, (int, Decimal)):
        return ("number", str(Decimal(x)))
    return x


def ours(text: str, name: str = "x.rego", rego_v1: bool = True) -> Any:
    from pyrego.go_json import marshal

    module = parse_module(text, name, rego_v1=rego_v1)
    return json.loads(marshal(module_json(module, text)), parse_float=Decimal)


@pytest.fixture(scope="module")
def oracle_ready() -> None:
    try:
        get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")


CONSTRUCTS = {
    "rules": "package p\n\na := 1\nb = 2\nc if input.x\nd contains 1\ne[x] := 1 if x := 1\nf.g.h := 2\n"
    'l["a"] if true\nl[input.y] if true\nq[x].y := 1 if x := "a"\nm.n[o] contains p if { o := 1; p := 2 }\n',
    "functions": "package p\n\nf(_) := 1\nf(x) if x > 1\ng(x, _) = y if { y := x } else = 2 if { x == 1 } else := 3\n"
    "default h(_) := 0\n",
    "else": "package p\n\nc := 1 if { input.x } else := 2 if { input.y } else := 3\nd if input.a else if input.b\n",
    "chained bodies": "package p\n\nm if { input.x } { input.y }\nn contains x if { x := 1 } { x := 2 }\n",
    "statements": 'package p\n\nr if { some x, y; x = 1; y := 2; 1 in input; "k", "v" in {"k": "v"}; print(x) }\n'
    "s if { some [a, b] in input; some k, v in input; every x in input { x > 0 } }\n"
    't if { not input.x with input.y as 1 with data.q.r as {"a": 1}; count(input.x) > 0 }\n',
    "terms": 'package p\n\na := -1\nb := -input.x\nc := [1, 2][0]\nd := (1 + 2) * 3\ne := {3, "b", x, [1], {"a": 1}, {1}, null, true, false, -1, 1.5} if x := 1\n'
    'f := {"z": 1, "a": 2, 3: 4, "a": 5}\ng := set()\nh := {}\ni := `raw\nstring`\nj := {1, 1.0, "1"}\n'
    "k := f(1).x\nl := input.a[input.b].c\nm := 100000000000000000000000000001\nn := 1.50e3\n",
    "comprehensions": "package p\n\na := [x | x := input[_]; x > 1]\nb := {x | some x in input}\nc := {k: v | some k, v in input}\n",
    "templates": 'package p\n\nu := $"{1}{"s"}{input.x + 1}{[1, 2][0]}x"\nv := $`multi {input.x}\nline`\n',
    "imports": 'package a.b["c-d"]\n\nimport data.lib.x as y\nimport input.foo\nimport rego.v1\nimport input\n'
    "import data\n\nz if { data.lib.f(1); y.z; foo.bar }\n",
    "with mocks": "package p\n\nf(x) := x\ng(x) := 1\nr if { f(1) with f as g; count([]) with count as 1 }\n",
    "not nodes": "package p\n\nimport future.keywords\n\np if { not input.x; not input.y with input as {} }\n",
    "logical keywords": "package p\n\nimport future.keywords.and\nimport future.keywords.or\nimport future.keywords.not\n\n"
    "a if { input.a or input.b and input.c }\nb if { (input.a or input.b) and input.c }\n"
    "c if { not (input.a or input.b) }\nd if { not { input.a; input.b } or input.c with input as {} }\n"
    'e if { not input.a with input as {"a": false} }\nf if { {input.a} and {input.b; input.c} }\n'
    "h if input.a or input.b\ni := [x | x := 1; not input.a or input.b]\n",
    "comments and metadata": "# METADATA\n# title: t\npackage p\n\n# a comment  \n#\n# METADATA\n# description: d\n"
    "p := 1 # trailing\n",
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_json_agrees_with_opa(name: str, oracle_ready: None) -> None:
    """Values, keys and element order as OPA v1.20.2's parser gives them."""
    text = CONSTRUCTS[name]
    expected = opa_ast(text)
    assert expected is not None, "OPA could not parse the case"
    assert comparable(ours(text)) == comparable(expected)


def test_a_long_else_chain_agrees_with_opa(oracle_ready: None, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Generated lookup tables are else chains thousands long; the JSON nests
    # one level per branch.
    from pyrego.parse.parser import deep_recursion

    text = "package p\n\nf(a) := -1 if a == -1\n" + "".join(f"else := {i} if a == {i}\n" for i in range(1500))
    with deep_recursion():  # (for the test's own JSON decoding of both sides)
        expected = opa_ast(text)
        assert expected is not None
        assert comparable(ours(text)) == comparable(expected)
    path = tmp_path / "x.rego"
    path.write_text(text)
    code, out, _ = run_parse(capsys, str(path))
    assert code == 0 and out.rstrip().endswith("1499")


def corpus() -> list[tuple[str, str, bool]]:
    """Every module of the test repositories, the seed benchmark and the conformance suite."""
    seed, conformance = need_shared(*SEED), need_shared(*CONFORMANCE)
    out: list[tuple[str, str, bool]] = []
    for path in sorted((REPO / "tests" / "repos").rglob("*.rego")):
        out.append((str(path.relative_to(REPO)), path.read_text(), "_v0" not in str(path)))
    for path in sorted(seed.rglob("*.rego")):
        out.append((str(path), path.read_text(), True))
    for path in sorted(conformance.rglob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        for i, case in enumerate(doc.get("cases") or []):
            for j, text in enumerate(case.get("modules") or []):
                out.append((f"{path.relative_to(conformance)}#{i}.{j}", text, True))
    return out


def test_corpus_converts_and_agrees_with_opa(oracle_ready: None) -> None:
    """Every module of the corpora converts (JSON with and without locations, and the
    pretty tree); every v1 module OPA parses has the same AST JSON in both."""
    from pyrego.go_json import marshal

    modules = corpus()
    assert len(modules) > 1000
    agreed, differ = 0, []
    for name, text, rego_v1 in modules:
        try:
            module = parse_module(text, name, rego_v1=rego_v1)
        except RegoError:
            continue  # cases that test parse errors
        tree = module_json(module, text, locations=True)
        marshal(tree)
        pretty_module(module_json(module, text))
        if not rego_v1:
            continue
        expected = opa_ast(text, name)
        if expected is None:
            continue
        mine = json.loads(marshal(module_json(module, text)), parse_float=Decimal)
        if comparable(mine) == comparable(expected):
            agreed += 1
        else:
            differ.append(name)
    assert differ == []
    assert agreed > 1500


def test_v0_repository_converts(capsys: pytest.CaptureFixture[str]) -> None:
    """The Rego v0 repository parses and converts with --v0-compatible in every form."""
    files = sorted((REPO / "tests" / "repos" / "k8s_admission_v0").rglob("*.rego"))
    assert files
    for path in files:
        for args in (["--format", "json", "--json-include", "locations"], []):
            code, out, err = run_parse(capsys, "--v0-compatible", *args, str(path))
            assert (code, err) == (0, ""), path
            assert out


# ---------------------------------------------------------------- the pretty tree


def test_pretty_tree_walk(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pretty.go over visit.go's BeforeAfterVisitor: an import's alias is walked even when
    empty (an indented empty line); a head shows ref, args and value; some/every/with
    nodes; objects and sets sorted; wildcards print as _; an else is a nested rule;
    comments print their type name; each line is a Printf format, so `%` shows as
    Go's missing-operand verb."""
    src = (
        "package a.b\nimport data.lib.x as y\nimport input.z\n# note\n"
        'f(_, x) := x if { some k; every v in [1] { v == 1 }; not k with input as {"b": 2, "a": {2, 1}} }\n'
        's := "100%" if true else := `%d`\n'
    )
    path = write(tmp_path, src)
    code, out, _ = run_parse(capsys, str(path))
    assert code == 0
    expected = """\
module
 package
  ref
   data
   "a"
   "b"
 import
  ref
   data
   "lib"
   "x"
  y
 import
  ref
   input
   "z"
 \x20
 rule
  head
   ref
    f
   args
    _
    x
   x
  body
   expr index=0
    somedecl
     k
   expr index=1
    every
     v
     array
      1
     body
      expr index=0
       ref
        equal
       v
       1
   expr negated index=2
    k
    with
     ref
      input
     object
      "a"
      set
       1
       2
      "b"
      2
 rule
  head
   ref
    s
   "100%!"(MISSING)
  body
   expr index=0
    true
  rule
   head
    ref
     s
    "%!d(MISSING)"
   body
    expr index=0
     true
 comment
""".replace(" \\x20\n", "  \n")
    assert out == expected


def test_go_quote() -> None:
    """strconv.Quote: printable runes as they are, control characters escaped."""
    assert go_quote('a"b\\c') == '"a\\"b\\\\c"'
    assert go_quote("é\t\x01\x7f\u00a0") == '"é\\t\\x01\\x7f\\u00a0"'


# ---------------------------------------------------------------- the command itself


def test_subprocess_and_help(tmp_path: Path) -> None:
    path = write(tmp_path, "package p\n\np := 1\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "parse", "-f", "json", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["rules"][0]["head"]["name"] == "p"
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "parse", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    for text in ("--json-include", "locations,-comments", "--v0-compatible", "{pretty,json}", "Parse Rego source file"):
        assert text in proc.stdout
