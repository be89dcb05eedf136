"""A GraphQL lexer and parser that build the AST OPA returns (no builtins here).

OPA parses GraphQL with gqlparser and returns ``json.Marshal`` of its Go AST
structs, so this parser follows gqlparser's grammar, error texts and error
positions, and builds dicts with the Go field names (``SelectionSet``,
``VariableDefinitions``, ``Kind`` as Go's enum number...). Positions are not
kept (OPA prunes them).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

# Token kinds, by gqlparser's names for them in messages.
INVALID = "<Invalid>"
EOF = "<EOF>"
NAME = "Name"
INT = "Int"
FLOAT = "Float"
STRING = "String"
BLOCK_STRING = "BlockString"
_PUNCT = {"!": "!", "$": "$", "&": "&", "(": "(", ")": ")", ":": ":", "=": "=", "@": "@", "[": "[", "]": "]"}
_PUNCT.update({"{": "{", "}": "}", "|": "|"})

# Go's ast.ValueKind numbers
VARIABLE, INT_VALUE, FLOAT_VALUE, STRING_VALUE, BLOCK_VALUE = 0, 1, 2, 3, 4
BOOLEAN_VALUE, NULL_VALUE, ENUM_VALUE, LIST_VALUE, OBJECT_VALUE = 5, 6, 7, 8, 9

DIRECTIVE_LOCATIONS = frozenset(
    [
        "QUERY",
        "MUTATION",
        "SUBSCRIPTION",
        "FIELD",
        "FRAGMENT_DEFINITION",
        "FRAGMENT_SPREAD",
        "INLINE_FRAGMENT",
        "VARIABLE_DEFINITION",
        "SCHEMA",
        "SCALAR",
        "OBJECT",
        "FIELD_DEFINITION",
        "ARGUMENT_DEFINITION",
        "INTERFACE",
        "UNION",
        "ENUM",
        "ENUM_VALUE",
        "INPUT_OBJECT",
        "INPUT_FIELD_DEFINITION",
    ]
)


class GraphQLSyntaxError(Exception):
    """A gqlparser error: message, line and column."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column

    def opa_text(self) -> str:
        return f"{self.message} in GraphQL string at location {self.line}:{self.column}"


@dataclass(slots=True)
class Token:
    kind: str
    value: str
    line: int
    column: int

    def __str__(self) -> str:
        if self.value != "":
            return f"{self.kind} {json.dumps(self.value, ensure_ascii=False)}"
        return self.kind


class Lexer:
    """gqlparser's lexer: positions count runes; lines and columns from 1."""

    def __init__(self, text: str) -> None:
        self.src = text
        self.pos = 0
        self.line = 1
        self.line_start = 0
        self.start = 0

    def _token(self, kind: str, value: str) -> Token:
        return Token(kind, value, self.line, self.start - self.line_start + 1)

    def _error(self, message: str) -> tuple[Token, GraphQLSyntaxError]:
        column = self.pos - self.line_start + 1
        return Token(INVALID, "", self.line, column), GraphQLSyntaxError(message, self.line, column)

    def _ws(self) -> None:
        src = self.src
        n = len(src)
        while self.pos < n:
            c = src[self.pos]
            if c in "\t ,":
                self.pos += 1
            elif c == "\n":
                self.pos += 1
                self.line += 1
                self.line_start = self.pos
            elif c == "\r":
                self.pos += 1
                self.line += 1
                self.line_start = self.pos
                if self.pos < n and src[self.pos] == "\n":
                    self.pos += 1
            elif c == "\ufeff":
                self.pos += 1
            else:
                return

    def read(self) -> tuple[Token, GraphQLSyntaxError | None]:
        while True:
            self._ws()
            self.start = self.pos
            src = self.src
            if self.pos >= len(src):
                return self._token(EOF, ""), None
            c = src[self.pos]
            self.pos += 1
            if c == "#":
                while self.pos < len(src) and (src[self.pos] == "\t" or ord(src[self.pos]) > 0x1F):
                    self.pos += 1
                continue
            if c in _PUNCT:
                return self._token(_PUNCT[c], ""), None
            if c == "." and src.startswith("...", self.start):
                self.pos += 2
                return self._token("...", ""), None
            if c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z"):
                while self.pos < len(src) and (src[self.pos] == "_" or src[self.pos].isascii() and src[self.pos].isalnum()):
                    self.pos += 1
                return self._token(NAME, src[self.start : self.pos]), None
            if c == "-" or "0" <= c <= "9":
                return self._number()
            if c == '"':
                if src.startswith('"""', self.start):
                    return self._block_string()
                return self._string()
            self.pos -= 1
            if ord(c) < 0x20 and c not in "\t\n\r":
                return self._error(f'Cannot contain the invalid character "\\u{ord(c):04d}"')
            if c == "'":
                return self._error("Unexpected single quote character ('), did you mean to use a double quote (\")?")
            return self._error(f'Cannot parse the unexpected character "{c}".')

    def _digits(self) -> int:
        n = 0
        while self.pos < len(self.src) and "0" <= self.src[self.pos] <= "9":
            self.pos += 1
            n += 1
        return n

    def _accept(self, chars: str) -> bool:
        if self.pos < len(self.src) and self.src[self.pos] in chars:
            self.pos += 1
            return True
        return False

    def _describe_next(self) -> str:
        return f'"{self.src[self.pos]}"' if self.pos < len(self.src) else "<EOF>"

    def _number(self) -> tuple[Token, GraphQLSyntaxError | None]:
        self.pos -= 1
        is_float = False
        self._accept("-")
        if self._accept("0"):
            consumed = self._digits()
            if consumed:
                self.pos -= consumed
                return self._error(f"Invalid number, unexpected digit after 0: {self._describe_next()}.")
        elif self._digits() == 0:
            return self._error(f"Invalid number, expected digit but got: {self._describe_next()}.")
        if self._accept("."):
            is_float = True
            if self._digits() == 0:
                return self._error(f"Invalid number, expected digit but got: {self._describe_next()}.")
        if self._accept("eE"):
            is_float = True
            self._accept("-+")
            if self._digits() == 0:
                return self._error(f"Invalid number, expected digit but got: {self._describe_next()}.")
        return self._token(FLOAT if is_float else INT, self.src[self.start : self.pos]), None

    def _string(self) -> tuple[Token, GraphQLSyntaxError | None]:
        src = self.src
        n = len(src)
        self.start += 1
        out: list[str] = []
        while self.pos < n:
            c = src[self.pos]
            if c in "\n\r":
                break
            if ord(c) < 0x20 and c != "\t":
                return self._error(f'Invalid character within String: "\\u{ord(c):04d}".')
            if c == '"':
                tok = Token(STRING, "".join(out), self.line, self.start - self.line_start + 1)
                self.pos += 1
                return tok, None
            if c == "\\":
                if self.pos + 1 >= n:
                    self.pos += 1
                    return self._error("Invalid character escape sequence.")
                esc = src[self.pos + 1]
                if esc == "u":
                    if self.pos + 6 >= n:
                        self.pos += 1
                        return self._error(f"Invalid character escape sequence: \\{src[self.pos :]}.")
                    digits = src[self.pos + 2 : self.pos + 6]
                    if not all(d in "0123456789abcdefABCDEF" for d in digits):
                        self.pos += 1
                        return self._error(f"Invalid character escape sequence: \\{src[self.pos : self.pos + 5]}.")
                    out.append(chr(int(digits, 16)))
                    self.pos += 6
                    continue
                mapped = {'"': '"', "/": "/", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}.get(esc)
                if mapped is None:
                    self.pos += 1
                    return self._error(f"Invalid character escape sequence: \\{esc}.")
                out.append(mapped)
                self.pos += 2
                continue
            out.append(c)
            self.pos += 1
        return self._error("Unterminated string.")

    def _block_string(self) -> tuple[Token, GraphQLSyntaxError | None]:
        src = self.src
        n = len(src)
        self.start += 3
        self.pos += 2
        buf: list[str] = []
        while self.pos < n:
            c = src[self.pos]
            if c == '"' and src.startswith('"""', self.pos):
                # gqlparser takes the line and column at the end of the block (its quirk)
                tok = Token(BLOCK_STRING, block_string_value("".join(buf)), self.line, self.start - self.line_start + 1)
                self.pos += 3
                return tok, None
            if ord(c) < 0x20 and c not in "\t\n\r":
                return self._error(f'Invalid character within String: "\\u{ord(c):04d}".')
            if c == "\\" and src.startswith('\\"""', self.pos):
                buf.append('"""')
                self.pos += 4
            elif c == "\r":
                if self.pos + 1 < n and src[self.pos + 1] == "\n":
                    self.pos += 1
                buf.append("\n")
                self.pos += 1
                self.line += 1
                self.line_start = self.pos
            else:
                buf.append(c)
                self.pos += 1
                if c == "\n":
                    self.line += 1
                    self.line_start = self.pos
        return self._error("Unterminated string.")


def block_string_value(raw: str) -> str:
    """GraphQL's BlockStringValue: common indentation and blank edge lines removed."""
    lines = raw.split("\n")
    common: int | None = None
    for line in lines[1:]:
        indent = len(line) - len(line.lstrip(" \t"))
        if indent < len(line) and (common is None or indent < common):
            common = indent
    if common:
        lines = [lines[0]] + [line[common:] for line in lines[1:]]
    while lines and not lines[0].strip(" \t"):
        lines.pop(0)
    while lines and not lines[-1].strip(" \t"):
        lines.pop()
    return "\n".join(lines)


class Parser:
    """gqlparser's recursive-descent parser; the first error wins."""

    def __init__(self, text: str) -> None:
        self.lexer = Lexer(text)
        self.err: GraphQLSyntaxError | None = None
        self.peeked = False
        self.peek_token = Token(EOF, "", 1, 1)
        self.peek_error: GraphQLSyntaxError | None = None
        self.prev = Token(EOF, "", 1, 1)

    # -- token handling

    def peek(self) -> Token:
        if self.err is not None:
            return self.prev
        if not self.peeked:
            self.peek_token, self.peek_error = self.lexer.read()
            self.peeked = True
        return self.peek_token

    def next(self) -> Token:
        if self.err is not None:
            return self.prev
        if self.peeked:
            self.peeked = False
            self.prev, self.err = self.peek_token, self.peek_error
        else:
            self.prev, self.err = self.lexer.read()
        return self.prev

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

    def some(self, start: str, end: str, cb: Callable[[], None]) -> None:
        if not self.skip(start):
            return
        called = False
        while self.peek().kind != end and self.err is None:
            called = True
            cb()
        if not called:
            self.error(self.peek(), f"expected at least one definition, found {self.peek().kind}")
            return
        self.next()

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
        if self.peek().kind == "{":
            return _operation("query", "", None, None, self.required_selection_set())
        op = self.operation_type()
        name = self.next().value if self.peek().kind == NAME else ""
        variables = self.variable_definitions()
        directives = self.directives(False)
        return _operation(op, name, variables, directives, self.required_selection_set())

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
        variable = self.variable()
        self.expect(":")
        typ = self.type_reference()
        default = self.value_literal(True) if self.skip("=") else None
        return {
            "Variable": variable,
            "Type": typ,
            "DefaultValue": default,
            "Directives": self.directives(False),
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
            "Definition": None,
            "ObjectDefinition": None,
        }

    def arguments(self, is_const: bool) -> list[Any] | None:
        args: list[Any] = []
        self.many("(", ")", lambda: args.append(self.argument(is_const)))
        return args or None

    def argument(self, is_const: bool) -> dict[str, Any]:
        name = self.name()
        self.expect(":")
        return {"Name": name, "Value": self.value_literal(is_const)}

    def fragment(self) -> dict[str, Any]:
        self.expect("...")
        tok = self.peek()
        if tok.kind == NAME and tok.value != "on":
            name = self.fragment_name()
            return {"Name": name, "Directives": self.directives(False), "ObjectDefinition": None, "Definition": None}
        type_condition = ""
        if self.peek().value == "on":
            self.next()
            type_condition = self.name()
        directives = self.directives(False)
        return {
            "TypeCondition": type_condition,
            "Directives": directives,
            "SelectionSet": self.required_selection_set(),
            "ObjectDefinition": None,
        }

    def fragment_definition(self) -> dict[str, Any]:
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
            kind = BOOLEAN_VALUE if tok.value in ("true", "false") else NULL_VALUE if tok.value == "null" else ENUM_VALUE
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
            name = self.name()
            self.expect(":")
            fields.append({"Name": name, "Value": self.value_literal(is_const)})

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
            if self.peek().kind in (BLOCK_STRING, STRING):
                description = self.next().value
            tok = self.peek()
            if tok.kind != NAME:
                self.unexpected()
                break
            if tok.value in ("scalar", "type", "interface", "union", "enum", "input"):
                doc["Definitions"].append(self.type_definition(description))
            elif tok.value == "schema":
                doc["Schema"].append(self.schema_definition(description))
            elif tok.value == "directive":
                doc["Directives"].append(self.directive_definition(description))
            elif tok.value == "extend":
                if description:
                    self.unexpected(self.prev)
                self.type_system_extension(doc)
            else:
                self.unexpected()
                break
        return {k: (v or None) for k, v in doc.items()}

    def description(self) -> str:
        if self.peek().kind not in (BLOCK_STRING, STRING):
            return ""
        return self.next().value

    def schema_definition(self, description: str) -> dict[str, Any]:
        self.expect_keyword("schema")
        directives = self.directives(True)
        ops: list[Any] = []
        self.some("{", "}", lambda: ops.append(self.operation_type_definition()))
        return {"Description": description, "Directives": directives, "OperationTypes": ops or None}

    def operation_type_definition(self) -> dict[str, Any]:
        op = self.operation_type()
        self.expect(":")
        return {"Operation": op, "Type": self.name()}

    def type_definition(self, description: str, extension: bool = False) -> dict[str, Any]:
        keyword = self.peek().value
        self.expect_keyword(keyword)
        d = _definition(keyword, description, self.name())
        if keyword in ("type", "interface"):
            if keyword == "type" or not extension:
                d["Interfaces"] = self.implements_interfaces()
            d["Directives"] = self.directives(True)
            d["Fields"] = self.fields_definition()
        elif keyword == "union":
            d["Directives"] = self.directives(True)
            d["Types"] = self.union_members()
        elif keyword == "enum":
            d["Directives"] = self.directives(True)
            d["EnumValues"] = self.enum_values()
        elif keyword == "input":
            d["Directives"] = self.directives(not extension)
            d["Fields"] = self.input_fields()
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

    def fields_definition(self) -> list[Any] | None:
        defs: list[Any] = []
        self.some("{", "}", lambda: defs.append(self.field_definition()))
        return defs or None

    def field_definition(self) -> dict[str, Any]:
        description = self.description()
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
        }

    def argument_defs(self) -> list[Any] | None:
        args: list[Any] = []
        self.some("(", ")", lambda: args.append(self.input_value_def(argument=True)))
        return args or None

    def input_value_def(self, argument: bool = False) -> dict[str, Any]:
        description = self.description()
        name = self.name()
        self.expect(":")
        typ = self.type_reference()
        default = self.value_literal(True) if self.skip("=") else None
        out = {"Description": description, "Name": name, "DefaultValue": default, "Type": typ}
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

    def enum_values(self) -> list[Any] | None:
        values: list[Any] = []

        def one() -> None:
            description = self.description()
            name = self.name()
            values.append({"Description": description, "Name": name, "Directives": self.directives(True)})

        self.some("{", "}", one)
        return values or None

    def input_fields(self) -> list[Any] | None:
        values: list[Any] = []
        self.some("{", "}", lambda: values.append(self.input_value_def()))
        return values or None

    def type_system_extension(self, doc: dict[str, list[Any]]) -> None:
        self.expect_keyword("extend")
        value = self.peek().value
        if value == "schema":
            self.expect_keyword("schema")
            directives = self.directives(True)
            ops: list[Any] = []
            self.some("{", "}", lambda: ops.append(self.operation_type_definition()))
            if not directives and not ops:
                self.unexpected()
            doc["SchemaExtension"].append({"Description": "", "Directives": directives, "OperationTypes": ops or None})
        elif value in ("scalar", "type", "interface", "union", "enum", "input"):
            doc["Extensions"].append(self.type_definition("", extension=True))
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


def _operation(op: str, name: str, variables: Any, directives: Any, selection_set: Any) -> dict[str, Any]:
    return {
        "Operation": op,
        "Name": name,
        "VariableDefinitions": variables,
        "Directives": directives,
        "SelectionSet": selection_set,
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
