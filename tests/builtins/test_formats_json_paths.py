"""json.filter, json.remove, json.patch, json.verify_schema and json.match_schema."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup
from pyrego.runtime.values import UNDEF, make_set


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


def error(name: str, *args: Any) -> BuiltinError:
    with pytest.raises(BuiltinError) as info:
        call(name, *args)
    return info.value


DOC = {"a": {"b": {"c": 7, "d": 8, "x": 0}}, "e": 9}


def test_filter() -> None:
    assert call("json.filter", {}, make_set(["a/b"])) == {}
    assert call("json.filter", {"a": [{"b": 7, "c": 8}, {"d": 9}]}, make_set(["a/0/b", "a/1"])) == {
        "a": [{"b": 7}, {"d": 9}]
    }
    assert call("json.filter", DOC, make_set(["a/b/d", ("a", "b", "c")])) == {"a": {"b": {"c": 7, "d": 8}}}
    assert call("json.filter", DOC, ["a/b/d", ["a", "b", "c"]]) == {"a": {"b": {"c": 7, "d": 8}}}
    # JSON pointer escapes, and every leading "/" is dropped
    assert call("json.filter", {"a/b": 1, "~": 2, "c": 3}, ["/a~1b", "//~0"]) == {"a/b": 1, "~": 2}
    # sets are filtered by member; array-form paths keep their segment types
    assert call("json.filter", {"s": make_set([1, 2, "x"])}, [["s", 2], ["s", "x"]]) == {"s": make_set([2, "x"])}
    assert call("json.filter", {1: {"x": 1}, "1": 2}, [[1, "x"]]) == {1: {"x": 1}}


def test_remove() -> None:
    assert call("json.remove", DOC, make_set(["a/b/c"])) == {"a": {"b": {"d": 8, "x": 0}}, "e": 9}
    assert call("json.remove", DOC, make_set(["a/b/c", "e"])) == {"a": {"b": {"d": 8, "x": 0}}}
    assert call("json.remove", {"a": {"b": 7}, "c": 1}, make_set(["a", "a/b"])) == {"c": 1}
    assert call("json.remove", {"a": 7}, make_set([])) == {"a": 7}
    assert call("json.remove", {"a": [{"b": 7, "c": 8}, {"d": 9}]}, make_set(["a/0/b", "a/1"])) == {"a": [{"c": 8}]}
    assert call("json.remove", DOC, make_set([("a", "b", "c"), ("e",)])) == {"a": {"b": {"d": 8, "x": 0}}}
    original = {"a": {"b": 1, "c": 2}}
    call("json.remove", original, ["a/b"])
    assert original == {"a": {"b": 1, "c": 2}}  # arguments are never changed


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("json.remove", ("x", ["a"]), "operand 1 must be object but got string"),
        ("json.remove", ({"a": 1}, 1), "operand 2 must be one of {set, array} but got number"),
        (
            "json.remove",
            ({"a": 1}, [{"a": 1}]),
            "operand 2 must be one of {set, array} containing string paths or array of path segments but got object",
        ),
        ("json.filter", ([1], ["a"]), "operand 1 must be object but got array"),
    ],
)
def test_path_errors(name: str, args: tuple[Any, ...], message: str) -> None:
    err = error(name, *args)
    assert isinstance(err, OperandTypeError)
    assert str(err) == message


@pytest.mark.parametrize(
    ("doc", "patch", "want"),
    [
        ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"foo": "bar", "baz": "qux"}),
        ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
        ({"foo": [1, 2]}, [{"op": "add", "path": "/foo/-", "value": 3}], {"foo": [1, 2, 3]}),
        ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
        ({"baz": "qux"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo"}),
        (
            {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
            [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
            {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
        ),
        (
            {"foo": ["all", "grass", "cows", "eat"]},
            [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
            {"foo": ["all", "cows", "eat", "grass"]},
        ),
        (
            {"a": 1},
            [{"op": "copy", "from": "/a", "path": "/b"}, {"op": "test", "path": "/b", "value": 1.0}],
            {"a": 1, "b": 1},
        ),
        (1, [{"op": "add", "path": "", "value": 9}], 9),
        ({"a": 1}, [{"op": "remove", "path": ""}, {"op": "add", "path": "", "value": 3}], 3),
        ([1, 2, 3], [{"op": "add", "path": [1], "value": 9}], [1, 9, 2, 3]),
        # sets: a member is its own path segment
        ({"a": make_set([1, 2])}, [{"op": "add", "path": ["a", 3], "value": 3}], {"a": make_set([1, 2, 3])}),
        ({"a": make_set([1, 2])}, [{"op": "remove", "path": ["a", 2]}], {"a": make_set([1])}),
        (
            {"s": make_set([{"a": 1}])},
            [{"op": "add", "path": ["s", {"a": 1}, "b"], "value": 2}],
            {"s": make_set([{"a": 1, "b": 2}])},
        ),
        ({1: 2}, [{"op": "replace", "path": [1], "value": 3}], {1: 3}),
    ],
)
def test_patch(doc: Any, patch: list[Any], want: Any) -> None:
    assert call("json.patch", doc, patch) == want


@pytest.mark.parametrize(
    ("doc", "patch"),
    [
        ({"q": {"bar": 2}}, [{"op": "add", "path": "/a/b", "value": 1}]),
        ({"foo": "bar"}, [{"op": "test", "path": "/foo", "value": "baz"}]),
        ([1, 2, 3], [{"op": "add", "path": "1.2", "value": "foo"}]),
        ([1, 2], [{"op": "add", "path": "/3", "value": 1}]),
        ([1, 2], [{"op": "remove", "path": "/01"}]),
        ([1], [{"op": "remove", "path": "/-"}]),
        ({"a": make_set([1, 2])}, [{"op": "add", "path": "/a/3", "value": 3}]),
        ({"a": {"b": 1}}, [{"op": "move", "from": "/a", "path": "/a/c"}]),
        ({"a": 1}, [{"op": "remove", "path": ""}]),
        ({"a": 1}, [{"op": "bogus", "path": "/a"}]),
        ({"a": 1}, [{"op": "add", "path": "/b"}]),
        ({"a": 1}, [{"op": "copy", "path": "/b"}]),
        ({"a": 1}, [{"path": "/b"}]),
        ({"a": 1}, [{"op": "add", "path": None, "value": 1}]),
        ({"a": 1}, [1]),
    ],
)
def test_patch_failures_are_undefined(doc: Any, patch: list[Any]) -> None:
    # A patch that cannot apply is a builtin error, as in OPA (the expression
    # is undefined, or the evaluation fails with strict builtin errors); never a value.
    try:
        result = call("json.patch", doc, patch)
    except BuiltinError:
        return
    assert result is UNDEF


def test_patch_operands() -> None:
    assert str(error("json.patch", {}, "x")) == "operand 2 must be array but got string"
    doc = {"a": [1, 2]}
    call("json.patch", doc, [{"op": "remove", "path": "/a/0"}])
    assert doc == {"a": [1, 2]}


SCHEMA = {"properties": {"id": {"type": "integer"}}, "required": ["id"]}


def test_match_schema() -> None:
    assert call("json.match_schema", {"id": 5}, SCHEMA) == [True, []]
    assert call("json.match_schema", '{"id": 5}', SCHEMA) == [True, []]
    assert call("json.match_schema", {"id": 5}, '{"properties": {"id": {"type": "integer"}}}') == [True, []]
    assert call("json.match_schema", {"id": "foo"}, SCHEMA) == [
        False,
        [
            {
                "desc": "Invalid type. Expected: integer, given: string",
                "error": "id: Invalid type. Expected: integer, given: string",
                "field": "id",
                "type": "invalid_type",
            }
        ],
    ]
    assert call("json.match_schema", {}, {"required": ["id"]})[1] == [
        {"desc": "id is required", "error": "(Root): id is required", "field": "(Root)", "type": "required"}
    ]
    assert call("json.match_schema", {"value": "allow"}, {"enum": []})[0] is False


def test_match_schema_keywords() -> None:
    result = call("json.match_schema", [1, 1], {"minItems": 3, "uniqueItems": True, "contains": {"type": "string"}})
    assert [e["type"] for e in result[1]] == ["array_min_items", "unique", "contains", "invalid_type"]
    assert result[1][1]["desc"] == "array items[0,1] must be unique"
    result = call("json.match_schema", {"v": 7}, {"properties": {"v": {"minimum": 10, "maximum": 1, "multipleOf": 2}}})
    assert [e["desc"] for e in result[1]] == [
        "Must be a multiple of 2",
        "Must be less than or equal to 1",
        "Must be greater than or equal to 10",
    ]
    result = call(
        "json.match_schema", {"v": 5}, {"properties": {"v": {"anyOf": [{"type": "string"}, {"minimum": 10}]}}}
    )
    assert [e["type"] for e in result[1]] == ["number_any_of", "number_gte"]
    result = call("json.match_schema", {"aB": 1}, {"propertyNames": {"pattern": "^[a-z]+$"}})
    assert [e["error"] for e in result[1]] == [
        '(Root): Property name of "aB" does not match',
        "(Root): Does not match pattern '^[a-z]+$'",
    ]


def test_match_schema_errors() -> None:
    assert str(error("json.match_schema", {"id": "foo"}, {"properties": {"id": {"type": "unknown"}}})) == (
        "has a primitive type that is NOT VALID -- given: /unknown/ Expected valid values are:"
        "[array boolean integer number null object string]"
    )
    assert str(error("json.match_schema", "{", SCHEMA)) == "invalid JSON string"
    assert str(error("json.match_schema", 5, SCHEMA)) == "wrong type, expected string or object"


@pytest.mark.parametrize(
    ("schema", "want"),
    [
        (SCHEMA, [True, None]),
        ({"enum": []}, [True, None]),
        ({"type": 5}, [False, "jsonschema: Invalid type. Expected: type, given: string/Array Of Strings"]),
        ({"properties": 5}, [False, "jsonschema: Properties must be of type object"]),
        ({"minimum": "a"}, [False, "jsonschema: minimum must be of a Number"]),
        ({"required": "a"}, [False, "jsonschema: required must be of an array"]),
        ({"pattern": "("}, [False, "jsonschema: pattern must be a valid regex"]),
        ({"$ref": "#/nope"}, [False, "jsonschema: Object has no key 'nope'"]),
        ({"minLength": -1}, [False, "jsonschema: minLength must be greater than or equal to 0"]),
        (
            {"minProperties": 3, "maxProperties": 1},
            [False, "jsonschema: minProperties cannot be greater than maxProperties"],
        ),
        ("{", [False, "jsonschema: invalid JSON string"]),
        (5, [False, "jsonschema: wrong type, expected string or object"]),
        ([1], [False, "jsonschema: schema is invalid"]),
    ],
)
def test_verify_schema(schema: Any, want: list[Any]) -> None:
    assert call("json.verify_schema", schema) == want
