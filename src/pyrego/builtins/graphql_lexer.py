"""gqlparser's GraphQL lexer: tokens, error texts and positions as OPA reports them."""

from __future__ import annotations

import json
from dataclasses import dataclass

# Token kinds, by gqlparser's names for them in messages.
INVALID = "<Invalid>"
EOF = "<EOF>"
NAME = "Name"
INT = "Int"
FLOAT = "Float"
STRING = "String"
BLOCK_STRING = "BlockString"
COMMENT = "Comment"
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
                return self._token(COMMENT, src[self.start : self.pos]), None
            if c in _PUNCT:
                return self._token(_PUNCT[c], ""), None
            if c == "." and src.startswith("...", self.start):
                self.pos += 2
                return self._token("...", ""), None
            if c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z"):
                while self.pos < len(src) and (
                    src[self.pos] == "_" or src[self.pos].isascii() and src[self.pos].isalnum()
                ):
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
                mapped = {'"': '"', "/": "/", "\\": "\\", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}.get(
                    esc
                )
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
