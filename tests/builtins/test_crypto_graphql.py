"""graphql.* builtins: gqlparser-shaped ASTs, OPA's error texts, validation against schemas."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pyrego.builtins.registry import BuiltinError, OperandTypeError, lookup

SCHEMA = """
type Query { hero(episode: Episode): Character, search(text: String!): [Result] }
enum Episode { NEWHOPE EMPIRE }
interface Character { name: String }
type Human implements Character { name: String, height: Float }
type Droid implements Character { name: String, primaryFunction: String }
union Result = Human | Droid
"""


def call(name: str, *args: Any) -> Any:
    b = lookup(name)
    assert b is not None, name
    return b.fn(*args)


def test_parse_query_shape() -> None:
    ast = call(
        "graphql.parse_query",
        "query Q($e: Episode! = EMPIRE) { a: hero(episode: $e) { name ... on Human { height } ...F } }",
    )
    op = ast["Operations"][0]
    assert op["Name"] == "Q" and op["Operation"] == "query"
    assert op["VariableDefinitions"] == [
        {
            "Variable": "e",
            "Type": {"NamedType": "Episode", "NonNull": True},
            "DefaultValue": {"Raw": "EMPIRE", "Kind": 7, "ExpectedTypeHasDefault": False},
            "Used": False,
        }
    ]
    field = op["SelectionSet"][0]
    assert field["Alias"] == "a" and field["Name"] == "hero"
    assert field["Arguments"] == [
        {"Name": "episode", "Value": {"Raw": "e", "Kind": 0, "ExpectedTypeHasDefault": False}}
    ]
    assert field["SelectionSet"][1] == {
        "TypeCondition": "Human",
        "SelectionSet": [{"Alias": "height", "Name": "height"}],
    }
    assert field["SelectionSet"][2] == {"Name": "F"}


def test_parse_query_values_and_comments() -> None:
    ast = call("graphql.parse_query", '# top\nquery { f(a: [1, 2.5], b: {c: "x"}, d: null, e: true, s: """ blk """) }')
    op = ast["Operations"][0]
    assert op["Comment"] == {"List": [{"Value": "# top"}]}
    args = {a["Name"]: a["Value"] for a in op["SelectionSet"][0]["Arguments"]}
    assert args["a"]["Kind"] == 8 and [c["Value"]["Raw"] for c in args["a"]["Children"]] == ["1", "2.5"]
    assert args["b"]["Children"][0]["Name"] == "c" and args["b"]["Children"][0]["Value"]["Kind"] == 3
    assert args["d"]["Kind"] == 6 and args["e"]["Kind"] == 5
    assert args["s"] == {"Raw": " blk ", "Kind": 4, "ExpectedTypeHasDefault": False}


@pytest.mark.parametrize(
    "query,message",
    [
        ("{", "Expected Name, found <EOF> in GraphQL string at location 1:2"),
        ("notanoperation Foo { field }", 'Unexpected Name "notanoperation" in GraphQL string at location 1:1'),
        ("...", "Unexpected ... in GraphQL string at location 1:1"),
        # a lexer error seen while peeking surfaces as an unexpected invalid token, as in gqlparser
        ("{ a(b: 'x') }", "Unexpected <Invalid> in GraphQL string at location 1:8"),
        ("{ a(b: 01) }", "Unexpected <Invalid> in GraphQL string at location 1:9"),
        ('{ a(b: "x', "Unexpected <Invalid> in GraphQL string at location 1:10"),
        ("fragment on on T { a }", 'Unexpected Name "on" in GraphQL string at location 1:10'),
        ("{ }", "expected at least one definition, found } in GraphQL string at location 1:3"),
    ],
)
def test_parse_query_errors(query: str, message: str) -> None:
    with pytest.raises(BuiltinError, match=re.escape(message)):
        call("graphql.parse_query", query)


def test_parse_schema_shape() -> None:
    ast = call(
        "graphql.parse_schema",
        '"desc" type T implements A & B @d { f(x: Int = 1): [String!] }\nunion U = | X | Y\nenum E { A }\n'
        "extend schema @d\ndirective @d repeatable on FIELD | OBJECT\nscalar S\ninput I { a: Int }",
    )
    t = ast["Definitions"][0]
    assert (
        t["Kind"] == "OBJECT" and t["Description"] == "desc" and t["Interfaces"] == ["A", "B"] and t["BuiltIn"] is False
    )
    assert t["Directives"] == [{"Name": "d", "Location": ""}]
    field = t["Fields"][0]
    assert field["Type"] == {"NamedType": "", "Elem": {"NamedType": "String", "NonNull": True}, "NonNull": False}
    assert field["Arguments"][0]["DefaultValue"]["Raw"] == "1"
    assert ast["Definitions"][1]["Types"] == ["X", "Y"]
    assert ast["Directives"][0]["IsRepeatable"] is True and ast["Directives"][0]["Locations"] == ["FIELD", "OBJECT"]
    assert ast["SchemaExtension"][0]["Directives"][0]["Name"] == "d"
    assert [d["Kind"] for d in ast["Definitions"]] == ["OBJECT", "UNION", "ENUM", "SCALAR", "INPUT_OBJECT"]


@pytest.mark.parametrize(
    "schema,message",
    [
        ("type Hello {}", "expected at least one definition, found } in GraphQL string at location 1:13"),
        ("extend type A", "Unexpected <EOF>"),
        ("union U = A ||", "Expected Name, found |"),
        ("directive @d on NOPE", 'Unexpected Name "NOPE"'),
        ('"d" extend type A @x', 'Unexpected String "d"'),
    ],
)
def test_parse_schema_errors(schema: str, message: str) -> None:
    with pytest.raises(BuiltinError, match=re.escape(message)):
        call("graphql.parse_schema", schema)


def test_type_errors() -> None:
    with pytest.raises(OperandTypeError, match="operand 1 must be string but got number"):
        call("graphql.parse_query", 1)
    with pytest.raises(OperandTypeError, match="operand 1 must be string but got array"):
        call("graphql.parse_schema", [])
    assert call("graphql.is_valid", 1, SCHEMA) is False
    assert call("graphql.schema_is_valid", 1) is False
    assert call("graphql.parse_and_verify", "{ x }", 1) == [False, {}, {}]


def test_is_valid_and_parse() -> None:
    good = '{ hero(episode: EMPIRE) { name ... on Droid { primaryFunction } } search(text: "x") { ... on Human { height } } }'
    assert call("graphql.is_valid", good, SCHEMA) is True
    assert call("graphql.is_valid", "{ hero { nope } }", SCHEMA) is False
    assert call("graphql.is_valid", "{ search { name } }", SCHEMA) is False  # missing required argument
    assert call("graphql.is_valid", "", SCHEMA) is True
    assert call("graphql.is_valid", "mutation { x }", SCHEMA) is False
    query_ast, schema_ast = call("graphql.parse", good, SCHEMA)
    assert query_ast == call("graphql.parse_query", good)
    assert schema_ast == call("graphql.parse_schema", SCHEMA)
    ok, q, s = call("graphql.parse_and_verify", good, SCHEMA)
    assert ok is True and q == query_ast and s == schema_ast
    assert call("graphql.parse_and_verify", "{ hero { nope } }", SCHEMA) == [False, {}, {}]
    with pytest.raises(BuiltinError, match='Cannot query field "nope" on type "Character"'):
        call("graphql.parse", "{ hero { nope } }", SCHEMA)


def test_ast_objects_are_accepted() -> None:
    query = "{ hero(episode: NEWHOPE) { name } }"
    assert call("graphql.is_valid", call("graphql.parse_query", query), call("graphql.parse_schema", SCHEMA)) is True
    bad = call("graphql.parse_query", "{ hero { height } }")
    assert call("graphql.is_valid", bad, call("graphql.parse_schema", SCHEMA)) is False


def test_schema_is_valid() -> None:
    assert call("graphql.schema_is_valid", SCHEMA) is True
    assert call("graphql.schema_is_valid", "extend type Query { a: Int }") is True  # gqlparser leniency
    assert call("graphql.schema_is_valid", "type Query { a: Nope }") is False
    assert call("graphql.schema_is_valid", "type A implements I { a: Int }\ninterface I { b: Int }") is False
    assert call("graphql.schema_is_valid", "scalar String") is False
    assert call("graphql.schema_is_valid", "type Query {") is False
    assert call("graphql.schema_is_valid", "type Query { a: Int }\ndirective @d on SCHEMA\nextend schema @d") is True
