"""The opt-in logical keywords of OPA 1.20: ``and``, ``or`` and body ``not``.

``import future.keywords.and`` / ``.or`` (or ``import future.keywords``) make
``and``/``or`` infix operators between body expressions; ``import
future.keywords.not`` makes ``not`` negate a whole body (``not { ... }``, or
``not <expr>`` with every sub-expression kept inside the negation). Operands
are single expressions, explicit bodies ``{ ... }`` or parenthesised groups;
``not`` binds tighter than ``and``, which binds tighter than ``or``; a
trailing ``with`` applies to the whole expression. (OPA's docs: "Rego
Keywords: and, or"; the grammar follows OPA's parser tests.)

The AST has no nodes for these, so they are written with existing ones, each
operand becoming a closure (a comprehension) that sees the enclosing body's
variables and keeps its own:

- ``A or B``   -> ``({true | A} | {true | B})[true]``
- ``A and B``  -> ``({true | A} & {true | B})[true]``
- ``not BODY`` -> ``not [true | BODY][0]`` (plain ``not x`` when that is the
  same thing: one expression with no part that classic ``not`` evaluates
  before the negation, see :mod:`pyrego.compile.rewrite`)

Each yields one result at most, as OPA's do (no evaluation branching).
Differences from OPA: both operands are evaluated (OPA short-circuits, which
only shows with errors or side effects), and OPA's compile-time checks on
operands ("cannot assign vars inside implicit or operand") are not made.
"""

from __future__ import annotations

import dataclasses

from pyrego.ast import nodes as ast
from pyrego.compile.rewrite import negation_is_whole
from pyrego.errors import Location, RegoParseError
from pyrego.parse.exprs import ExprParser
from pyrego.parse.lexer import EOF, ILLEGAL, KEYWORD_KINDS, TMPL, TMPLC
from pyrego.parse.terms import FatalParseError, value_name

_LOGICAL = ("and", "or")


class LogicParser(ExprParser):
    """ExprParser plus the logical keywords (when imported)."""

    def __init__(self, text: str, filename: str, future: set[str]) -> None:
        super().__init__(text, filename, future)
        #: `import future.keywords.not`: `not` negates a whole body
        self.not_body = False
        #: ids of the expressions standing for and/or/not (rule heads reject them)
        self.logical_ids: set[int] = set()
        #: whether `and`/`or` are keywords
        self.logic = "and" in self.future or "or" in self.future

    def use_keywords(self, keywords: set[str]) -> None:
        super().use_keywords(keywords)
        self.logic = "and" in keywords or "or" in keywords

    # ------------------------------------------------------------ desugaring

    def make_binary(self, op: str, lhs: ast.Body, rhs: ast.Body, loc: Location) -> ast.Expr:
        true = ast.Scalar(True, loc)
        self.closures = True
        union = ast.Call(op, (ast.SetCompr(true, lhs, loc), ast.SetCompr(true, rhs, loc)), loc)
        expr = ast.Expr(ast.Ref(union, (true,), loc), False, (), loc)
        self.logical_ids.add(id(expr))
        return expr

    def make_not(self, body: ast.Body, explicit: bool, loc: Location) -> ast.Expr:
        if not explicit and len(body) == 1:
            inner = body[0]
            stmt = inner.statement
            if (
                not inner.negated
                and not inner.with_mods
                and not isinstance(stmt, (ast.Assign, ast.Unify, ast.SomeVars, ast.SomeIn, ast.Every))
                and id(inner) not in self.logical_ids
                and negation_is_whole(stmt)
            ):
                return ast.Expr(stmt, True, (), loc)  # plain negation means the same
        zero = ast.Scalar(0, loc)
        self.closures = True
        expr = ast.Expr(ast.Ref(ast.ArrayCompr(ast.Scalar(True, loc), body, loc), (zero,), loc), True, (), loc)
        self.logical_ids.add(id(expr))
        return expr

    # ------------------------------------------------------------ grammar

    def parse_literal(self) -> ast.Expr:
        if not self.logic and not self.not_body:
            return ExprParser.parse_literal(self)
        k = self.kind
        if k in KEYWORD_KINDS and self.next_is_ref():
            self.kind = "ident"  # `not.x`, `or[0]`: a keyword as a ref head
        elif k == "some":
            return self.parse_some(self.loc())
        elif k == "every":
            return self.parse_every(self.loc())
        return self.parse_chain(first=True)

    def parse_chain(self, first: bool) -> ast.Expr:
        """``A or B and C ... [with ...]``; a trailing ``with`` covers it all."""
        expr, ops = self.parse_or(first)
        if self.kind == "with":
            with_loc = self.loc()
            withs = self.parse_with()
            expr = dataclasses.replace(expr, with_mods=expr.with_mods + withs)
            if self.kind in _LOGICAL and not ops:  # (after a whole chain, the body's check reports it)
                raise self.error_at(
                    with_loc,
                    f"`with` modifier is not allowed on operand of `{self.kind}` (hint: Wrap the operand in "
                    f"`(...)` or `{{...}}` to scope, or move `with` after the `{self.kind}` expression to "
                    "apply it to the whole expression)",
                )
        return expr

    # Each operator nests the expression one level deeper (the left operand
    # goes inside), so it counts against the nesting limit.

    def parse_or(self, first: bool) -> tuple[ast.Expr, int]:
        depth = self.depth
        try:
            lhs, ops = self.parse_and(first)
            while self.kind == "or":
                self.enter()
                self.advance()
                rhs, more = self.parse_and(False)
                lhs = self.make_binary("or", _body(lhs), _body(rhs), _loc(lhs))
                ops += 1 + more
            return _expr(lhs), ops
        finally:
            self.depth = depth

    def parse_and(self, first: bool) -> tuple[ast.Expr | ast.Body, int]:
        depth = self.depth
        try:
            lhs = self.parse_operand(first)
            ops = 0
            while self.kind == "and":
                self.enter()
                self.advance()
                rhs = self.parse_operand(False)
                lhs = self.make_binary("and", _body(lhs), _body(rhs), _loc(lhs))
                ops += 1
            return lhs, ops
        finally:
            self.depth = depth

    def parse_operand(self, first: bool) -> ast.Expr | ast.Body:
        """One operand: an expression, `not ...`, `( group )` or `{ body }`.
        A body (a tuple) is returned only where braces open one."""
        start = self.pos
        k = self.kind
        if k == "{" and self.logic:
            body = self.brace_operand(first)
            if body is not None:
                return body
        if k == "not":
            expr = self.parse_not()
        elif k == "(":
            expr = self.parse_paren_operand(first)
        elif k == "some" or k == "every":
            raise self.illegal()
        else:
            loc = self.loc()
            expr = ast.Expr(self.parse_expr(), False, (), loc)
        if k == "{" and self.kind in _LOGICAL:
            raise self.brace_led_error(start, self.kind)
        return expr

    def brace_operand(self, first: bool) -> ast.Body | None:
        """`{ ... }` as an explicit body. At the start of a statement it is one
        only when `and`/`or` follows (else it is a set or object term); after
        an operator the braces must hold a body."""
        state = self.save()
        start = self.pos
        if first and not self.braces_before_logical(start):
            return None
        try:
            body = self.parse_braced_body()
        except FatalParseError:
            raise
        except RegoParseError as err:
            if self.kinds[start + 1] == "}":
                raise  # `{} and x`, `x and {}`: an empty body
            self.restore(state)
            try:  # braces holding a value, not a body?
                self.parse_expr()
            except FatalParseError:
                raise
            except RegoParseError:
                raise err from None
            op = self.kind if first else self.kind_at(start - 1)
            raise self.brace_led_error(start, op) from None
        if first and self.kind not in _LOGICAL:
            self.restore(state)
            return None
        return body

    def braces_before_logical(self, start: int) -> bool:
        """Whether the braces opening at token ``start`` close (brackets
        balanced) right before `and`/`or`: then they hold an operand's body."""
        closing = {"}": "{", "]": "[", ")": "("}
        stack: list[str] = []
        p = start
        while p < self.n:
            k = self.kinds[p]
            if k == "{" or k == "[" or k == "(":
                stack.append(k)
            elif k in closing:
                if not stack or stack.pop() != closing[k]:
                    return False
                if not stack:
                    return self.kind_at(p + 1) in _LOGICAL
            elif k == TMPL or k == TMPLC:
                piece = self.values.get(p)
                if isinstance(piece, tuple) and not piece[1]:
                    stack.append("{")  # a template string's `{`, closed by a `}` token
            elif k == EOF or k == ILLEGAL:
                return False
            p += 1
        return False

    def parse_braced_body(self) -> ast.Body:
        self.advance()  # '{'
        body = self.parse_body("}")
        self.advance()
        return body

    def brace_led_error(self, start: int, op: str) -> RegoParseError:
        text = self.source_text(start, self.pos)
        return self.error_at(
            self.loc(start),
            f"operand of `{op}` cannot begin with `{{` unless the braces hold a body "
            f"(hint: wrap the operand to keep the value: `({text}) {op} ...`)",
        )

    def source_text(self, first: int, end: int) -> str:
        """The source of tokens first..end-1."""
        last = max(first, end - 1)
        stop = self.toks.starts[last] + len(self.texts[last])
        return self.text[self.toks.starts[first] : stop]

    def parse_not(self) -> ast.Expr:
        loc = self.loc()
        self.advance()
        k = self.kind
        if k == "some":
            raise self.illegal("illegal negation of 'some'")
        if k == "every":
            raise self.illegal("illegal negation of 'every'")
        if not self.not_body:
            return ast.Expr(self.parse_expr(), True, (), loc)  # classic: negates one expression
        if k == "{":
            start = self.pos
            state = self.save()
            try:
                body = self.parse_braced_body()
            except FatalParseError:
                raise
            except RegoParseError as err:
                if self.kinds[start + 1] == "}":
                    raise  # `not {}`: an empty body
                self.restore(state)
                try:
                    what = value_name(self.parse_term())
                    self.restore(state)
                    self.parse_expr()
                except FatalParseError:
                    raise
                except RegoParseError:
                    raise err from None
                text = self.source_text(start, self.pos)
                raise self.error_at(
                    self.loc(start),
                    f"`{{...}}` in an operand position must contain expression(s), got: {what} "
                    f"(hint: write `not ({text})` to negate the value, or `not {{{text}}}` for a body holding it)",
                ) from None
            return self.make_not(body, True, loc)
        if k == "(":
            return self.make_not((self.parse_paren_operand(False, True),), False, loc)
        inner_loc = self.loc()
        inner = ast.Expr(self.parse_expr(), False, (), inner_loc)
        return self.make_not((inner,), False, loc)

    def parse_paren_operand(self, first: bool, group: bool | None = None) -> ast.Expr:
        """`( ... )`: a parenthesised term (which may continue, as in
        `(1 + 2) > 3`), or else a group of logical expressions."""
        state = self.save()
        loc = self.loc()
        try:
            return ast.Expr(self.parse_expr(), False, (), loc)
        except FatalParseError:
            raise
        except RegoParseError as err:
            if not (self.logic if group is None else group):
                raise  # groups come with the and/or keywords (and with body `not`)
            term_error = err
        self.restore(state)
        self.advance()  # '('
        if self.kind == ")":
            if first:
                raise term_error
            raise self.error("empty parenthesized group")
        if self.kind == "{" and self.logic:
            inner = self.save()
            start = self.pos
            try:
                self.parse_braced_body()
                if self.kind == ")":
                    text = self.source_text(start, self.pos)
                    raise self.error_at(
                        self.loc(start),
                        f"`(...)` in an operand position cannot contain a body (hint: drop the parens to keep "
                        f"the body: `{text}`)",
                    )
            except FatalParseError:
                raise
            except RegoParseError as e:
                if e.message.startswith("`(...)`"):
                    raise
            self.restore(inner)
        self.enter()
        try:
            expr = self.parse_chain(first=True)
        finally:
            self.depth -= 1
        if not (id(expr) in self.logical_ids or expr.with_mods or expr.negated):
            raise term_error  # a plain expression: the term reading's error stands
        if self.kind != ")":
            raise self.error("expected ) to close parenthesized group")
        self.advance()
        return expr


def _body(x: ast.Expr | ast.Body) -> ast.Body:
    return x if isinstance(x, tuple) else (x,)


def _loc(x: ast.Expr | ast.Body) -> Location:
    return x[0].location if isinstance(x, tuple) else x.location


def _expr(x: ast.Expr | ast.Body) -> ast.Expr:
    # A lone explicit body never reaches here: braces open one only before
    # or after `and`/`or`.
    assert not isinstance(x, tuple)
    return x

