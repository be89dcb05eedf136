"""Expressions and bodies: infix operators, ``in``, ``:=``/``=``, ``with``,
``some`` and ``every``, and the bodies they make up (OPA's ``parseTermIn``,
``parseExpr``, ``parseLiteral``, ``parseQuery``). Terms are read by
:class:`pyrego.parse.terms.TermParser`, below this layer.
"""

from __future__ import annotations

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Expr
from pyrego.errors import Location, RegoParseError
from pyrego.parse.lexer import IDENT, ILLEGAL, KEYWORD_KINDS, TOKEN_NAMES
from pyrego.parse.nodes import ExprTwin, new_call, new_expr, new_ref
from pyrego.parse.terms import MAX_DEPTH, FatalParseError, TermParser, memo_key

__all__ = ["MEMBER_2", "MEMBER_3", "ExprParser"]

# Infix operators: token -> (precedence, builtin name). Lowest binds loosest;
# all are left-associative. ``in`` sits below all of these (parse_term_in).
_BINARY: dict[str, tuple[int, str]] = {
    "==": (1, "equal"),
    "!=": (1, "neq"),
    "<": (1, "lt"),
    "<=": (1, "lte"),
    ">": (1, "gt"),
    ">=": (1, "gte"),
    "|": (2, "or"),
    "&": (3, "and"),
    "+": (4, "plus"),
    "-": (4, "minus"),
    "*": (5, "mul"),
    "/": (5, "div"),
    "%": (5, "rem"),
}

MEMBER_2 = "internal.member_2"
MEMBER_3 = "internal.member_3"


class ExprParser(TermParser):
    """The expression and body grammar on top of the terms. See module docs."""

    # ------------------------------------------------------------ infix terms

    def parse_term_in(self, keyval: bool) -> ast.Term:
        """A term with infix operators, ``in`` being loosest. With ``keyval``,
        ``k, v in xs`` is tried first (not inside lists, where ',' separates)."""
        lhs = self.parse_term()  # parse_binary(1), inlined
        k = self.kind
        op = _BINARY.get(k)
        if op is not None:
            lhs = self.climb(lhs, op, 1)
            k = self.kind
        if k != "in" and (k != "," or not keyval):
            # no `in` follows (nor `, v in`): all _term_in_chain would do is
            # read a keyword before '.' or '[' as a name
            if k in KEYWORD_KINDS:
                self.keyword_as_ident()
            return lhs
        depth = self.depth  # a chain of `in`s nests like one of operators
        try:
            return self._term_in_chain(lhs, keyval)
        finally:
            self.depth = depth

    def _term_in_chain(self, lhs: ast.Term, keyval: bool) -> ast.Term:
        while True:
            if keyval and self.kind == ",":
                state = self.save()
                try:
                    self.advance()
                    mhs = self.parse_binary(1)
                    if self.kind == "in":
                        self.advance()
                        rhs = self.parse_binary(1)
                        lhs = new_call(MEMBER_3, (lhs, mhs, rhs), lhs.location)
                        self.enter()
                        if self.kind == "in":
                            continue
                        return lhs
                except FatalParseError:
                    raise
                except RegoParseError:
                    pass
                self.restore(state)
            self.keyword_as_ident()
            if self.kind != "in":
                return lhs
            self.advance()
            rhs = self.parse_binary(1)
            lhs = new_call(MEMBER_2, (lhs, rhs), lhs.location)
            self.enter()
            if self.kind != "in":
                return lhs

    def parse_binary(self, min_prec: int) -> ast.Term:
        """Precedence climbing over relations, ``|``, ``&``, ``+ -``, ``* / %``:
        a term and the operators of at least ``min_prec`` after it."""
        lhs = self.parse_term()
        op = _BINARY.get(self.kind)
        if op is None or op[0] < min_prec:
            return lhs
        return self.climb(lhs, op, min_prec)

    def climb(self, lhs: ast.Term, op: tuple[int, str], min_prec: int) -> ast.Term:
        """``lhs`` followed by the operator ``op`` (the current token) and more
        of at least ``min_prec``. Each operator nests the result a level
        deeper (left-associative), so long chains count against the nesting
        limit, as in OPA. A right operand is climbed further only when a
        tighter operator follows it (as parse_binary(prec + 1) would)."""
        binary = _BINARY
        kinds = self.kinds
        depth = self.depth
        try:
            while True:
                self.depth += 1  # enter(), inlined
                if self.depth > MAX_DEPTH:
                    raise self.too_deep()
                # advance() (an operator is never the last token), inlined
                p = self.pos + 1
                k = kinds[p]
                if k == IDENT:
                    if self.texts[p] in self.future:
                        k = self.texts[p]
                elif k == ILLEGAL:
                    self.advance()  # raises the lexer's error, if it has one
                self.pos = p
                self.kind = k
                prec = op[0]
                rhs = self.parse_term()
                nxt = binary.get(self.kind)
                if nxt is not None and nxt[0] > prec:
                    rhs = self.climb(rhs, nxt, prec + 1)
                    nxt = binary.get(self.kind)
                lhs = new_call(op[1], (lhs, rhs), lhs.location)
                if nxt is None or nxt[0] < min_prec:
                    return lhs
                op = nxt
        finally:
            self.depth = depth

    # ------------------------------------------------------------ expressions

    def parse_body(self, end: str) -> ast.Body:
        self.enter()
        try:
            return self.parse_query(False, end)
        finally:
            self.depth -= 1

    def parse_query(self, require_semi: bool, end: str) -> ast.Body:
        """Expressions separated by ';' or newlines, up to ``end`` (not consumed).
        With ``require_semi`` (top level), a newline ends the body."""
        if self.kind == end:
            raise self.error("found empty body")
        body: list[ast.Expr] = []
        while True:
            body.append(self.parse_literal())
            k = self.kind
            if k == ";":
                self.advance()
                continue
            if k == end or require_semi:
                return tuple(body)
            if self.gaps[self.pos] != 2:
                raise self.illegal(f"expected \\n or ; or {TOKEN_NAMES.get(end, end)}")

    def parse_literal(self) -> ast.Expr:
        pos = self.pos
        loc = self.locs[pos] or self.make_loc(pos)
        k = self.kind
        negated = False
        if k in KEYWORD_KINDS:  # (most expressions start with a name: skip all this)
            if self.next_is_ref():
                self.kind = IDENT
                k = IDENT
            elif k == "not":
                self.advance()
                negated = True
                k = self.kind
            if k == "some":
                if negated:
                    raise self.illegal("illegal negation of 'some'")
                return self.parse_some(loc)
            if k == "every":
                if negated:
                    raise self.illegal("illegal negation of 'every'")
                return self.parse_every(loc)
        # parse_expr(), inlined
        head = self.body_head
        if head is None:
            lhs = self.parse_term_in(True)
        else:
            lhs = self.body_head_term(head)
        stmt: ast.Statement = lhs
        k = self.kind
        if k == ":=":
            self.advance()
            stmt = ast.Assign(lhs, self.parse_term_in(True), lhs.location)
            k = self.kind
        elif k == "=":
            self.advance()
            stmt = ast.Unify(lhs, self.parse_term_in(True), lhs.location)
            k = self.kind
        expr = ExprTwin()  # new_expr(stmt, negated, withs, loc), inlined
        expr.statement = stmt
        expr.negated = negated
        expr.with_mods = self.parse_with() if k == "with" else ()
        expr.location = loc
        expr.__class__ = Expr  # type: ignore[assignment]
        return expr  # type: ignore[return-value]

    def body_head_term(self, head: tuple[int, str, int, ast.Term, int, str]) -> ast.Term:
        """parse_term_in(True) for a body's first expression, which
        braces_hold_no_collection read just before as parse_term_in(False),
        with the same tokens, keywords and nesting depth. That is the same
        term: the two readings differ only where ',' follows the first term,
        and then braces_hold_no_collection keeps nothing."""
        self.body_head = None
        pos, kind, depth, term, end, end_kind = head
        if pos != self.pos or kind != self.kind or depth != self.depth:
            return self.parse_term_in(True)
        self.pos = end
        self.kind = end_kind
        return term

    def parse_expr(self) -> ast.Statement:
        lhs = self.parse_term_in(True)
        k = self.kind
        if k == ":=":
            self.advance()
            return ast.Assign(lhs, self.parse_term_in(True), lhs.location)
        if k == "=":
            self.advance()
            return ast.Unify(lhs, self.parse_term_in(True), lhs.location)
        return lhs

    def parse_with(self) -> tuple[ast.With, ...]:
        withs: list[ast.With] = []
        while True:
            loc = self.loc()
            self.advance()
            if self.kind != IDENT:
                raise self.illegal("expected ident")  # sic: OPA's wording here
            target = self.parse_term()
            if isinstance(target, ast.Var):
                target = new_ref(target, (), target.location)
            elif not isinstance(target, ast.Ref):
                raise self.illegal("expected with target path")
            if self.kind != "as":
                raise self.illegal("expected as keyword")
            self.advance()
            withs.append(ast.With(target, self.parse_term_in(True), loc))
            if self.kind != "with":
                return tuple(withs)

    def parse_some(self, loc: Location) -> ast.Expr:
        state = self.save()
        self.advance()
        first = self.save()
        term: ast.Term | None
        try:
            term = self.parse_term_in(True)
        except FatalParseError:
            raise
        except RegoParseError:
            # OPA keeps what parsed before the error: when that is already
            # `x in xs` the error stands, else it falls back to `some x, y`.
            if self.member_parsed(first):
                raise
            term = None
        if isinstance(term, ast.Call):
            if term.op == MEMBER_2 or term.op == MEMBER_3:
                if len(term.args) != (2 if term.op == MEMBER_2 else 3):
                    raise self.illegal("illegal domain")
                if term.op == MEMBER_2:
                    stmt = ast.SomeIn(None, term.args[0], term.args[1], loc)
                else:
                    stmt = ast.SomeIn(term.args[0], term.args[1], term.args[2], loc)
                withs = self.parse_with() if self.kind == "with" else ()
                return new_expr(stmt, False, withs, loc)
            raise self.illegal("expected `x in xs` or `x, y in xs` expression")
        self.restore(state)
        names: list[ast.Var] = []
        while True:
            self.advance()
            if self.kind != IDENT:
                raise self.illegal("expected var")
            names.append(self.parse_var())
            self.advance()
            if self.kind != ",":
                break
        return new_expr(ast.SomeVars(tuple(names), loc), False, (), loc)

    def member_parsed(self, start: tuple[int, str]) -> bool:
        """Whether `x in y` / `k, v in y` parsed from ``start`` before a failure
        (judged from the terms read)."""
        p = self.term_end(*start)
        if p is None:
            return False
        if self.kinds[p] == ",":
            p = self.term_end(p + 1, self.kind_at(p + 1))
            if p is None:
                return False
        if self.kind_at(p) != "in":
            return False
        return self.term_end(p + 1, self.kind_at(p + 1)) is not None

    def term_end(self, pos: int, kind: str) -> int | None:
        """Where the term read at token ``pos`` as ``kind`` ended, if it was
        read and parsed: from the memo, or right after a lone token (which
        the memo leaves out; every caller asks about a term its parse did
        read). None when it failed or was never read."""
        if self.is_lone_token(pos, kind):
            return pos + 1
        hit = self.cache.get(memo_key(pos, kind))
        if hit is None or hit[1] is not None:
            return None
        return hit[2]

    def parse_every(self, loc: Location) -> ast.Expr:
        self.advance()
        term = self.parse_term_in(True)
        if not isinstance(term, ast.Call) or term.op not in (MEMBER_2, MEMBER_3):
            raise self.illegal("expected `x[, y] in xs { ... }` expression")
        key: ast.Term | None = None
        if term.op == MEMBER_2:
            if len(term.args) != 2:
                raise self.illegal("illegal domain")
            value, domain = term.args
        else:
            if len(term.args) != 3:
                raise self.illegal("illegal domain")
            key, value, domain = term.args
            if not isinstance(key, ast.Var):
                raise self.illegal("expected key to be a variable")
        if not isinstance(value, ast.Var):
            raise self.illegal("expected value to be a variable")
        if self.kind != "{":
            raise self.illegal("missing body")
        self.advance()
        body = self.parse_body("}")
        self.advance()
        stmt = ast.Every(key, value, domain, body, loc)  # type: ignore[arg-type]
        withs = self.parse_with() if self.kind == "with" else ()
        return new_expr(stmt, False, withs, loc)
