"""Rules in OPA's AST JSON: what OPA's parser makes of each way of writing one.

OPA's parser builds a rule in one of several ways, and each leaves its own
trace in the AST (names, keys, generated values and bodies, locations):

- ``default p := v``: the body ``true`` at the ``default`` keyword, which is
  also all of the rule's location text.
- ``p contains x`` with no body: the body ``true`` at the rule's first token;
  the rule takes the head's location.
- ``p := v``, ``p = v``, ``f(x) := v``, ``p[x] := v``, ``a.b := v`` with no
  body: read as a body expression first and turned into a rule, so the rule
  and head locations are the whole statement and the body ``true`` sits at
  the value.
- a rule with a body (``{ ... }``, or ``if`` and one expression): the value
  ``true`` when none is written, without a location; ``p[x] if`` keeps ``x``
  as its key when ``x`` is not ground; ``p[x] { ... }`` (v0) names ``p``.
- every extra ``{ ... }`` body after a rule is a rule of its own, with a copy
  of the head that takes the body's location throughout;
- each ``else`` is a rule holding a copy of the head at the ``else`` keyword;
  an ``else`` body without braces, or no body, takes the ``else``'s location
  throughout.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.parse.lexer import IDENT

if TYPE_CHECKING:
    from pyrego.ast.opa_json import ModuleJSON

__all__ = ["RuleJSON"]


class RuleJSON:
    """One rule (with its ``else`` chain) of a :class:`~pyrego.ast.opa_json.ModuleJSON`."""

    def __init__(self, builder: ModuleJSON, rule: ast.Rule) -> None:
        self.b = builder
        self.rule = rule
        self.src = builder.src

    # ------------------------------------------------------------ shape

    def value_generated(self, head: ast.RuleHead) -> bool:
        """Whether the head's value is the ``true`` the parser supplies."""
        value = head.value
        if not (isinstance(value, ast.Scalar) and value.value is True):
            return False
        return self.src.kinds[self.src.tok(value.location)] != "true"

    def head_last(self, rule: ast.Rule) -> int:
        return self.src.head_last(rule, self.value_generated(rule.head))

    def after_head(self, rule: ast.Rule) -> tuple[str, str]:
        """The kind and text of the token after a rule's head."""
        i = self.head_last(rule) + 1
        return self.src.kinds[i], self.src.texts[i]

    def form(self, rule: ast.Rule) -> str:
        """``default``, ``contains`` (no body), ``expr`` (no body: read as an
        expression), ``if`` or ``braces``."""
        if rule.default:
            return "default"
        kind, text = self.after_head(rule)
        if kind == IDENT and text == "if":
            return "if"
        if kind == "{" and rule.body:
            return "braces"
        if rule.head.key is not None and rule.head.value is None and self.uses_contains(rule):
            return "contains"
        return "expr"

    def uses_contains(self, rule: ast.Rule) -> bool:
        key = rule.head.key
        assert key is not None
        tok = self.src.extent(key)[0] - 1
        return self.src.kinds[tok] == IDENT and self.src.texts[tok] == "contains"

    # ------------------------------------------------------------ rule

    def json(self, annotations: list[dict[str, Any]]) -> dict[str, Any]:
        b = self.b
        rule = self.rule
        src = self.src
        form = self.form(rule)
        first = src.tok(rule.location)
        head_loc = self.head_loc(rule, form)
        if form == "default":
            rule_loc = b.tok_loc(first, first)
            body = [_true_expr(rule_loc)]
        elif form == "contains":
            body = [_true_expr(b.tok_loc(first, first))]
            rule_loc = head_loc
        elif form == "expr":
            value = rule.head.value if rule.head.value is not None else rule.head.key
            true_loc = b.term_loc(value) if value is not None and not self.value_generated(rule.head) else head_loc
            body = [_true_expr(true_loc)]
            rule_loc = head_loc
        else:
            body = b.body(rule.body)
            rule_loc = b.tok_loc(first, self.rule_last(rule))
        chained = src.kinds[first] == "{"
        if chained:  # an extra body: the head copy takes the body's location throughout
            rule_loc = b.tok_loc(first, src.match[first])
            head = self.head(rule, form, rule_loc, override=rule_loc)
        else:
            head = self.head(rule, form, head_loc)
        out: dict[str, Any] = {}
        if annotations:
            out["annotations"] = annotations
        out["body"] = body
        if rule.default:
            out["default"] = True
        if rule.else_ is not None:
            out["else"] = self.else_(rule.else_, rule)
        out["head"] = head
        if rule_loc is not None:
            out["location"] = rule_loc
        return out

    def rule_last(self, rule: ast.Rule) -> int:
        """The last token of a rule with a body, its ``else`` chain included."""
        while rule.else_ is not None:
            rule = rule.else_
        src = self.src
        if rule.body:
            last = self.b.expr_last(rule.body[-1])
            nxt = last + 1
            return nxt if src.kinds[nxt] == "}" and self.closes_rule_body(rule, nxt) else last
        return self.head_last(rule)

    def closes_rule_body(self, rule: ast.Rule, close: int) -> bool:
        """Whether the ``}`` at ``close`` closes this rule's own body (not an enclosing one)."""
        open_ = self.src.match.get(close, -1)
        return open_ > self.head_last(rule)

    def head_loc(self, rule: ast.Rule, form: str) -> dict[str, Any] | None:
        b = self.b
        src = self.src
        first = src.tok(rule.head.location)
        if form == "expr":  # the whole statement
            return b.tok_loc(first, self.head_last(rule))
        return b.tok_loc(first, self.head_last(rule))

    # ------------------------------------------------------------ head

    def head(
        self, rule: ast.Rule, form: str, loc: dict[str, Any] | None, override: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        b = self.b
        saved = b.override
        if override is not None:
            b.override = override
        try:
            return self.head_json(rule, form, loc)
        finally:
            b.override = saved

    def head_json(self, rule: ast.Rule, form: str, loc: dict[str, Any] | None) -> dict[str, Any]:
        b = self.b
        head = rule.head
        ref = [b.term(head.ref.head)] + [b.term(p) for p in head.ref.path]
        name, key = self.name_and_key(rule, form)
        out: dict[str, Any] = {}
        if name is not None:
            out["name"] = name
        if head.args is not None and head.args:
            out["args"] = [b.term(a) for a in head.args]
        if key is not None:
            out["key"] = b.term(key)
        if head.value is not None:
            if self.value_generated(head):
                if form == "if" and len(ref) == 2 and head.args is None:
                    out["value"] = _true_term(loc if b.override is None else b.override)
                else:
                    out["value"] = _true_term(b.override)  # no location of its own
            else:
                out["value"] = b.term(head.value)
        if head.assign:
            out["assign"] = True
        out["ref"] = ref
        if loc is not None:
            out["location"] = loc
        return out

    def name_and_key(self, rule: ast.Rule, form: str) -> tuple[str | None, ast.Term | None]:
        """The head's ``name`` and ``key`` as OPA's parser sets them."""
        head = rule.head
        ref_head = head.ref.head
        var_name = ref_head.name if isinstance(ref_head, ast.Var) else None
        n = 1 + len(head.ref.path)
        if head.key is not None and head.value is None:  # a multi-value rule
            return (var_name if n == 1 else None), head.key
        if n == 1:
            return var_name, None
        if n != 2 or head.args is not None:
            return None, None
        part = head.ref.path[0]
        dynamic = not _ground(part) or isinstance(part, ast.Ref)
        generated = self.value_generated(head)
        if form == "if":
            return (None if generated else var_name), (part if dynamic else None)
        if form == "braces":
            return var_name, part
        if form == "expr":  # read as `p[k] = v`: a partial object rule, named (OPA's back-compat)
            return var_name, part
        return None, None

    # ------------------------------------------------------------ else

    def else_(self, rule: ast.Rule, first: ast.Rule) -> dict[str, Any]:
        b = self.b
        src = self.src
        else_tok = src.tok(rule.location)
        last = self.rule_last(rule)
        loc = b.tok_loc(else_tok, last)
        head = rule.head
        generated = self.value_generated(head)
        head_last = src.extent(head.value)[1] if head.value is not None and not generated else else_tok
        head_loc = b.tok_loc(else_tok, head_last)
        after = head_last + 1
        braced = src.kinds[after] == "{" or (
            src.kinds[after] == IDENT and src.texts[after] == "if" and src.kinds[after + 1] == "{"
        )
        if not rule.body:
            body = [_true_expr(loc)]
        elif braced:
            body = b.body(rule.body)
        else:
            body = b.body(rule.body, loc)
        out: dict[str, Any] = {"body": body}
        if rule.else_ is not None:
            out["else"] = self.else_(rule.else_, first)
        out["head"] = self.else_head(rule, first, head_loc)
        if loc is not None:
            out["location"] = loc
        return out

    def else_head(self, rule: ast.Rule, first: ast.Rule, loc: dict[str, Any] | None) -> dict[str, Any]:
        """A copy of the first rule's head (its terms keep their locations)
        with this branch's value, at the ``else`` keyword."""
        b = self.b
        head = rule.head
        copy = self.head_json(first, self.form(first), None)
        out: dict[str, Any] = {}
        for k in ("name", "args"):
            if k in copy:
                out[k] = copy[k]
        if head.args is not None and head.args:
            out["args"] = [b.term(a) for a in head.args]  # fresh wildcards
        if head.value is not None:
            out["value"] = _true_term(None) if self.value_generated(head) else b.term(head.value)
        if head.assign or (self.value_generated(head) and first.head.assign):
            out["assign"] = True
        out["ref"] = copy["ref"]
        if loc is not None:
            out["location"] = loc
        return out


def _true_term(loc: dict[str, Any] | None) -> dict[str, Any]:
    if loc is None:
        return {"type": "boolean", "value": True}
    return {"location": loc, "type": "boolean", "value": True}


def _true_expr(loc: dict[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"index": 0}
    if loc is not None:
        out["location"] = loc
    out["terms"] = _true_term(loc)
    return out


def _ground(t: ast.Term) -> bool:
    """Whether a term holds no variables (OPA's IsGround)."""
    if isinstance(t, ast.Scalar):
        return True
    if isinstance(t, ast.Var):
        return False
    if isinstance(t, ast.Ref):
        return _ground(t.head) and all(_ground(p) for p in t.path)
    if isinstance(t, (ast.Array, ast.SetTerm)):
        return all(_ground(x) for x in t.items)
    if isinstance(t, ast.Object):
        return all(_ground(k) and _ground(v) for k, v in t.items)
    if isinstance(t, ast.Call):
        return all(_ground(a) for a in t.args)
    return False
