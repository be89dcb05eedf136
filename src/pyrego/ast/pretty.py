"""OPA's ``ast.Pretty`` tree (``opa parse --format pretty``), from OPA's AST JSON.

OPA walks the module with its before/after visitor and prints one line per
node, indented one space per level: the node's type name (``module``,
``package``, ``rule``, ``head``, ``body``, ``expr index=0``, ``ref``,
``call``, ...) or, for scalars and variables, the value itself (strings
quoted as Go's ``strconv.Quote`` does, wildcards as ``_``). Terms add no
level of their own: a term's value sits one level below its container.

The walk is OPA's: a head shows its ref, its arguments and its value (not
its key); an expression shows its terms, then its ``with`` modifiers; the
``not``/``and``/``or`` nodes of the logical keywords are not descended into
(OPA's walker does not know them); annotations and comments print their type
name only.

Every line goes through Go's ``Printf`` as its format string, so a ``%`` in
a value comes out as Go prints a verb without an operand (``%!s(MISSING)``).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

__all__ = ["pretty_module", "go_quote", "ref_string"]

_KIND_NAMES = {
    "ref": "ref",
    "array": "array",
    "object": "object",
    "set": "set",
    "call": "call",
    "arraycomprehension": "arraycomprehension",
    "objectcomprehension": "objectcomprehension",
    "setcomprehension": "setcomprehension",
    "templatestring": "templatestring",
}


def pretty_module(module: dict[str, Any]) -> str:
    """The pretty tree of a module in OPA's JSON form (see :mod:`pyrego.ast.opa_json`)."""
    p = _Printer()
    p.module(module)
    return "".join(p.out)


class _Printer:
    def __init__(self) -> None:
        self.out: list[str] = []

    def line(self, depth: int, text: str) -> None:
        self.out.append(_go_printf(" " * depth + text + "\n"))

    # ------------------------------------------------------------ statements

    def module(self, m: dict[str, Any]) -> None:
        self.line(0, "module")
        self.line(1, "package")
        self.ref(2, m["package"]["path"])
        for imp in m.get("imports", ()):
            self.line(1, "import")
            self.term(2, imp["path"])
            self.line(2, _go_var(imp.get("alias", "")))
        for rule in m.get("rules", ()):
            self.rule(1, rule)
        for _ in m.get("annotations", ()):
            self.line(1, "annotations")
        for _ in m.get("comments", ()):
            self.line(1, "comment")

    def rule(self, depth: int, rule: dict[str, Any]) -> None:
        self.line(depth, "rule")
        head = rule["head"]
        self.line(depth + 1, "head")
        self.ref(depth + 2, head["ref"])
        args = head.get("args")
        if args:
            self.line(depth + 2, "args")
            for a in args:
                self.term(depth + 3, a)
        if "value" in head:
            self.term(depth + 2, head["value"])
        self.body(depth + 1, rule["body"])
        if "else" in rule:
            self.rule(depth + 1, rule["else"])

    def body(self, depth: int, body: list[dict[str, Any]]) -> None:
        self.line(depth, "body")
        for e in body:
            self.expr(depth + 1, e)

    def expr(self, depth: int, e: dict[str, Any]) -> None:
        extras = ("negated " if e.get("negated") else "") + f"index={e['index']}"
        self.out.append(" " * depth + "expr " + extras + "\n")  # (arguments, not a format)
        terms = e["terms"]
        if isinstance(terms, list):
            for t in terms:
                self.term(depth + 1, t)
        elif "symbols" in terms:
            self.line(depth + 1, "somedecl")
            for s in terms["symbols"]:
                self.term(depth + 2, s)
        elif "domain" in terms:
            self.line(depth + 1, "every")
            if terms.get("key") is not None:
                self.term(depth + 2, terms["key"])
            self.term(depth + 2, terms["value"])
            self.term(depth + 2, terms["domain"])
            self.body(depth + 2, terms["body"])
        elif terms.get("type") in ("not", "and", "or") and "value" not in terms:
            pass  # OPA's walker does not descend into these
        else:
            self.term(depth + 1, terms)
        for w in e.get("with", ()):
            self.line(depth + 1, "with")
            self.term(depth + 2, w["target"])
            self.term(depth + 2, w["value"])

    # ------------------------------------------------------------ terms

    def ref(self, depth: int, items: list[dict[str, Any]]) -> None:
        self.line(depth, "ref")
        for t in items:
            self.term(depth + 1, t)

    def term(self, depth: int, t: dict[str, Any]) -> None:
        """A term's value at ``depth`` (terms themselves add no level)."""
        kind, v = t["type"], t["value"]
        if kind == "null":
            self.line(depth, "null")
        elif kind == "boolean":
            self.line(depth, "true" if v else "false")
        elif kind == "number":
            self.line(depth, str.__str__(v))
        elif kind == "string":
            self.line(depth, go_quote(v))
        elif kind == "var":
            self.line(depth, _go_var(v))
        elif kind in ("ref", "array", "set", "call"):
            self.line(depth, _KIND_NAMES[kind])
            for x in v:
                self.term(depth + 1, x)
        elif kind == "object":
            self.line(depth, "object")
            for k, x in v:
                self.term(depth + 1, k)
                self.term(depth + 1, x)
        elif kind in ("arraycomprehension", "setcomprehension"):
            self.line(depth, kind)
            self.term(depth + 1, v["term"])
            self.body(depth + 1, v["body"])
        elif kind == "objectcomprehension":
            self.line(depth, kind)
            self.term(depth + 1, v["key"])
            self.term(depth + 1, v["value"])
            self.body(depth + 1, v["body"])
        elif kind == "templatestring":
            self.line(depth, kind)
            for part in v["parts"]:
                if "terms" in part:
                    self.expr(depth + 1, part)
                else:
                    self.term(depth + 1, part)
        else:
            self.line(depth, kind)


def _go_var(name: str) -> str:
    """A variable as OPA prints it: wildcards (``$0``) as ``_``."""
    return "_" if name.startswith("$") else name


_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(s: str) -> str:
    """Go's ``strconv.Quote``: printable characters as they are, others escaped."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif ch == " " or (ch > " " and _printable(ch)):
            out.append(ch)
        elif ord(ch) < 0x80 or "\ud800" <= ch <= "\udfff":
            out.append("\\ufffd" if ord(ch) >= 0x80 else f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


def _printable(ch: str) -> bool:
    """Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols."""
    return ch != "\x7f" and unicodedata.category(ch)[0] in "LMNPS"


def _go_printf(fmt: str) -> str:
    """Go's ``Printf(fmt)`` with no operands: ``%%`` is ``%``, any other verb
    comes out as ``%!v(MISSING)`` (``%!(NOVERB)`` at the end)."""
    if "%" not in fmt:
        return fmt
    out: list[str] = []
    i, n = 0, len(fmt)
    while i < n:
        ch = fmt[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        i += 1
        while i < n and fmt[i] in "+-# 0":  # flags
            i += 1
        if i < n and fmt[i] == "*":
            out.append("%!(BADWIDTH)")
            i += 1
        else:
            while i < n and fmt[i].isdigit():
                i += 1
        if i < n and fmt[i] == ".":
            i += 1
            if i < n and fmt[i] == "*":
                out.append("%!(BADPREC)")
                i += 1
            else:
                while i < n and fmt[i].isdigit():
                    i += 1
        if i >= n:
            out.append("%!(NOVERB)")
            break
        verb = fmt[i]
        i += 1
        out.append("%" if verb == "%" else f"%!{verb}(MISSING)")
    return "".join(out)


_REF_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REF_KEYWORDS = frozenset(
    {"not", "package", "import", "as", "default", "else", "with", "null", "true", "false", "some"}
    | {"if", "contains", "in", "every"}
)


def ref_string(names: list[str], head: str = "data") -> str:
    """A ref as OPA prints it: ``data.a.b``, ``data.a["c-d"]``."""
    out = head
    for n in names:
        if _REF_VAR.fullmatch(n) and n not in _REF_KEYWORDS:
            out += "." + n
        else:
            out += "[" + json.dumps(n, ensure_ascii=False) + "]"
    return out
