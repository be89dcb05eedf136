"""JSON schemas in the type checker: input schemas, ``# METADATA`` schemas, ``-s``.

The schema-annotated programs of :mod:`schema_gen` are compiled by OPA v1.20.2
and by pyrego with the type check on; the errors must be the same, message
for message (OPA reads a program's annotations only when it calls
``rego.metadata.*``, which every generated program does). The engine API
(``set_input_schema``, ``add_schema``, ``load_schemas``) and the ``-s`` flag of
``pyrego eval`` and ``pyrego check`` are tested on their own, since OPA's
schema sets cannot be given to the oracle.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyrego  # noqa: E402
from pyrego.cli import main  # noqa: E402
from pyrego.typecheck.schemas import SchemaError, schema_type  # noqa: E402
from schema_gen import schema_program  # noqa: E402
from test_typecheck_opa import compare, opa_outcome  # noqa: E402

PROGRAMS = int(os.environ.get("PYREGO_SCHEMA_PROGRAMS", "300"))
BATCH = 50

USER_SCHEMA = {
    "type": "object",
    "properties": {
        "user": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
        "action": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}


def _error(engine: pyrego.Engine, text: str) -> pyrego.RegoError | None:
    try:
        engine.add_policy("p.rego", text)
        engine.eval_query("data")
    except pyrego.RegoError as exc:
        return exc
    return None


# ---------------------------------------------------------------- against OPA


@pytest.mark.parametrize("start", range(0, PROGRAMS, BATCH))
def test_schema_programs_agree_with_opa(oracle: Any, start: int) -> None:
    problems = []
    for seed in range(start, min(start + BATCH, PROGRAMS)):
        text = schema_program(seed)
        verdict = compare(oracle, {"p.rego": text}, "true")
        if verdict.kind not in ("accept", "agree"):
            problems.append(f"--- seed {seed}: {verdict.kind}\n{text}{verdict.detail}")
    assert not problems, "\n".join(problems)


def test_schema_programs_are_often_refused(oracle: Any) -> None:
    """The generator is worth its salt: OPA refuses a good share of its programs."""
    refused = sum(opa_outcome(oracle, {"p.rego": schema_program(s)}, "true")[0] == "rego_type_error" for s in range(60))
    assert 15 <= refused <= 55, refused


@pytest.mark.parametrize(
    "entries",
    [
        ["- input: 5"],
        ["- input: foo.bar"],
        ["- inputx: schema.x"],
        ["- 'data.x y': schema.x"],
        ["- data.a: null"],
        ["- input: [1]"],
        ["- input"],
        ["{input: schema.x}"],
        ["- input: schema[x]"],
        ["- input.a.b[0]: schema.x"],
        ["- input: schema", "- data.q: {}"],
        ['- input: {"type": 5}'],
        ['- input: {"type": "nope"}'],
        ['- input: {"type": "object", "properties": {"x": {"$ref": "#/definitions/nope"}}}'],
    ],
)
def test_schema_annotation_errors_agree_with_opa(oracle: Any, entries: list[str]) -> None:
    text = "package p\n# METADATA\n# schemas:\n" + "".join(f"#   {e}\n" for e in entries) + "allow if input.x == 1\n\nm := rego.metadata.rule()\n"
    verdict = compare(oracle, {"p.rego": text}, "true")
    assert verdict.kind in ("accept", "agree"), verdict.detail
    want_code, want = opa_outcome(oracle, {"p.rego": text}, "true")
    engine = pyrego.Engine()
    engine.set_type_check(True)
    err = _error(engine, text)
    if want_code is None:
        assert err is None
    else:
        assert err is not None and err.code == want_code
        first = f"{err.location.file}:{err.location.row}: {err.code}: {err.message}"  # type: ignore[union-attr]
        assert first.split("\n")[0] == want[0].split("\n")[0]


# ---------------------------------------------------------------- schemas as types


@pytest.mark.parametrize(
    ("schema", "text"),
    [
        ({"type": "string"}, "string"),
        ({"type": "integer"}, "number"),
        ({"type": "null"}, "any"),
        ({"type": ["null", "string"]}, "string"),
        ({"type": "object"}, "object[any: any]"),
        ({"type": "object", "properties": {"b": {"type": "boolean"}, "a": {"type": "number"}}}, "object<a: number, b: boolean>"),
        ({"properties": {"a": {"type": "string"}}, "additionalProperties": True}, "object<a: string>"),
        ({"type": "array", "items": {"type": "string"}}, "array[string]"),
        ({"type": "array", "items": [{"type": "string"}, {"type": "number"}]}, "array<string, number>"),
        ({"anyOf": [{"type": "string"}, {"type": "number"}]}, "any<number, string>"),
        (
            {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"properties": {"a": {"type": "number"}, "b": {"type": "null"}}}]},
            "object<a: string, a: number, b: any>",
        ),
        ({"$ref": "#/definitions/n", "definitions": {"n": {"type": "object", "properties": {"next": {"$ref": "#/definitions/n"}}}}}, "object<next: recursive(#/definitions/n)>"),
        ({"$ref": "#/$defs/s", "$defs": {"s": {"type": "string"}}}, "string"),
        ({}, "any"),
    ],
)
def test_schema_types(schema: dict[str, Any], text: str) -> None:
    assert str(schema_type(schema)) == text


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": 5}, "unable to compile the schema: Invalid type. Expected: type, given: string/Array Of Strings"),
        ({"allOf": [{"type": "object"}, {"type": "array"}]}, "type checking: unable to merge these schemas"),
        ({"$ref": "#/definitions/x"}, "unable to compile the schema: Object has no key 'definitions'"),
        ([1], "unable to compile the schema: schema is array, not an object"),
    ],
)
def test_bad_schemas(schema: Any, message: str) -> None:
    with pytest.raises(SchemaError) as info:
        schema_type(schema)
    assert str(info.value) == message


# ---------------------------------------------------------------- the engine


POLICY = "package authz\n\nallow if {\n\tinput.user.nme == \"alice\"\n}\n"


def test_input_schema_types_every_rule_and_turns_the_check_on() -> None:
    engine = pyrego.Engine()
    engine.set_input_schema(USER_SCHEMA)
    err = _error(engine, POLICY)
    assert err is not None and err.code == "rego_type_error"
    assert err.message == 'undefined ref: input.user.nme\n\tinput.user.nme\n\t           ^\n\t           have: "nme"\n\t           want (one of): ["age" "name"]'
    assert (err.location.file, err.location.row) == ("p.rego", 4)  # type: ignore[union-attr]


def test_input_schema_types_queries() -> None:
    engine = pyrego.Engine()
    engine.set_input_schema(USER_SCHEMA)
    engine.add_policy("p.rego", "package authz\n\nallow if input.user.name == \"alice\"\n")
    assert engine.eval_rule("data.authz.allow", input={"user": {"name": "alice"}}) is True
    with pytest.raises(pyrego.RegoError) as info:
        engine.eval_query("upper(input.user.age)")
    assert info.value.message.startswith("upper: invalid argument(s)\n\thave: (number, ???)")


def test_removing_the_schema_accepts_the_policy_again() -> None:
    engine = pyrego.Engine()
    engine.set_input_schema(USER_SCHEMA)
    assert _error(engine, POLICY) is not None
    engine.set_input_schema(None)
    assert _error(engine, POLICY) is None
    assert engine.eval_rule("data.authz.allow", input={"user": {"nme": "alice"}}) is True


def test_compiled_programs_are_cached_per_schema() -> None:
    """The same policy text with and without a schema is two programs (the cache key has the schemas)."""
    ok = pyrego.Engine()
    ok.set_type_check(True)
    assert _error(ok, POLICY) is None
    typed = pyrego.Engine()
    typed.set_input_schema(USER_SCHEMA)
    assert _error(typed, POLICY) is not None
    other = pyrego.Engine()
    other.set_input_schema({"type": "object", "properties": {"user": {"type": "object"}}})
    assert _error(other, POLICY) is None


def test_named_schemas_for_metadata() -> None:
    text = "package authz\n\n# METADATA\n# schemas:\n#   - input.user: schema.people.user\nallow if {\n\tinput.user.age == \"1\"\n}\n"
    engine = pyrego.Engine()
    engine.add_schema("people.user", USER_SCHEMA["properties"]["user"])  # type: ignore[index]
    err = _error(engine, text)
    assert err is not None
    assert err.message == "match error\n\tleft  : number\n\tright : string"
    # Not given: an undefined schema, once some schema set is given ...
    engine = pyrego.Engine()
    engine.add_schema("other", {"type": "string"})
    err = _error(engine, text)
    assert err is not None and err.message == "undefined schema: schema.people.user"
    # ... and ignored without one, as OPA does.
    engine = pyrego.Engine()
    engine.set_type_check(True)
    assert _error(engine, text) is None


def test_schema_overrides_keep_the_rest_of_the_document() -> None:
    """``input.user: {...}`` in a rule keeps the input schema's other keys."""
    text = (
        "package authz\n\n# METADATA\n# schemas:\n#   - input.user: {\"type\": \"string\"}\n"
        "allow if {\n\tupper(input.user) == \"A\"\n\tinput.acton == \"read\"\n}\n"
    )
    engine = pyrego.Engine()
    engine.set_input_schema(USER_SCHEMA)
    err = _error(engine, text)
    assert err is not None
    messages = [e.message.split("\n")[0] for e in getattr(err, "errors", [err])]
    assert messages == ["undefined ref: input.acton"]


def test_threads_share_a_typed_engine() -> None:
    from concurrent.futures import ThreadPoolExecutor

    engine = pyrego.Engine()
    engine.set_input_schema(USER_SCHEMA)
    engine.add_policy("p.rego", "package authz\n\nallow if input.user.name == \"alice\"\n")
    names = ["alice", "bob"] * 200
    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda n: engine.clone().eval_rule("data.authz.allow", input={"user": {"name": n}}) is True, names))
    assert got == [n == "alice" for n in names]


def test_bad_arguments() -> None:
    engine = pyrego.Engine()
    with pytest.raises(TypeError):
        engine.set_input_schema("{}")
    with pytest.raises(ValueError):
        engine.add_schema("", {})


# ---------------------------------------------------------------- files and the command line


@pytest.fixture
def schema_dir(tmp_path: Path) -> Path:
    (tmp_path / "schemas" / "people").mkdir(parents=True)
    (tmp_path / "schemas" / "input.json").write_text(json.dumps(USER_SCHEMA))
    (tmp_path / "schemas" / "people" / "user.yaml").write_text("type: object\nproperties:\n  age:\n    type: integer\n")
    (tmp_path / "p.rego").write_text(POLICY)
    (tmp_path / "q.rego").write_text(
        "package q\n\n# METADATA\n# schemas:\n#   - input: schema.input\n#   - input.user: schema.people.user\n"
        "allow if {\n\tinput.user.age == \"x\"\n\tinput.action == \"read\"\n}\n"
    )
    return tmp_path


def test_load_schemas_file_and_folder(schema_dir: Path) -> None:
    engine = pyrego.Engine()
    engine.load_schemas(schema_dir / "schemas" / "input.json")
    assert _error(engine, POLICY) is not None
    engine = pyrego.Engine()
    engine.load_schemas(schema_dir / "schemas")
    assert _error(engine, POLICY) is None  # a folder's input.json is schema.input, not input's type
    err = _error(engine, (schema_dir / "q.rego").read_text())
    assert err is not None
    assert err.message == "match error\n\tleft  : number\n\tright : string"
    with pytest.raises(pyrego.DataError):
        engine.load_schemas(schema_dir / "missing")


def test_eval_schema_flag(schema_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["eval", "-d", str(schema_dir / "p.rego"), "-s", str(schema_dir / "schemas" / "input.json"), "data.authz.allow"])
    out = json.loads(capsys.readouterr().out)
    assert status == 2
    assert [e["code"] for e in out["errors"]] == ["rego_type_error"]
    assert out["errors"][0]["location"]["row"] == 4
    status = main(["eval", "-d", str(schema_dir / "p.rego"), "data.authz.allow"])
    assert status == 0
    capsys.readouterr()


def test_check_schema_flag(schema_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", "-s", str(schema_dir / "schemas"), str(schema_dir / "q.rego"), str(schema_dir / "p.rego")])
    err = capsys.readouterr().err
    assert status == 1
    assert err.startswith(f"1 error occurred: {schema_dir / 'q.rego'}:8: rego_type_error: match error")
    assert main(["check", str(schema_dir / "q.rego")]) == 0  # schema refs are not followed without -s
    assert main(["check", "-s", str(schema_dir / "nope"), str(schema_dir / "q.rego")]) == 1
    assert "no such file or directory" in capsys.readouterr().err


def test_readme_check_example(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The `pyrego check -s schemas/ policies/` example of README.md, as printed (and as OPA words it)."""
    monkeypatch.chdir(Path(__file__).resolve().parent / "fixtures" / "schemas_example")
    assert main(["check", "-s", "schemas/", "policies/"]) == 1
    err = capsys.readouterr().err
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert err.strip() in readme
    assert err.startswith("1 error occurred: policies/admission.rego:8: rego_type_error: undefined ref: input.request.object.spec.containerz")


def test_hostile_schemas_end_cleanly() -> None:
    """Schemas a caller does not control: nested past Python's stack, very wide,
    references in a loop. Each ends with a pyrego error or a result, never a
    crash or a hang (the report of a missing key once scanned the keys
    quadratically: 100,000 properties took minutes)."""
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"a": deep}}
    engine = pyrego.Engine()
    with pytest.raises(pyrego.DataError):
        engine.set_input_schema(deep)

    wide = {"type": "object", "properties": {f"k{i}": {"type": "string"} for i in range(50_000)}}
    engine = pyrego.Engine()
    engine.set_input_schema(wide)
    err = _error(engine, "package p\n\nr if input.nope == 1\n")
    assert err is not None and err.message.startswith("undefined ref: input.nope")
    assert err.message.count('"k') == 50_000  # every key, once

    for looping in ({"$ref": "#/definitions/a", "definitions": {"a": {"$ref": "#/definitions/b"}, "b": {"$ref": "#/definitions/a"}}}, {"$ref": "#"}):
        engine = pyrego.Engine()
        engine.set_input_schema(looping)
        assert _error(engine, "package p\n\nr if input.a == 1\n") is None


def test_type_checked_queries_from_many_threads() -> None:
    """Queries are type-checked against one program's rule types from many
    threads at once (the comprehensions' memo is shared by the program)."""
    from concurrent.futures import ThreadPoolExecutor

    engine = pyrego.Engine()
    engine.set_input_schema(USER_SCHEMA)
    engine.add_policy("p.rego", "package authz\n\nnames := {n | some n in [\"alice\", \"bob\"]}\n\nallow if input.user.name in names\n")

    def ask(i: int) -> tuple[bool, bool]:
        good = engine.eval_query(f"x := [n | some n in data.authz.names; n != \"{i}\"]; count(x) == 2", input={"user": {"name": "alice"}})
        try:
            engine.eval_query(f"y := [n | n := input.user.age + \"{i}\"]")
            refused = False
        except pyrego.RegoTypeError:
            refused = True
        return bool(good["result"]), refused

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(ask, range(400)))
    assert outcomes == [(True, True)] * 400
