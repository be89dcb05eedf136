"""Rule bodies split into the expressions OPA's compiler makes of them.

OPA evaluates a compiled module, not the source: its compiler moves every
call nested in an operand into an expression of its own
(``count(input.xs) > 0`` becomes ``count(input.xs, __local1__)`` then
``gt(__local1__, 0)``), and after ordering a body for safety binds every ref
and comprehension among a call's operands to a variable first
(``__local2__ = input.xs``). OPA's coverage report and trace are made of
those expressions: each has the location of the term it came from, and an
expression whose hoisted part is undefined is never reached, so its own
range stays "not covered" while the hoisted part's is covered.

The instrumented program (coverage, traces) compiles rule bodies in this
form: :class:`OpaForm` makes the expressions (stage one before the body is
ordered, stage two after, as in OPA) and records in a :class:`PieceTable`
what each one is: its range in the policy text and its text. The normal
program never sees this form; pyrego's own code generator makes the same
decisions where they change an answer (:mod:`pyrego.compile.rewrite`).
"""

from __future__ import annotations

from typing import Callable, Iterator, NamedTuple

from pyrego.ast import nodes as ast
from pyrego.errors import Location
from pyrego.parse.spans import SourceSpans, Span

_PRINT = frozenset({"print", "internal.print"})
# Calls that stay where they are: print (OPA wraps its operands first) and
# the metadata calls (OPA replaces them with their constant values).
_METADATA = frozenset({"rego.metadata.chain", "rego.metadata.rule"})
_KEPT_CALLS = _PRINT | _METADATA
_ROOTS = frozenset({"input", "data"})
_COMPREHENSIONS = (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)


class Piece(NamedTuple):
    """Something the instrumented code reports: an expression OPA evaluates
    (``expr``), a rule entered (``rule``) or a rule head reached (``head``)."""

    kind: str
    span: Span | None
    text: str
    location: Location


class PieceTable:
    """The pieces of one instrumented program, numbered in order of creation."""

    def __init__(self) -> None:
        self.pieces: list[Piece] = []
        self._by_node: dict[int, int] = {}
        # The nodes keyed by identity are kept alive with the table.
        self._keep: list[object] = []

    def add(self, piece: Piece) -> int:
        self.pieces.append(piece)
        return len(self.pieces) - 1

    def bind(self, node: object, pid: int) -> None:
        self._by_node[id(node)] = pid
        self._keep.append(node)

    def of(self, node: object) -> int | None:
        return self._by_node.get(id(node))


class OpaForm:
    """Makes OPA's compiled expressions of rule heads and bodies, registering each."""

    def __init__(self, table: PieceTable, spans_of: Callable[[str], SourceSpans | None]) -> None:
        self.table = table
        self.spans_of = spans_of
        self._n = 0
        self._split: set[int] = set()
        self._bound: set[int] = set()
        # The range all pieces of the body being written get, where OPA locates
        # them all at one place (a one-line ``else ... if cond`` body).
        self.forced: Span | None = None

    # -- registration ------------------------------------------------------------------

    def _spans(self, loc: Location) -> SourceSpans | None:
        return self.spans_of(loc.file) if loc.file else None

    def piece(self, kind: str, loc: Location, span: Span | None, fallback: str) -> int:
        spans = self._spans(loc)
        text = spans.text(span) if spans is not None and span is not None else fallback
        return self.table.add(Piece(kind, span, text, loc))

    def expr_piece(self, e: ast.Expr) -> int:
        """The piece of a source expression (registered on first sight)."""
        pid = self.table.of(e)
        if pid is None:
            spans = self._spans(e.location)
            pid = self.piece("expr", e.location, spans.expr(e) if spans is not None else None, "expr")
            self._force(pid)
            self.table.bind(e, pid)
        return pid

    def term_piece(self, t: ast.Term) -> int:
        spans = self._spans(t.location)
        pid = self.piece("expr", t.location, spans.term(t) if spans is not None else None, "term")
        self._force(pid)
        return pid

    def _force(self, pid: int) -> None:
        """Give a new piece the range every piece of the body being written has in OPA (see ``forced``)."""
        if self.forced is not None:
            self.table.pieces[pid] = self.table.pieces[pid]._replace(span=self.forced)

    def _made(self, e: ast.Expr, pid: int, *done: set[int]) -> ast.Expr:
        self.table.bind(e, pid)
        for d in done:
            d.add(id(e))
        return e

    def fresh(self, loc: Location) -> ast.Var:
        self._n += 1
        return ast.Var(f"__local{self._n}__#o", loc)

    # -- rules ---------------------------------------------------------------------------

    def rule(self, rule: ast.Rule, *, else_branch: bool = False) -> ast.Rule:
        """``rule`` (one branch) with the calls of its head moved into its body
        (OPA's ``RewriteExprTermsInHead``) and, when it has no body, OPA's
        ``true`` body at its value (an ``else`` branch's at its head)."""
        head = rule.head
        extra: list[ast.Expr] = []
        key = self._head_term(head.key, extra)
        value = self._head_term(head.value, extra)
        body = self._metadata_first(rule.body) + tuple(extra)
        if not body:
            body = (self.true_piece(rule, else_branch=else_branch),)
        if key is head.key and value is head.value and body is rule.body:
            return rule
        new_head = ast.RuleHead(head.ref, value, key, head.args, head.assign, head.location)
        return ast.Rule(new_head, body, rule.default, rule.else_, rule.location, rule.module_file)

    def _metadata_first(self, body: ast.Body) -> ast.Body:
        """OPA's ``RewriteRegoMetadataCalls``: the value of ``rego.metadata.chain()``
        and ``rego.metadata.rule()`` is bound at the start of the body, so that
        expression is evaluated (and covered) before any other."""
        first: dict[str, ast.Call] = {}
        for call in _calls(body):
            if call.op in _METADATA and not call.args and call.op not in first:
                first[call.op] = call
        if not first:
            return body
        extra: list[ast.Expr] = []
        for op in ("rego.metadata.chain", "rego.metadata.rule"):
            found = first.get(op)
            if found is not None:
                self._bind(found, found, extra, ())
        return tuple(extra) + body

    def _head_term(self, t: ast.Term | None, extra: list[ast.Expr]) -> ast.Term | None:
        """A head's key or value with its calls moved into the body, and itself
        when it holds a ref or comprehension (OPA evaluates those in the body)."""
        if t is None:
            return None
        t2 = self._calls_in(t, extra, ())
        return self._bind(t2, t, extra, ()) if _needs_eval(t2) else t2

    def true_piece(self, rule: ast.Rule, *, else_branch: bool = False) -> ast.Expr:
        """The ``true`` body OPA gives a rule written without one, at its value
        (a default rule's at its ``default`` keyword)."""
        spans = self._spans(rule.location)
        head = rule.head
        target = head.value if head.value is not None else head.key
        span = None
        loc = rule.location
        if spans is not None:
            if rule.default:
                span = spans.token(rule.location)
            elif not else_branch and head.value is None:
                span = spans.term(head.ref)  # a `contains` rule's: at its name
            elif not else_branch and target is not None and not (type(target) is ast.Scalar and target.location == head.location):
                span = spans.term(target)
                loc = target.location
            else:
                span = spans.head(rule)
        e = ast.Expr(ast.Scalar(True, loc), False, (), loc)
        return self._made(e, self.piece("expr", loc, span, "true"), self._split, self._bound)

    # -- stage one: nested calls (before ordering) --------------------------------------------

    def split(self, body: ast.Body) -> ast.Body:
        out: list[ast.Expr] = []
        for e in body:
            if id(e) in self._split:
                out.append(e)
                continue
            s = e.statement
            if type(s) is ast.SomeVars:
                out.append(e)
                continue
            pid = self.expr_piece(e)
            extra: list[ast.Expr] = []
            with_mods = e.with_mods
            stmt: ast.Statement = s
            if type(s) is ast.Call:
                if s.op not in _PRINT:
                    args = tuple([self._calls_in(a, extra, with_mods) for a in s.args])
                    if any(a is not b for a, b in zip(args, s.args)):
                        stmt = ast.Call(s.op, args, s.location, s.op_ref)
            elif type(s) is ast.Unify or type(s) is ast.Assign:
                lhs = self._calls_in(s.lhs, extra, with_mods)
                rhs = self._calls_in(s.rhs, extra, with_mods)
                if lhs is not s.lhs or rhs is not s.rhs:
                    stmt = type(s)(lhs, rhs, s.location)
            elif type(s) is ast.SomeIn:
                coll = self._calls_in(s.collection, extra, with_mods)
                if not (type(coll) is ast.Var or type(coll) is ast.Ref):
                    coll = self._bind(coll, s.collection, extra, with_mods)  # OPA binds a literal collection first
                if coll is not s.collection:
                    stmt = ast.SomeIn(s.key, s.value, coll, s.location)
            elif type(s) is ast.Every:
                domain = self._calls_in(s.domain, extra, with_mods)
                if not (type(domain) is ast.Var or type(domain) is ast.Scalar):
                    domain = self._bind(domain, s.domain, extra, with_mods)
                if domain is not s.domain:
                    stmt = ast.Every(s.key, s.value, domain, s.body, s.location)
            elif isinstance(s, (ast.Ref, ast.Array, ast.Object, ast.SetTerm)):
                stmt = self._calls_in(s, extra, with_mods)
            main = e if stmt is s else ast.Expr(stmt, e.negated, with_mods, e.location)
            out.extend(extra)
            out.append(self._made(main, pid, self._split))
        return tuple(out)

    def _bind(self, term: ast.Term, original: ast.Term, extra: list[ast.Expr], with_mods: tuple[ast.With, ...]) -> ast.Var:
        """``__localN__ = term`` as a piece of its own (at ``original``'s range)."""
        var = self.fresh(term.location)
        e = ast.Expr(ast.Unify(var, term, term.location), False, with_mods, term.location)
        extra.append(self._made(e, self.term_piece(original), self._split))
        return var

    def _calls_in(self, t: ast.Term, extra: list[ast.Expr], with_mods: tuple[ast.With, ...]) -> ast.Term:
        """``t`` with each call in it made an expression of its own, innermost first."""
        if type(t) is ast.Call:
            if t.op in _KEPT_CALLS:
                return t
            args = tuple([self._calls_in(a, extra, with_mods) for a in t.args])
            out = self.fresh(t.location)
            call = ast.Call(t.op, args + (out,), t.location, t.op_ref)
            e = ast.Expr(call, False, with_mods, t.location)
            extra.append(self._made(e, self.term_piece(t), self._split))
            return out
        if isinstance(t, _COMPREHENSIONS):
            return self._comprehension(t)
        return _map_parts(t, lambda x: self._calls_in(x, extra, with_mods))

    def _comprehension(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> ast.Term:
        """The calls of a comprehension's head, and the head itself when it
        must be evaluated, become the last expressions of its body (OPA's
        ``RewriteExprTerms`` and ``RewriteComprehensionTerms``)."""
        extra: list[ast.Expr] = []

        def head_term(x: ast.Term) -> ast.Term:
            x2 = self._calls_in(x, extra, ())
            return self._bind(x2, x, extra, ()) if _needs_eval(x2) else x2

        if isinstance(t, ast.ObjectCompr):
            key, value = head_term(t.key), head_term(t.value)
            if not extra:
                return t
            return ast.ObjectCompr(key, value, t.body + tuple(extra), t.location)
        term = head_term(t.term)
        if not extra:
            return t
        if isinstance(t, ast.ArrayCompr):
            return ast.ArrayCompr(term, t.body + tuple(extra), t.location)
        return ast.SetCompr(term, t.body + tuple(extra), t.location)

    # -- stage two: refs and comprehensions among operands (after ordering) ---------------------

    def bind(self, ordered: ast.Body, *, equality_unifies: bool = True) -> ast.Body:
        out: list[ast.Expr] = []
        for e in ordered:
            if id(e) in self._bound:
                out.append(e)
                continue
            pid = self.table.of(e)
            s = e.statement
            extra: list[ast.Expr] = []
            with_mods = e.with_mods
            stmt: ast.Statement = s
            if type(s) is ast.Unify or type(s) is ast.Assign:
                lhs, rhs = self._inside(s.lhs, extra, with_mods), self._inside(s.rhs, extra, with_mods)
                if lhs is not s.lhs or rhs is not s.rhs:
                    stmt = type(s)(lhs, rhs, s.location)
            elif type(s) is ast.Call and s.op not in _PRINT:
                if equality_unifies and s.op == "equal" and len(s.args) == 2:
                    args = tuple([self._inside(a, extra, with_mods) for a in s.args])
                else:
                    args = tuple([self._operand(a, extra, with_mods) for a in s.args])
                if any(a is not b for a, b in zip(args, s.args)):
                    stmt = ast.Call(s.op, args, s.location, s.op_ref)
            elif type(s) is ast.SomeIn and type(s.collection) is ast.Ref:
                coll = self._inside(s.collection, extra, with_mods)
                if coll is not s.collection:
                    stmt = ast.SomeIn(s.key, s.value, coll, s.location)
            elif isinstance(s, (ast.Ref, ast.Array, ast.Object, ast.SetTerm)):
                stmt = self._inside(s, extra, with_mods)
            if stmt is s:
                out.extend(extra)
                out.append(e)
                self._bound.add(id(e))
                continue
            main = ast.Expr(stmt, e.negated, with_mods, e.location)
            out.extend(extra)
            out.append(self._made(main, pid, self._split, self._bound) if pid is not None else main)
            self._bound.add(id(main))
        return tuple(out)

    def _operand(self, t: ast.Term, extra: list[ast.Expr], with_mods: tuple[ast.With, ...]) -> ast.Term:
        """A call's operand: bound to a variable itself when it is a ref or a comprehension."""
        if type(t) is ast.Ref or (type(t) is ast.Var and t.name in _ROOTS) or isinstance(t, _COMPREHENSIONS):
            inner = self._inside(t, extra, with_mods)
            var = self.fresh(t.location)
            e = ast.Expr(ast.Unify(var, inner, t.location), False, with_mods, t.location)
            extra.append(self._made(e, self.term_piece(t), self._split, self._bound))
            return var
        return self._inside(t, extra, with_mods)

    def _inside(self, t: ast.Term, extra: list[ast.Expr], with_mods: tuple[ast.With, ...]) -> ast.Term:
        """``t`` with the refs and comprehensions nested in it bound first (not ``t`` itself)."""
        return _map_parts(t, lambda x: self._operand(x, extra, with_mods))


def _calls(node: object) -> Iterator[ast.Call]:
    """Every call in a body, statement or term, nested ones included."""
    if isinstance(node, tuple):
        for x in node:
            yield from _calls(x)
    elif isinstance(node, ast.Expr):
        yield from _calls(node.statement)
        for w in node.with_mods:
            yield from _calls(w.value)
    elif isinstance(node, ast.Call):
        yield node
        yield from _calls(node.args)
    elif isinstance(node, (ast.Assign, ast.Unify)):
        yield from _calls(node.lhs)
        yield from _calls(node.rhs)
    elif isinstance(node, ast.SomeIn):
        yield from _calls(node.collection)
    elif isinstance(node, ast.Every):
        yield from _calls(node.domain)
        yield from _calls(node.body)
    elif isinstance(node, ast.Ref):
        yield from _calls(node.head)
        yield from _calls(node.path)
    elif isinstance(node, (ast.Array, ast.SetTerm)):
        yield from _calls(node.items)
    elif isinstance(node, ast.Object):
        for k, v in node.items:
            yield from _calls(k)
            yield from _calls(v)
    elif isinstance(node, (ast.ArrayCompr, ast.SetCompr)):
        yield from _calls(node.term)
        yield from _calls(node.body)
    elif isinstance(node, ast.ObjectCompr):
        yield from _calls(node.key)
        yield from _calls(node.value)
        yield from _calls(node.body)


def _needs_eval(t: ast.Term) -> bool:
    """Whether a comprehension's head holds a ref or a comprehension (OPA's ``requiresEval``)."""
    if type(t) is ast.Ref or isinstance(t, _COMPREHENSIONS):
        return True
    if type(t) is ast.Var:
        return t.name in _ROOTS
    if type(t) is ast.Array or type(t) is ast.SetTerm:
        return any(_needs_eval(x) for x in t.items)
    if type(t) is ast.Object:
        return any(_needs_eval(k) or _needs_eval(v) for k, v in t.items)
    return False


def _map_parts(t: ast.Term, each: Callable[[ast.Term], ast.Term]) -> ast.Term:
    """``t`` with ``each`` applied to its parts (a ref's keys and a head that is
    not a variable, a collection's items); ``t`` itself when nothing changed."""
    if type(t) is ast.Ref:
        head = t.head if type(t.head) is ast.Var else each(t.head)
        path = _map_each(t.path, each)
        return t if head is t.head and path is t.path else ast.Ref(head, path, t.location)
    if type(t) is ast.Array:
        items = _map_each(t.items, each)
        return t if items is t.items else ast.Array(items, t.location)
    if type(t) is ast.SetTerm:
        items = _map_each(t.items, each)
        return t if items is t.items else ast.SetTerm(items, t.location)
    if type(t) is ast.Object:
        pairs = tuple([(each(k), each(v)) for k, v in t.items])
        if all(k is ok and v is ov for (k, v), (ok, ov) in zip(pairs, t.items)):
            return t
        return ast.Object(pairs, t.location)
    return t


def _map_each(terms: tuple[ast.Term, ...], each: Callable[[ast.Term], ast.Term]) -> tuple[ast.Term, ...]:
    new = tuple([x if type(x) is ast.Scalar else each(x) for x in terms])
    return terms if all(a is b for a, b in zip(new, terms)) else new


__all__ = ["OpaForm", "Piece", "PieceTable"]
