"""A GraphQL lexer and parser that build the AST OPA returns (no builtins here).

OPA parses GraphQL with gqlparser and returns ``json.Marshal`` of its Go AST
structs, so this parser follows gqlparser's grammar, error texts and error
positions, and builds dicts with the Go field names (``SelectionSet``,
``VariableDefinitions``, ``Kind`` as Go's enum number...). Positions are not
kept (OPA prunes them).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from pyrego.builtins.graphql_lexer import (
    BLOCK_STRING,
    BLOCK_VALUE,
    BOOLEAN_VALUE,
    COMMENT,
    DIRECTIVE_LOCATIONS,
    ENUM_VALUE,
    EOF,
    FLOAT,
    FLOAT_VALUE,
    INT,
    INT_VALUE,
    LIST_VALUE,
    NAME,
    NULL_VALUE,
    OBJECT_VALUE,
    STRING,
    STRING_VALUE,
    VARIABLE,
    GraphQLSyntaxError,
    Lexer,
    Token,
)

__all__ = ["GraphQLSyntaxError", "Parser", "parse_query", "parse_schema", "prune"]


class Parser:
    """gqlparser's recursive-descent parser; the first error wins."""

    def __init__(self, text: str) -> None:
        self.lexer = Lexer(text)
        self.err: GraphQLSyntaxError | None = None
        self.peeked = False
        self.peek_token = Token(EOF, "", 1, 1)
        self.peek_error: GraphQLSyntaxError | None = None
        self.prev = Token(EOF, "", 1, 1)
        # The comment group just before the peeked token (gqlparser attaches it to nodes).
        self.comment: dict[str, Any] | None = None
        self.last_comment: dict[str, Any] | None = None

    # -- token handling

    def peek(self) -> Token:
        if self.err is not None:
            return self.prev
        if not self.peeked:
            tok, err = self.lexer.read()
            if tok.kind == COMMENT and err is None:
                group = []
                while tok.kind == COMMENT and err is None:
                    group.append({"Value": tok.value})
                    tok, err = self.lexer.read()
                self.comment = {"List": group}
            self.peek_token, self.peek_error = tok, err
            self.peeked = True
        return self.peek_token

    def next(self) -> Token:
        if self.err is not None:
            return self.prev
        self.peek()
        self.peeked = False
        self.last_comment, self.comment = self.comment, None
        self.prev, self.err = self.peek_token, self.peek_error
        return self.prev

    def comment_here(self) -> dict[str, Any] | None:
        """The comment group before the next token."""
        self.peek()
        return self.comment if self.err is None else None

    def error(self, tok: Token, message: str) -> None:
        if self.err is None:
            self.err = GraphQLSyntaxError(message, tok.line, tok.column)

    def expect_keyword(self, value: str) -> Token:
        tok = self.peek()
        if tok.kind == NAME and tok.value == value:
            return self.next()
        self.error(tok, f"Expected {json.dumps(value)}, found {tok}")
        return tok

    def expect(self, kind: str) -> Token:
        tok = self.peek()
        if tok.kind == kind:
            return self.next()
        self.error(tok, f"Expected {kind}, found {tok.kind}")
        return tok

    def skip(self, kind: str) -> bool:
        if self.err is not None:
            return False
        if self.peek().kind != kind:
            return False
        self.next()
        return True

    def unexpected(self, tok: Token | None = None) -> None:
        tok = tok if tok is not None else self.peek()
        self.error(tok, f"Unexpected {tok}")

    def many(self, start: str, end: str, cb: Callable[[], None]) -> None:
        if not self.skip(start):
            return
        while self.peek().kind != end and self.err is None:
            cb()
        self.next()

    def some(self, start: str, end: str, cb: Callable[[], None]) -> dict[str, Any] | None:
        if not self.skip(start):
            return None
        called = False
        while self.peek().kind != end and self.err is None:
            called = True
            cb()
        if not called:
            self.error(self.peek(), f"expected at least one definition, found {self.peek().kind}")
            return None
        comment = self.comment_here()
        self.next()
        return comment

    def name(self) -> str:
        return self.expect(NAME).value

    # -- query documents

    def query_document(self) -> dict[str, Any]:
        operations: list[Any] = []
        fragments: list[Any] = []
        while self.peek().kind != EOF:
            if self.err is not None:
                break
            tok = self.peek()
            if tok.kind == NAME and tok.value in ("query", "mutation", "subscription"):
                operations.append(self.operation_definition())
            elif tok.kind == NAME and tok.value == "fragment":
                fragments.append(self.fragment_definition())
            elif tok.kind == "{":
                operations.append(self.operation_definition())
            else:
                self.unexpected()
        return {"Operations": operations or None, "Fragments": fragments or None}

    def operation_definition(self) -> dict[str, Any]:
        comment = self.comment_here()
        if self.peek().kind == "{":
            # gqlparser keeps no comment on the shorthand form
            return _operation("query", "", None, None, self.required_selection_set(), None)
        op = self.operation_type()
        name = self.next().value if self.peek().kind == NAME else ""
        variables = self.variable_definitions()
        directives = self.directives(False)
        return _operation(op, name, variables, directives, self.required_selection_set(), comment)

    def operation_type(self) -> str:
        tok = self.next()
        if tok.value in ("query", "mutation", "subscription"):
            return tok.value
        self.unexpected(tok)
        return ""

    def variable_definitions(self) -> list[Any] | None:
        defs: list[Any] = []
        self.many("(", ")", lambda: defs.append(self.variable_definition()))
        return defs or None

    def variable_definition(self) -> dict[str, Any]:
        comment = self.comment_here()
        variable = self.variable()
        self.expect(":")
        typ = self.type_reference()
        default = self.value_literal(True) if self.skip("=") else None
        return {
            "Variable": variable,
            "Type": typ,
            "DefaultValue": default,
            "Directives": self.directives(False),
            "Comment": comment,
            "Definition": None,
            "Used": False,
        }

    def variable(self) -> str:
        self.expect("$")
        return self.name()

    def optional_selection_set(self) -> list[Any] | None:
        selections: list[Any] = []
        self.some("{", "}", lambda: selections.append(self.selection()))
        return selections or None

    def required_selection_set(self) -> list[Any] | None:
        if self.peek().kind != "{":
            self.error(self.peek(), f"Expected {{, found {self.peek().kind}")
            return None
        return self.optional_selection_set()

    def selection(self) -> dict[str, Any]:
        if self.peek().kind == "...":
            return self.fragment()
        return self.field()

    def field(self) -> dict[str, Any]:
        comment = self.comment_here()
        alias = self.name()
        name = self.name() if self.skip(":") else alias
        arguments = self.arguments(False)
        directives = self.directives(False)
        selection_set = self.optional_selection_set() if self.peek().kind == "{" else None
        return {
            "Alias": alias,
            "Name": name,
            "Arguments": arguments,
            "Directives": directives,
            "SelectionSet": selection_set,
            "Comment": comment,
            "Definition": None,
            "ObjectDefinition": None,
        }

    def arguments(self, is_const: bool) -> list[Any] | None:
        args: list[Any] = []
        self.many("(", ")", lambda: args.append(self.argument(is_const)))
        return args or None

    def argument(self, is_const: bool) -> dict[str, Any]:
        comment = self.comment_here()
        name = self.name()
        self.expect(":")
        return {"Name": name, "Value": self.value_literal(is_const), "Comment": comment}

    def fragment(self) -> dict[str, Any]:
        comment = self.comment_here()
        self.expect("...")
        tok = self.peek()
        if tok.kind == NAME and tok.value != "on":
            name = self.fragment_name()
            return {
                "Name": name,
                "Directives": self.directives(False),
                "Comment": comment,
                "ObjectDefinition": None,
                "Definition": None,
            }
        type_condition = ""
        if self.peek().value == "on":
            self.next()
            type_condition = self.name()
        directives = self.directives(False)
        return {
            "TypeCondition": type_condition,
            "Directives": directives,
            "SelectionSet": self.required_selection_set(),
            "Comment": comment,
            "ObjectDefinition": None,
        }

    def fragment_definition(self) -> dict[str, Any]:
        comment = self.comment_here()
        self.expect_keyword("fragment")
        name = self.fragment_name()
        variables = self.variable_definitions()
        self.expect_keyword("on")
        type_condition = self.name()
        directives = self.directives(False)
        return {
            "Name": name,
            "VariableDefinition": variables,
            "TypeCondition": type_condition,
            "Directives": directives,
            "SelectionSet": self.required_selection_set(),
            "Comment": comment,
            "Definition": None,
        }

    def fragment_name(self) -> str:
        if self.peek().value == "on":
            self.unexpected()
            return ""
        return self.name()

    def value_literal(self, is_const: bool) -> dict[str, Any] | None:
        tok = self.peek()
        kind: int
        if tok.kind == "[":
            return self.list_value(is_const)
        if tok.kind == "{":
            return self.object_value(is_const)
        if tok.kind == "$":
            if is_const:
                self.unexpected()
                return None
            return _value(self.variable(), VARIABLE, None)
        if tok.kind == INT:
            kind = INT_VALUE
        elif tok.kind == FLOAT:
            kind = FLOAT_VALUE
        elif tok.kind == STRING:
            kind = STRING_VALUE
        elif tok.kind == BLOCK_STRING:
            kind = BLOCK_VALUE
        elif tok.kind == NAME:
            kind = (
                BOOLEAN_VALUE if tok.value in ("true", "false") else NULL_VALUE if tok.value == "null" else ENUM_VALUE
            )
        else:
            self.unexpected()
            return None
        self.next()
        return _value(tok.value, kind, None)

    def list_value(self, is_const: bool) -> dict[str, Any]:
        values: list[Any] = []
        self.many("[", "]", lambda: values.append({"Name": "", "Value": self.value_literal(is_const)}))
        return _value("", LIST_VALUE, values or None)

    def object_value(self, is_const: bool) -> dict[str, Any]:
        fields: list[Any] = []

        def field() -> None:
            comment = self.comment_here()
            name = self.name()
            self.expect(":")
            fields.append({"Name": name, "Value": self.value_literal(is_const), "Comment": comment})

        self.many("{", "}", field)
        return _value("", OBJECT_VALUE, fields or None)

    def directives(self, is_const: bool) -> list[Any] | None:
        out: list[Any] = []
        while self.peek().kind == "@":
            if self.err is not None:
                break
            self.expect("@")
            name = self.name()
            out.append(
                {
                    "Name": name,
                    "Arguments": self.arguments(is_const),
                    "ParentDefinition": None,
                    "Definition": None,
                    "Location": "",
                }
            )
        return out or None

    def type_reference(self) -> dict[str, Any]:
        typ: dict[str, Any] = {"NamedType": "", "Elem": None, "NonNull": False}
        if self.skip("["):
            typ["Elem"] = self.type_reference()
            self.expect("]")
        else:
            typ["NamedType"] = self.name()
        if self.skip("!"):
            typ["NonNull"] = True
        return typ

    # -- schema documents

    def schema_document(self) -> dict[str, Any]:
        doc: dict[str, list[Any]] = {
            "Schema": [],
            "SchemaExtension": [],
            "Directives": [],
            "Definitions": [],
            "Extensions": [],
        }
        while self.peek().kind != EOF:
            if self.err is not None:
                break
            description = ""
            before = None
            if self.peek().kind in (BLOCK_STRING, STRING):
                before = self.comment_here()
                description = self.next().value
            after = self.comment_here()
            tok = self.peek()
            if tok.kind != NAME:
                self.unexpected()
                break
            comments = {"BeforeDescriptionComment": before, "AfterDescriptionComment": after}
            if tok.value in ("scalar", "type", "interface", "union", "enum", "input"):
                doc["Definitions"].append(self.type_definition(description, comments=comments))
            elif tok.value == "schema":
                doc["Schema"].append(self.schema_definition(description) | comments)
            elif tok.value == "directive":
                doc["Directives"].append(self.directive_definition(description) | comments)
            elif tok.value == "extend":
                if description:
                    self.unexpected(self.prev)
                self.type_system_extension(doc, after)
            else:
                self.unexpected()
                break
        out: dict[str, Any] = {k: (v or None) for k, v in doc.items()}
        out["Comment"] = self.comment_here() if self.err is None else None
        return out

    def description(self) -> str:
        if self.peek().kind not in (BLOCK_STRING, STRING):
            return ""
        return self.next().value

    def schema_definition(self, description: str) -> dict[str, Any]:
        self.expect_keyword("schema")
        directives = self.directives(True)
        ops: list[Any] = []
        end = self.some("{", "}", lambda: ops.append(self.operation_type_definition()))
        return {
            "Description": description,
            "Directives": directives,
            "OperationTypes": ops or None,
            "EndOfDefinitionComment": end,
        }

    def operation_type_definition(self) -> dict[str, Any]:
        comment = self.comment_here()
        op = self.operation_type()
        self.expect(":")
        return {"Operation": op, "Type": self.name(), "Comment": comment}

    def type_definition(
        self, description: str, extension: bool = False, comments: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        keyword = self.peek().value
        self.expect_keyword(keyword)
        d = _definition(keyword, description, self.name())
        d.update(comments or {})
        if keyword in ("type", "interface"):
            if keyword == "type" or not extension:
                d["Interfaces"] = self.implements_interfaces()
            d["Directives"] = self.directives(True)
            d["Fields"], d["EndOfDefinitionComment"] = self.fields_definition()
        elif keyword == "union":
            d["Directives"] = self.directives(True)
            d["Types"] = self.union_members()
        elif keyword == "enum":
            d["Directives"] = self.directives(True)
            d["EnumValues"], d["EndOfDefinitionComment"] = self.enum_values()
        elif keyword == "input":
            d["Directives"] = self.directives(not extension)
            d["Fields"], d["EndOfDefinitionComment"] = self.input_fields()
        else:
            d["Directives"] = self.directives(True)
        if extension and not any(d[k] for k in ("Interfaces", "Directives", "Fields", "Types", "EnumValues")):
            self.unexpected()
        return d

    def implements_interfaces(self) -> list[str] | None:
        types: list[str] = []
        if self.peek().value == "implements":
            self.next()
            self.skip("&")
            types.append(self.name())
            while self.skip("&") and self.err is None:
                types.append(self.name())
        return types or None

    def fields_definition(self) -> tuple[list[Any] | None, Any]:
        defs: list[Any] = []
        end = self.some("{", "}", lambda: defs.append(self.field_definition()))
        return defs or None, end

    def _described(self) -> tuple[str, Any, Any]:
        """A description with the comments before it and before the name that follows."""
        before = self.comment_here() if self.peek().kind in (BLOCK_STRING, STRING) else None
        description = self.description()
        after = self.comment_here()
        return description, (before if description else None), after

    def field_definition(self) -> dict[str, Any]:
        description, before, after = self._described()
        name = self.name()
        arguments = self.argument_defs()
        self.expect(":")
        typ = self.type_reference()
        return {
            "Description": description,
            "Name": name,
            "Arguments": arguments,
            "DefaultValue": None,
            "Type": typ,
            "Directives": self.directives(True),
            "BeforeDescriptionComment": before,
            "AfterDescriptionComment": after,
        }

    def argument_defs(self) -> list[Any] | None:
        args: list[Any] = []
        self.some("(", ")", lambda: args.append(self.input_value_def(argument=True)))
        return args or None

    def input_value_def(self, argument: bool = False) -> dict[str, Any]:
        description, before, after = self._described()
        name = self.name()
        self.expect(":")
        typ = self.type_reference()
        default = self.value_literal(True) if self.skip("=") else None
        out: dict[str, Any] = {"Description": description, "Name": name, "DefaultValue": default, "Type": typ}
        out["BeforeDescriptionComment"] = before
        out["AfterDescriptionComment"] = after
        out["Directives"] = self.directives(True)
        if not argument:
            out["Arguments"] = None
        return out

    def union_members(self) -> list[str] | None:
        types: list[str] = []
        if self.skip("="):
            self.skip("|")
            types.append(self.name())
            while self.skip("|") and self.err is None:
                types.append(self.name())
        return types or None

    def enum_values(self) -> tuple[list[Any] | None, Any]:
        values: list[Any] = []

        def one() -> None:
            description, before, after = self._described()
            name = self.name()
            values.append(
                {
                    "Description": description,
                    "Name": name,
                    "Directives": self.directives(True),
                    "BeforeDescriptionComment": before,
                    "AfterDescriptionComment": after,
                }
            )

        end = self.some("{", "}", one)
        return values or None, end

    def input_fields(self) -> tuple[list[Any] | None, Any]:
        values: list[Any] = []
        end = self.some("{", "}", lambda: values.append(self.input_value_def()))
        return values or None, end

    def type_system_extension(self, doc: dict[str, list[Any]], comment: Any) -> None:
        self.expect_keyword("extend")
        value = self.peek().value
        if value == "schema":
            self.expect_keyword("schema")
            directives = self.directives(True)
            ops: list[Any] = []
            end = self.some("{", "}", lambda: ops.append(self.operation_type_definition()))
            if not directives and not ops:
                self.unexpected()
            doc["SchemaExtension"].append(
                {
                    "Description": "",
                    "Directives": directives,
                    "OperationTypes": ops or None,
                    "AfterDescriptionComment": comment,
                    "EndOfDefinitionComment": end,
                }
            )
        elif value in ("scalar", "type", "interface", "union", "enum", "input"):
            doc["Extensions"].append(
                self.type_definition("", extension=True, comments={"AfterDescriptionComment": comment})
            )
        else:
            self.unexpected()

    def directive_definition(self, description: str) -> dict[str, Any]:
        self.expect_keyword("directive")
        self.expect("@")
        name = self.name()
        arguments = self.argument_defs()
        repeatable = False
        tok = self.peek()
        if tok.kind == NAME and tok.value == "repeatable":
            repeatable = True
            self.skip(NAME)
        self.expect_keyword("on")
        self.skip("|")
        locations = [self.directive_location()]
        while self.skip("|") and self.err is None:
            locations.append(self.directive_location())
        return {
            "Description": description,
            "Name": name,
            "Arguments": arguments,
            "Locations": locations,
            "IsRepeatable": repeatable,
        }

    def directive_location(self) -> str:
        tok = self.expect(NAME)
        if tok.value in DIRECTIVE_LOCATIONS:
            return tok.value
        self.unexpected(tok)
        return ""


_KINDS = {
    "scalar": "SCALAR",
    "type": "OBJECT",
    "interface": "INTERFACE",
    "union": "UNION",
    "enum": "ENUM",
    "input": "INPUT_OBJECT",
}


def _definition(keyword: str, description: str, name: str) -> dict[str, Any]:
    return {
        "Kind": _KINDS[keyword],
        "Description": description,
        "Name": name,
        "Directives": None,
        "Interfaces": None,
        "Fields": None,
        "Types": None,
        "EnumValues": None,
        "BuiltIn": False,
    }


def _operation(op: str, name: str, variables: Any, directives: Any, selection_set: Any, comment: Any) -> dict[str, Any]:
    return {
        "Operation": op,
        "Name": name,
        "VariableDefinitions": variables,
        "Directives": directives,
        "SelectionSet": selection_set,
        "Comment": comment,
    }


def _value(raw: str, kind: int, children: Any) -> dict[str, Any]:
    return {
        "Raw": raw,
        "Children": children,
        "Kind": kind,
        "Definition": None,
        "VariableDefinition": None,
        "ExpectedType": None,
        "ExpectedTypeHasDefault": False,
    }


def parse_query(text: str) -> dict[str, Any]:
    p = Parser(text)
    doc = p.query_document()
    if p.err is not None:
        raise p.err
    return doc


def parse_schema(text: str) -> dict[str, Any]:
    p = Parser(text)
    doc = p.schema_document()
    if p.err is not None:
        raise p.err
    return doc


def prune(value: Any) -> Any:
    """OPA's pruning: drop nulls, empty arrays/objects (after pruning) and positions."""
    if type(value) is dict:
        out = {}
        for k, v in value.items():
            if k == "Position" or v is None:
                continue
            if type(v) in (dict, list):
                v = prune(v)
                if not v:
                    continue
            out[k] = v
        return out
    if type(value) is list:
        items = []
        for v in value:
            if v is None:
                continue
            if type(v) in (dict, list):
                v = prune(v)
                if not v:
                    continue
            items.append(v)
        return items
    return value
