"""A parsed module as OPA's AST JSON (``opa parse --format json``).

pyrego's AST keeps what evaluation needs; OPA's JSON shows OPA's own AST, which
its parser builds differently. This module rebuilds OPA's shapes from
pyrego's AST and the policy text:

- Operators and statements are calls of OPA's builtin names: ``x := 1`` is
  ``[assign, x, 1]``, ``a == b`` ``[equal, a, b]``, ``some x in xs`` a
  ``some`` declaration of ``internal.member_2(x, xs)``, ``-x`` ``minus(0, x)``.
- Rules get what OPA's parser gives them: the body ``true`` when none is
  written, the value ``true`` when none is written, the ``name`` of
  single-name heads, the ``key`` of ``p[x]`` style heads, a copy of the head
  in each ``else`` branch, annotations attached to the rules they describe.
- Wildcards are OPA's ``$0``, ``$1``, ...; sets and objects are written with
  their elements in OPA's sort order (:mod:`pyrego.ast.json_order`).
- With ``import future.keywords.not`` (or ``and``/``or``) in effect, ``not``,
  ``and`` and ``or`` are OPA's ``not``/``and``/``or`` nodes, which pyrego's
  parser writes as closures; they are recovered here.
- Keys are in the order OPA's marshallers write them (Go structs keep
  declaration order, Go maps are sorted); :func:`pyrego.go_json.marshal`
  prints the result byte for byte as OPA does.

With ``locations=True`` every node carries ``location`` (``file``, ``row``,
``col`` and the base64 of its source ``text``), as ``--json-include
locations`` asks; comments always carry theirs (OPA's legacy ``Location``).
"""

from __future__ import annotations

import base64
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.ast.json_annotations import annotation_json, rule_annotations
from pyrego.ast.json_order import sort_object_items, sort_set_items
from pyrego.formatter.source import SourceIndex
from pyrego.go_json import GoNumber
from pyrego.parse.lexer import IDENT, TMPL, TMPLC, tokenize

__all__ = ["module_json", "ModuleJSON"]

_INFIX = {"assign": ":=", "eq": "="}
_WILDCARD = "$wildcard"
_COMPREHENSIONS = (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)


def module_json(module: ast.Module, text: str, *, locations: bool = False, comments: bool = True) -> dict[str, Any]:
    """OPA's JSON form of ``module`` (parsed from ``text``), keys in OPA's order.

    ``locations`` adds every node's location with its source text (``opa
    parse --json-include locations``); ``comments=False`` leaves the
    comments out (``--json-include -comments``).
    """
    return ModuleJSON(module, text, locations).module(comments)


class ModuleJSON:
    """Builds the JSON of one module; see :func:`module_json`."""

    def __init__(self, module: ast.Module, text: str, locations: bool) -> None:
        self.mod = module
        self.text = text
        self.file = module.file
        self.locations = locations
        self.src = SourceIndex(text, tokenize(text))
        #: when set, the location of every node built (OPA's setLocRecursive)
        self.override: dict[str, Any] | None = None
        #: `import future.keywords[.not]`: every `not` is OPA's `not` node
        self.not_nodes = any(_future_import(imp, "not") for imp in module.imports)

    # ------------------------------------------------------------ locations

    def loc(self, row: int, col: int, start: int, end: int) -> dict[str, Any] | None:
        """A location (None when locations are not asked for)."""
        if not self.locations:
            return None
        if self.override is not None:
            return self.override
        out: dict[str, Any] = {"file": self.file, "row": row, "col": col}
        if end > start:
            out["text"] = base64.b64encode(self.text[start:end].encode("utf-8", "surrogatepass")).decode("ascii")
        return out

    def loc_at(self, location: Any, start: int, end: int) -> dict[str, Any] | None:
        return self.loc(location.row, location.col, start, end)

    def tok_loc(self, first: int, last: int) -> dict[str, Any] | None:
        """The location of tokens ``first..last`` (row/col of the first)."""
        if not self.locations:
            return None
        src = self.src
        start = src.starts[first]
        return self.loc(src.row_of(start), src.col_of(start), start, src.tok_end(last))

    def term_loc(self, t: ast.Term) -> dict[str, Any] | None:
        if not self.locations:
            return None
        start, end = self.src.term_text_span(t)
        return self.loc_at(t.location, start, end)

    def expr_loc(self, expr: ast.Expr) -> dict[str, Any] | None:
        if not self.locations:
            return None
        first, last = self.expr_span(expr)
        if self.logical_kind(expr) in ("and", "or"):
            src = self.src
            start = src.starts[first]
            return self.loc(src.row_of(start), src.col_of(start), start, src.tok_end(last))
        return self.loc_at(expr.location, self.src.starts[first], self.src.tok_end(last))

    def expr_span(self, expr: ast.Expr) -> tuple[int, int]:
        """The first and last tokens of a body expression (``with`` included)."""
        src = self.src
        kind = self.logical_kind(expr)
        first = src.tok(expr.location)
        if kind is None:
            return first, src.expr_last(expr)
        if expr.with_mods:
            last = src.extent(expr.with_mods[-1].value)[1]
        else:
            last = self.operand_end(self.logical_operand(expr))
        if kind != "not":  # `{ a } or b`: the expression starts at the operand's brace
            while first > 0 and src.kinds[first - 1] in ("{", "(") and src.match.get(first - 1, len(src.kinds)) <= last:
                first -= 1
        return first, last

    def expr_last(self, expr: ast.Expr) -> int:
        return self.expr_span(expr)[1]

    def operand_end(self, body: ast.Body) -> int:
        """The last token of an operand body: its last expression, or the brace closing it."""
        src = self.src
        last = self.expr_last(body[-1])
        open_ = src.tok(body[0].location) - 1
        if open_ >= 0 and src.kinds[open_] in ("{", "(") and src.match.get(open_) == last + 1:
            return last + 1
        return last

    def logical_operand(self, expr: ast.Expr) -> ast.Body:
        """The last operand body of an and/or/not expression."""
        stmt = expr.statement
        assert isinstance(stmt, ast.Ref)
        head = stmt.head
        if isinstance(head, ast.Call):
            rhs = head.args[1]
            assert isinstance(rhs, ast.SetCompr)
            return rhs.body
        assert isinstance(head, ast.ArrayCompr)
        return head.body

    # ------------------------------------------------------------ module

    def module(self, with_comments: bool) -> dict[str, Any]:
        mod = self.mod
        out: dict[str, Any] = {"package": self.package()}
        if mod.imports:
            out["imports"] = [self.import_(i) for i in mod.imports]
        annotations = [self.annotation(a) for a in mod.annotations]
        if annotations:
            out["annotations"] = annotations
        rules = self.rules()
        if rules:
            out["rules"] = rules
        if with_comments:
            cs = self.comments()
            if cs:
                out["comments"] = cs
        return out

    def package(self) -> dict[str, Any]:
        mod = self.mod
        src = self.src
        parts = mod.package.path
        first = parts[0]
        # `data` and the first name share the first name's location (OPA)
        data = _term("var", "data", self.term_loc(first))
        path = [data] + [self.term(p) for p in parts]
        out: dict[str, Any] = {}
        loc = self.tok_loc(src.tok(mod.location), src.tok(mod.location))
        if loc is not None:
            out["location"] = loc
        out["path"] = path
        return out

    def import_(self, imp: ast.Import) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if imp.alias:
            out["alias"] = imp.alias
        tok = self.src.tok(imp.location)
        loc = self.tok_loc(tok, tok)
        if loc is not None:
            out["location"] = loc
        out["path"] = self.term(imp.path)  # a ref, even for `import input`
        return out

    def annotation(self, a: ast.Annotation) -> dict[str, Any]:
        """An annotation; its location's text is its ``# METADATA`` comment."""
        text = None
        if self.locations:
            offset = self.src.offset(a.location)
            text = next(("#" + t for off, t in self.src.toks.comments if off == offset), None)
        return annotation_json(a, self.file, self.locations, text)

    def comments(self) -> list[dict[str, Any]]:
        out = []
        src = self.src
        for offset, text in src.toks.comments:
            row = src.row_of(offset)
            col = offset - src.line_starts[row - 1] + 1
            loc: dict[str, Any] = {"file": self.file, "row": row, "col": col}
            if self.locations:
                loc["text"] = _b64("#" + text)
            # Comment is marshalled as a plain Go struct: Text, then Location
            out.append({"Text": _b64(text), "Location": loc})
        return out

    # ------------------------------------------------------------ rules

    def rules(self) -> list[dict[str, Any]]:
        attached = rule_annotations(self.mod)
        out = []
        for i, rule in enumerate(self.mod.rules):
            out.append(self.rule(rule, [self.annotation(a) for a in attached[i]]))
        return out

    def rule(self, rule: ast.Rule, annotations: list[dict[str, Any]]) -> dict[str, Any]:
        from pyrego.ast.json_rules import RuleJSON

        return RuleJSON(self, rule).json(annotations)

    # ------------------------------------------------------------ bodies

    def body(self, body: ast.Body, relocate: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return [self.expr(e, i, relocate) for i, e in enumerate(body)]

    def expr(self, expr: ast.Expr, index: int, relocate: dict[str, Any] | None = None) -> dict[str, Any]:
        """An expression; ``relocate`` gives it and all it holds one location
        (OPA does so for the body of an ``else`` written without braces)."""
        if relocate is not None:
            saved, self.override = self.override, relocate
            try:
                return self.expr(expr, index)
            finally:
                self.override = saved
        stmt = expr.statement
        negated = expr.negated
        terms: Any
        logical = self.logical(expr)
        if logical is not None:
            terms = logical
            negated = False  # a `not` node carries the negation
        elif negated and self.not_nodes:
            inner: dict[str, Any] = {"index": 0}
            # OPA gives the node and the inner expression the whole `not ...` span
            loc = self.expr_loc(expr)
            if loc is not None:
                inner["location"] = loc
            inner["terms"] = self.statement(stmt)
            terms = {"body": [inner], "explicit_body": False}
            if loc is not None:
                terms["location"] = loc
            terms["type"] = "not"
            negated = False
        else:
            terms = self.statement(stmt)
        out: dict[str, Any] = {"index": index}
        loc = self.expr_loc(expr)
        if loc is not None:
            out["location"] = loc
        if negated:
            out["negated"] = True
        out["terms"] = terms
        if expr.with_mods:
            out["with"] = [self.with_(w) for w in expr.with_mods]
        return out

    def statement(self, stmt: ast.Statement) -> Any:
        if isinstance(stmt, (ast.Assign, ast.Unify)):
            name = "assign" if isinstance(stmt, ast.Assign) else "eq"
            return [self.operator(name, stmt.lhs), self.term(stmt.lhs), self.term(stmt.rhs)]
        if isinstance(stmt, ast.SomeVars):
            return self.some(stmt, [self.term(v) for v in stmt.vars])
        if isinstance(stmt, ast.SomeIn):
            return self.some(stmt, [self.some_in_call(stmt)])
        if isinstance(stmt, ast.Every):
            return self.every(stmt)
        if isinstance(stmt, ast.Call):
            return self.call_terms(stmt)
        return self.term(stmt)

    def some(self, stmt: ast.SomeVars | ast.SomeIn, symbols: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.locations:
            src = self.src
            first = src.tok(stmt.location)
            last = src.extent(stmt.collection)[1] if isinstance(stmt, ast.SomeIn) else src.tok(stmt.vars[-1].location)
            out["location"] = self.tok_loc(first, last)
        out["symbols"] = symbols
        return out

    def some_in_call(self, stmt: ast.SomeIn) -> dict[str, Any]:
        if stmt.key is None:
            args = [stmt.value, stmt.collection]
            name = "internal.member_2"
        else:
            args = [stmt.key, stmt.value, stmt.collection]
            name = "internal.member_3"
        loc = None
        if self.locations:
            src = self.src
            start = src.starts[src.extent(args[0])[0]]
            loc = self.loc_at(args[0].location, start, src.tok_end(src.extent(args[-1])[1]))
        value = [self.operator(name, args[-2])] + [self.term(a) for a in args]
        return _term("call", value, loc)

    def every(self, stmt: ast.Every) -> dict[str, Any]:
        out: dict[str, Any] = {"body": self.body(stmt.body), "domain": self.term(stmt.domain)}
        out["key"] = self.term(stmt.key) if stmt.key is not None else None
        if self.locations:
            src = self.src
            first = src.tok(stmt.location)
            out["location"] = self.tok_loc(first, src.match[src.extent(stmt.domain)[1] + 1])
        out["value"] = self.term(stmt.value)
        return out

    def with_(self, w: ast.With) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.locations:
            src = self.src
            out["location"] = self.tok_loc(src.tok(w.location), src.extent(w.value)[1])
        target = w.target
        if not target.path and isinstance(target.head, ast.Var) and target.head.name not in ("input", "data"):
            out["target"] = self.term(target.head)  # a function's name stays a var
        else:
            out["target"] = self.term(target)
        out["value"] = self.term(w.value)
        return out

    # ------------------------------------------------------------ and / or / not

    def logical_kind(self, expr: ast.Expr) -> str | None:
        """``and``/``or``/``not`` for an expression pyrego's parser wrote as
        closures (see :mod:`pyrego.parse.logic`), else None."""
        stmt = expr.statement
        if not isinstance(stmt, ast.Ref) or len(stmt.path) != 1:
            return None
        head = stmt.head
        if (
            isinstance(head, ast.Call)
            and head.op in ("and", "or")
            and head.op_ref is None
            and len(head.args) == 2
            and all(isinstance(a, ast.SetCompr) and _is_true(a.term) and a.body for a in head.args)
            and _is_true(stmt.path[0])
            and not self.is_written_as_call(head)
        ):
            return head.op
        if (
            expr.negated
            and isinstance(head, ast.ArrayCompr)
            and head.body
            and _is_true(head.term)
            and isinstance(stmt.path[0], ast.Scalar)
            and stmt.path[0].value == 0
            and self.kind_before(head.body[0]) in ("{", "(", "not")
        ):
            return "not"
        return None

    def logical(self, expr: ast.Expr) -> dict[str, Any] | None:
        """OPA's ``and``/``or``/``not`` node for an expression pyrego's parser
        wrote as closures, else None."""
        kind = self.logical_kind(expr)
        if kind is None:
            return None
        stmt = expr.statement
        assert isinstance(stmt, ast.Ref)
        head = stmt.head
        out: dict[str, Any] = {}
        if isinstance(head, ast.Call):
            lhs, rhs = head.args
            assert isinstance(lhs, ast.SetCompr) and isinstance(rhs, ast.SetCompr)
            if self.explicit(lhs.body):
                out["explicit_lhs"] = True
            if self.explicit(rhs.body):
                out["explicit_rhs"] = True
            out["lhs"] = self.body(lhs.body)
            if self.locations:
                out["location"] = self.expr_loc(expr)
            out["rhs"] = self.body(rhs.body)
        else:
            assert isinstance(head, ast.ArrayCompr)
            out["body"] = self.body(head.body)
            out["explicit_body"] = self.explicit(head.body)
            if self.locations:
                out["location"] = self.expr_loc(expr)
        out["type"] = kind
        return out

    def is_written_as_call(self, call: ast.Call) -> bool:
        """`and(a, b)` as written calls (not the keyword forms)."""
        src = self.src
        tok = src.tok(call.location)
        return src.kinds[tok] == IDENT and src.texts[tok] in ("and", "or") and src.kinds[tok + 1] == "("

    def kind_before(self, expr: ast.Expr) -> str:
        src = self.src
        tok = src.tok(expr.location) - 1
        return src.kinds[tok] if tok >= 0 else ""

    def explicit(self, body: ast.Body) -> bool:
        """Whether an operand body was written in braces."""
        src = self.src
        first = src.tok(body[0].location) - 1
        if first < 0 or src.kinds[first] != "{":
            return False
        close = src.match.get(first, -1)
        return close == self.expr_last(body[-1]) + 1

    # ------------------------------------------------------------ terms

    def operator(self, name: str, lhs: ast.Term) -> dict[str, Any]:
        """The ref term of an operator written infix after ``lhs``."""
        loc = None
        if self.locations:
            src = self.src
            tok = src.extent(lhs)[1] + 1
            loc = self.tok_loc(tok, tok)
        return _op_ref(name, loc)

    def call_terms(self, call: ast.Call) -> list[dict[str, Any]]:
        """A call's operator and operands (an expression's terms, or a call term's value)."""
        if call.op_ref is not None:
            op = self.term(call.op_ref)
            if self.locations:
                start, text = self.src.operator_text(call)
                op = _with_loc(op, self.loc_at(call.op_ref.location, start, start + len(text)))
        elif self.src.is_unary_minus(call):
            loc = None
            if self.locations:
                tok = self.src.tok(call.location)
                loc = self.tok_loc(tok, tok)
            return [_op_ref("minus", loc), _term("number", GoNumber("0"), loc), self.term(call.args[1])]
        else:
            op = self.operator(call.op, call.args[0])
        return [op] + [self.term(a) for a in call.args]

    def term(self, t: ast.Term) -> dict[str, Any]:
        loc = self.term_loc(t)
        if isinstance(t, ast.Scalar):
            return self.scalar(t, loc)
        if isinstance(t, ast.Var):
            name = t.name
            if name.startswith(_WILDCARD):
                name = "$" + name[len(_WILDCARD) :]
            return _term("var", name, loc)
        if isinstance(t, ast.Ref):
            return _term("ref", [self.term(t.head)] + [self.term(p) for p in t.path], loc)
        if isinstance(t, ast.Call):
            return _term("call", self.call_terms(t), loc)
        if isinstance(t, ast.Array):
            return _term("array", [self.term(x) for x in t.items], loc)
        if isinstance(t, ast.SetTerm):
            return _term("set", sort_set_items([self.term(x) for x in t.items]), loc)
        if isinstance(t, ast.Object):
            return _term("object", sort_object_items([[self.term(k), self.term(v)] for k, v in t.items]), loc)
        if isinstance(t, ast.ObjectCompr):
            value = {"key": self.term(t.key), "value": self.term(t.value), "body": self.body(t.body)}
            return _term("objectcomprehension", value, loc)
        if isinstance(t, (ast.ArrayCompr, ast.SetCompr)):
            kind = "arraycomprehension" if isinstance(t, ast.ArrayCompr) else "setcomprehension"
            return _term(kind, {"term": self.term(t.term), "body": self.body(t.body)}, loc)
        if isinstance(t, ast.TemplateString):
            return _term("templatestring", {"parts": self.template_parts(t), "multi_line": bool(t.raw)}, loc)
        raise TypeError(f"unexpected term {type(t).__name__}")

    def scalar(self, t: ast.Scalar, loc: dict[str, Any] | None) -> dict[str, Any]:
        v = t.value
        if v is None:
            return _term("null", {}, loc)
        if isinstance(v, bool):
            return _term("boolean", v, loc)
        if isinstance(v, str):
            return _term("string", v, loc)
        if t.text is None and self.src.kinds[self.src.tok(t.location)] == "-":
            return _term("number", GoNumber("0"), loc)  # the 0 of `-x`
        return _term("number", GoNumber(t.text if t.text is not None else str(v)), loc)

    def template_parts(self, t: ast.TemplateString) -> list[dict[str, Any]]:
        """Text pieces as string terms, literals as terms, other parts as expressions."""
        src = self.src
        pieces: list[int] = []
        if self.locations:  # the template's piece tokens, in order
            i = src.tok(t.location)
            while i < len(src.kinds) and src.kinds[i] in (TMPL, TMPLC):
                pieces.append(i)
                piece = src.toks.values.get(i)
                if not isinstance(piece, tuple) or piece[1]:
                    break
                i = src.match[i] + 1
        out: list[dict[str, Any]] = []
        k = 0
        for part in t.parts:
            if isinstance(part, str):
                loc = self.tok_loc(pieces[k], pieces[k]) if k < len(pieces) else None
                out.append(_term("string", part, loc))
                continue
            if isinstance(part, ast.Scalar):
                out.append(self.term(part))
            else:
                expr = ast.Expr(part, False, (), part.location)
                out.append(self.expr(expr, 0))
            k += 1
        return out


# ---------------------------------------------------------------- helpers


def _term(kind: str, value: Any, loc: dict[str, Any] | None) -> dict[str, Any]:
    """A term as OPA writes it: ``location`` (when asked for), ``type``, ``value``."""
    if loc is None:
        return {"type": kind, "value": value}
    return {"location": loc, "type": kind, "value": value}


def _op_ref(name: str, loc: dict[str, Any] | None) -> dict[str, Any]:
    """The ref term naming a builtin (``internal.member_2`` is ``internal["member_2"]``)."""
    parts = name.split(".")
    items = [_term("var", parts[0], loc)] + [_term("string", p, loc) for p in parts[1:]]
    return _term("ref", items, loc)


def _with_loc(term: dict[str, Any], loc: dict[str, Any] | None) -> dict[str, Any]:
    if loc is None:
        return term
    return {"location": loc, "type": term["type"], "value": term["value"]}


def _is_true(t: ast.Term) -> bool:
    return isinstance(t, ast.Scalar) and t.value is True


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")


def _future_import(imp: ast.Import, keyword: str) -> bool:
    path = imp.path
    if not isinstance(path.head, ast.Var) or path.head.name != "future":
        return False
    names = [p.value for p in path.path if isinstance(p, ast.Scalar)]
    return names == ["keywords"] or names == ["keywords", keyword]
