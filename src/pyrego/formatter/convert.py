"""From pyrego's AST and the policy text to the formatter's tree.

The conversion restores what OPA's printer reads from OPA's AST and pyrego's
AST leaves implicit: the source text of every node (through
:class:`~pyrego.formatter.source.SourceIndex`), operators as calls, the
``true`` a rule without a body has, the key OPA keeps on partial object rules,
wildcard names, and the locations OPA's parser moves (the expressions of an
``else`` without braces all take the ``else``'s location; a chained body's head
takes the body's location).

A few constructs that pyrego's parser rewrites into other nodes (the ``and``
/ ``or`` / body-``not`` keywords and ``with`` inside template strings) cannot
be printed back from the AST; their source text is kept as written
(``verbatim`` terms) and comments inside them are left there.
"""

from __future__ import annotations

from bisect import bisect_right
from decimal import Decimal, InvalidOperation

from pyrego.ast import nodes as ast
from pyrego.errors import Location
from pyrego.formatter.nodes import Comment, Every, Expr, Head, Import, Loc, Module, Package, Rule, SomeDecl, Term, With
from pyrego.formatter.source import SourceIndex
from pyrego.parse.lexer import EOF

__all__ = ["Converter", "WILDCARD_PREFIX"]

#: pyrego's names for wildcards (`_`)
WILDCARD_PREFIX = "$wildcard"

_INFIX_NAMES = {"assign": ":=", "eq": "="}


class Converter:
    """Builds a :class:`~pyrego.formatter.nodes.Module` from a parsed module."""

    def __init__(self, index: SourceIndex) -> None:
        self.src = index
        #: character spans written verbatim (their comments stay inside)
        self.verbatim_spans: list[tuple[int, int]] = []
        #: first tokens of top-level statements (they bound a rule's last expression)
        self.stops: list[int] = []
        #: the opt-in keywords (and, or, not) the verbatim expressions use
        self.logical_keywords: set[str] = set()

    # ------------------------------------------------------------ locations

    def loc_at(self, location: Location, start: int, end: int) -> Loc:
        """A location at ``location`` whose text is ``text[start:end]``."""
        return Loc(location.row, location.col, self.src.text[start:end], start, location.file)

    def tokens_loc(self, location: Location, first: int, last: int) -> Loc:
        src = self.src
        return self.loc_at(location, src.starts[first], src.tok_end(last))

    def term_loc(self, term: ast.Term) -> Loc:
        start, end = self.src.term_text_span(term)
        return self.loc_at(term.location, start, end)

    # ------------------------------------------------------------ module

    def module(self, mod: ast.Module) -> Module:
        src = self.src
        self.stops = sorted(self.statement_starts(mod)) + [len(src.kinds) - 1]
        pkg_tok = src.tok(mod.location)
        pkg = Package(self.tokens_loc(mod.location, pkg_tok, pkg_tok), self.package_path(mod.package))
        imports = [self.import_(imp) for imp in mod.imports]
        rules = [self.rule(r) for r in mod.rules]
        return Module(pkg, imports, rules, self.comments())

    def statement_starts(self, mod: ast.Module) -> list[int]:
        src = self.src
        starts = [src.tok(mod.location)]
        starts.extend(src.tok(imp.location) for imp in mod.imports)
        for rule in mod.rules:
            r: ast.Rule | None = rule
            while r is not None:
                starts.append(src.tok(r.location))
                r = r.else_
        return starts

    def comments(self) -> list[Comment]:
        out = []
        src = self.src
        for offset, text in src.toks.comments:
            if any(a <= offset < b for a, b in self.verbatim_spans):
                continue
            row = src.row_of(offset)
            col = offset - src.line_starts[row - 1] + 1
            loc = Loc(row, col, "#" + text, offset)
            out.append(Comment(loc, _trim_right_space(text)))
        return out

    def package_path(self, ref: ast.Ref) -> list[Term]:
        first = ref.path[0]
        assert isinstance(first, ast.Scalar) and isinstance(first.value, str)
        head = Term("var", Loc(first.location.row, first.location.col), value=first.value)
        return [head] + [self.term(p) for p in ref.path[1:]]

    def import_(self, imp: ast.Import) -> Import:
        src = self.src
        first = src.tok(imp.location)
        last = src.core(imp.path)[1]
        if imp.alias is not None:
            last += 2  # `as name`
        return Import(self.tokens_loc(imp.location, first, last), self.term(imp.path), imp.alias or "")

    # ------------------------------------------------------------ rules

    def rule(self, rule: ast.Rule) -> Rule:
        src = self.src
        first = src.tok(rule.location)
        value_generated = self.value_generated(rule.head)
        last = self.rule_last(rule, value_generated)
        loc = self.tokens_loc(rule.location, first, last)
        head = self.head(rule, value_generated)
        chained = src.kinds[first] == "{"
        if chained:  # a chained body's head has the body's location (OPA)
            _relocate_head(head, loc)
        body = self.body(rule.body, self.body_stop(rule, value_generated)) if rule.body else []
        out = Rule(loc, head, body, rule.default, None, _is_const_body(rule.body))
        if rule.else_ is not None:
            out.else_ = self.else_rule(rule.else_)
        return out

    def rule_last(self, rule: ast.Rule, value_generated: bool) -> int:
        """The last token of a rule, its else chain included."""
        while rule.else_ is not None:
            rule = rule.else_
            value_generated = self.value_generated(rule.head)
        if rule.body:
            stmt = rule.body[-1].statement
            if self.synthetic(stmt):
                return self.body_stop(rule, value_generated) - 1
            return self.src.body_last(rule.body)
        return self.src.head_last(rule, value_generated)

    def next_statement(self, rule: ast.Rule) -> int:
        """The first token of the statement (or else branch) after ``rule``'s start."""
        first = self.src.tok(rule.location)
        i = bisect_right(self.stops, first)
        return self.stops[i] if i < len(self.stops) else len(self.src.kinds) - 1

    def body_stop(self, rule: ast.Rule, value_generated: bool) -> int:
        """The token right after a rule's body: its closing brace when the body
        is braced, else the start of what follows the rule."""
        src = self.src
        nxt = self.next_statement(rule)
        after = src.head_last(rule, value_generated) + 1
        if src.kinds[after] == "ident" and src.texts[after] == "if":
            after += 1
        if src.kinds[after] == "{":
            close = src.match.get(after, -1)
            if close + 1 == nxt or src.kinds[close + 1] in ("else", "{"):
                return close
        return nxt

    def value_generated(self, head: ast.RuleHead) -> bool:
        """Whether the head's value is the `true` the parser supplied."""
        value = head.value
        if not (isinstance(value, ast.Scalar) and value.value is True):
            return False
        return self.src.kinds[self.src.tok(value.location)] != "true"

    def head(self, rule: ast.Rule, value_generated: bool) -> Head:
        src = self.src
        h = rule.head
        first = src.tok(h.location)
        last = src.head_last(rule, value_generated)
        loc = self.tokens_loc(h.location, first, last)
        ref = [self.term(h.ref.head)] + [self.term(p) for p in h.ref.path]
        key = self.term(h.key) if h.key is not None else None
        if key is None and h.value is not None and h.args is None and len(h.ref.path) == 1:
            key = self.partial_object_key(rule, last)
        value = self.term(h.value) if h.value is not None else None
        if value is not None and value_generated:
            value.loc = loc
        args = [self.term(a) for a in h.args] if h.args is not None else None
        # OPA marks the implied `true` by giving it the head's own location, which
        # it does for rules written without a body (`f(x)`, `a.b.c`) and for
        # `p[x] if ...`, not for values the head parser adds (`p if ...`).
        implied = value_generated and (not rule.body or (len(h.ref.path) == 1 and h.args is None))
        return Head(loc, ref, key, value, args, h.assign, implied)

    def partial_object_key(self, rule: ast.Rule, head_last: int) -> Term | None:
        """OPA keeps ``p[k] = v``'s ``k`` as the rule's key: always in v0's
        braced form, and with ``if`` when ``k`` is not ground (or a ref)."""
        part = rule.head.ref.path[0]
        after = self.src.kinds[head_last + 1] if head_last + 1 < len(self.src.kinds) else EOF
        if after == "ident" and self.src.texts[head_last + 1] == "if" and rule.body:
            if _is_ground(part) and not isinstance(part, ast.Ref):
                return None
        if not rule.body:
            return None
        return self.term(part)

    def else_rule(self, rule: ast.Rule) -> Rule:
        src = self.src
        first = src.tok(rule.location)
        value_generated = self.value_generated(rule.head)
        last = self.rule_last(rule, value_generated)
        loc = self.tokens_loc(rule.location, first, last)
        h = rule.head
        if h.value is not None and not value_generated:
            head_loc = self.tokens_loc(h.location, first, src.extent(h.value)[1])
        else:
            head_loc = self.tokens_loc(h.location, first, first)
        else_var = Term("var", head_loc, value="else")
        value = self.term(h.value) if h.value is not None else None
        head = Head(head_loc, [else_var], None, value, None, h.assign, value_generated, "else")
        body: list[Expr] = []
        if rule.body:
            body = self.body(rule.body, self.body_stop(rule, value_generated))
            braced = src.kinds[src.tok(rule.body[0].location) - 1] == "{"
            if not braced:  # OPA gives these the else's location throughout
                for expr in body:
                    _relocate_expr(expr, loc)
        out = Rule(loc, head, body, False, None, _is_const_body(rule.body))
        if rule.else_ is not None:
            out.else_ = self.else_rule(rule.else_)
        return out

    # ------------------------------------------------------------ bodies

    def body(self, body: ast.Body, stop: int) -> list[Expr]:
        """Convert a body; ``stop`` is the first token after it (for verbatim ends)."""
        src = self.src
        raw = [src.tok(e.location) for e in body] + [stop]
        starts = [self.expr_start(e, raw[i], raw[i + 1]) for i, e in enumerate(body)] + [stop]
        out = []
        for i, expr in enumerate(body):
            end = starts[i + 1] - 1
            while i + 1 < len(body) and src.kinds[end] == ";":
                end -= 1
            out.append(self.expr(expr, starts[i], end))
        return out

    def expr_start(self, expr: ast.Expr, first: int, bound: int) -> int:
        """Where an expression starts. The parser locates a rewritten logical
        expression at its first operand's first expression, inside any braces
        or parentheses of that operand: those belong to the expression."""
        if not self.synthetic(expr.statement):
            return first
        src = self.src
        while first > 0 and src.kinds[first - 1] in ("{", "(") and src.match.get(first - 1, bound) < bound:
            first -= 1
        return first

    def expr(self, expr: ast.Expr, start: int, limit: int) -> Expr:
        """Convert an expression that starts at token ``start``; ``limit`` is
        the last token it may reach."""
        src = self.src
        first = start
        stmt = expr.statement
        if self.synthetic(stmt):
            last = limit
            loc = self.tokens_loc(expr.location, first, last)
            self.verbatim_spans.append((loc.offset, loc.offset + len(loc.text)))
            self.logical_keywords |= self.logical_keywords_in(stmt, expr.negated)
            term = Term("verbatim", loc, text=loc.text)
            return Expr(loc, term, False, [], loc.row + loc.text.count("\n"))
        last = src.expr_last(expr)
        loc = self.tokens_loc(expr.location, first, last)
        terms: Term | list[Term] | SomeDecl | Every
        if isinstance(stmt, (ast.Assign, ast.Unify)):
            name = "assign" if isinstance(stmt, ast.Assign) else "eq"
            terms = [self.operator(name, stmt.lhs.location), self.term(stmt.lhs), self.term(stmt.rhs)]
        elif isinstance(stmt, ast.SomeVars):
            terms = SomeDecl(loc, [self.term(v) for v in stmt.vars])
        elif isinstance(stmt, ast.SomeIn):
            terms = SomeDecl(loc, [self.some_in_call(stmt)])
        elif isinstance(stmt, ast.Every):
            terms = self.every(stmt, loc)
        elif isinstance(stmt, ast.Call):
            call = self.term(stmt)
            terms = call.items
        else:
            terms = self.term(stmt)
        withs = [self.with_(w) for w in expr.with_mods]
        stmt_first = first + 1 if expr.negated else first
        stmt_last = src.tok(expr.with_mods[0].location) - 1 if expr.with_mods else last
        terms_loc = self.loc_at(
            src_location(src, stmt_first, loc.file), src.starts[stmt_first], src.tok_end(stmt_last)
        )
        return Expr(loc, terms, expr.negated, withs, self.terms_end_row(expr, first, last), terms_loc)

    def terms_end_row(self, expr: ast.Expr, first: int, last: int) -> int:
        """The row where the expression's terms end, before any ``with``."""
        src = self.src
        if expr.with_mods:
            last = src.tok(expr.with_mods[0].location) - 1
        return src.row_of(src.tok_end(last) - 1)

    def some_in_call(self, stmt: ast.SomeIn) -> Term:
        if stmt.key is None:
            args = [stmt.value, stmt.collection]
            name = "internal.member_2"
        else:
            args = [stmt.key, stmt.value, stmt.collection]
            name = "internal.member_3"
        src = self.src
        first = src.extent(args[0])[0]
        last = src.extent(args[-1])[1]
        loc = self.loc_at(args[0].location, src.starts[first], src.tok_end(last))
        items = [self.operator(name, args[0].location)] + [self.term(a) for a in args]
        return Term("call", loc, items=items, name=name)

    def every(self, stmt: ast.Every, loc: Loc) -> Every:
        src = self.src
        open_brace = src.extent(stmt.domain)[1] + 1
        body = self.body(stmt.body, src.match[open_brace])
        key = self.term(stmt.key) if stmt.key is not None else None
        return Every(loc, key, self.term(stmt.value), self.term(stmt.domain), body)

    def with_(self, w: ast.With) -> With:
        src = self.src
        first = src.tok(w.location)
        last = src.extent(w.value)[1]
        return With(self.tokens_loc(w.location, first, last), self.term(w.target), self.term(w.value))

    def synthetic(self, stmt: ast.Statement) -> bool:
        """Whether a statement stands for the and/or/not keywords (see module docs)."""
        if not isinstance(stmt, ast.Ref):
            return False
        head = stmt.head
        if isinstance(head, ast.Call) and head.op in ("and", "or") and head.op_ref is None:
            return any(self.synthetic_closure(a) for a in head.args)
        return self.synthetic_closure(head)

    def logical_keywords_in(self, node: object, negated: bool = False) -> set[str]:
        """The keywords (`and`, `or`, body `not`) a rewritten statement stands for."""
        found: set[str] = set()
        stack: list[tuple[object, bool]] = [(node, negated)]
        while stack:
            x, neg = stack.pop()
            if isinstance(x, ast.Expr):
                stack.append((x.statement, x.negated))
            elif isinstance(x, ast.Ref):
                head = x.head
                if isinstance(head, ast.Call) and head.op in ("and", "or") and head.op_ref is None:
                    if any(self.synthetic_closure(a) for a in head.args):
                        found.add(head.op)
                elif neg and self.synthetic_closure(head):
                    found.add("not")
                stack.extend((p, False) for p in (head, *x.path))
            elif isinstance(x, (ast.ArrayCompr, ast.SetCompr)):
                stack.extend((e, False) for e in x.body)
            elif isinstance(x, ast.Call):
                stack.extend((a, False) for a in x.args)
        return found

    def synthetic_closure(self, term: ast.Term) -> bool:
        src = self.src
        if isinstance(term, ast.ArrayCompr):
            return src.kinds[src.tok(term.location)] != "["
        if isinstance(term, ast.SetCompr):
            return src.kinds[src.tok(term.location)] != "{"
        return False

    # ------------------------------------------------------------ terms

    def operator(self, name: str, location: Location) -> Term:
        """The operator term of an infix call (a ref of its name's parts)."""
        loc = Loc(location.row, location.col, _INFIX_NAMES.get(name, name))
        parts = name.split(".")
        items = [Term("var", loc, value=parts[0])] + [Term("string", loc, value=p) for p in parts[1:]]
        return Term("ref", loc, items=items, name=name)

    def term(self, t: ast.Term) -> Term:
        src = self.src
        if isinstance(t, ast.Scalar):
            return self.scalar(t)
        if isinstance(t, ast.Var):
            return Term("var", self.term_loc(t), value=t.name)
        if isinstance(t, ast.Ref):
            return Term("ref", self.term_loc(t), items=[self.term(t.head)] + [self.term(p) for p in t.path])
        if isinstance(t, ast.Call):
            return self.call(t)
        if isinstance(t, ast.Array):
            return Term("array", self.term_loc(t), items=[self.term(x) for x in t.items])
        if isinstance(t, ast.SetTerm):
            return Term("set", self.term_loc(t), items=[self.term(x) for x in _dedupe(t.items)])
        if isinstance(t, ast.Object):
            pairs = [(self.term(k), self.term(v)) for k, v in _dedupe_pairs(t.items)]
            return Term("object", self.term_loc(t), pairs=pairs)
        if isinstance(t, (ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)):
            first, last = src.core(t)
            body = self.body(t.body, last)
            if isinstance(t, ast.ObjectCompr):
                return Term(
                    "objectcompr", self.term_loc(t), key=self.term(t.key), term=self.term(t.value), body=body
                )
            kind = "arraycompr" if isinstance(t, ast.ArrayCompr) else "setcompr"
            return Term(kind, self.term_loc(t), term=self.term(t.term), body=body)
        if isinstance(t, ast.TemplateString):
            return self.template(t)
        raise TypeError(f"unexpected term {type(t).__name__}")

    def scalar(self, t: ast.Scalar) -> Term:
        v = t.value
        src = self.src
        if v is None:
            return Term("null", self.term_loc(t), text="null")
        if isinstance(v, bool):
            return Term("boolean", self.term_loc(t), text="true" if v else "false")
        if isinstance(v, str):
            return Term("string", self.term_loc(t), value=v)
        if t.text is None and src.kinds[src.tok(t.location)] == "-":  # the 0 of `-x`
            loc = Loc(t.location.row, t.location.col, "-", src.offset(t.location), t.location.file)
            return Term("number", loc, text="0")
        return Term("number", self.term_loc(t), text=t.text if t.text is not None else str(v))

    def call(self, t: ast.Call) -> Term:
        loc = self.term_loc(t)
        if t.op_ref is not None:
            start, text = self.src.operator_text(t)
            op = self.term(t.op_ref)
            op.loc = self.loc_at(t.op_ref.location, start, start + len(text))
            op.name = t.op
        else:
            op = self.operator(t.op, t.location)
        return Term("call", loc, items=[op] + [self.term(a) for a in t.args], name=t.op)

    def template(self, t: ast.TemplateString) -> Term:
        """A template string: its text pieces as written, its expressions converted."""
        src = self.src
        first, _ = src.core(t)
        loc = self.term_loc(t)
        parts: list[Term | Expr] = []
        values = src.toks.values
        pos = first
        terms = [p for p in t.parts if not isinstance(p, str)]
        k = 0
        while True:
            piece = values[pos]
            assert isinstance(piece, tuple)
            text, is_end, raw = piece
            piece_loc = self.tokens_loc(src_location(src, pos, loc.file), pos, pos)
            body = _piece_source(src.texts[pos], first == pos)
            if text:
                parts.append(Term("string", piece_loc, value=text, text=body, name="piece"))
            if is_end:
                break
            close = src.match[pos]
            part = terms[k]
            k += 1
            part_first = pos + 1
            expr_loc = self.tokens_loc(src_location(src, part_first, loc.file), part_first, close - 1)
            if isinstance(part, ast.Ref) and self.synthetic_closure(part.head):
                self.verbatim_spans.append((expr_loc.offset, expr_loc.offset + len(expr_loc.text)))
                parts.append(Expr(expr_loc, Term("verbatim", expr_loc, text=expr_loc.text)))
            elif isinstance(part, ast.Scalar) and not self.comments_between(part_first, close):
                parts.append(self.scalar(part))
            else:
                inner = ast.Expr(part, False, (), part.location)
                parts.append(self.expr(inner, src.tok(part.location), close - 1))
            pos = close + 1
        return Term("template", loc, parts=parts, raw=bool(t.raw))

    def comments_between(self, first: int, last: int) -> bool:
        a, b = self.src.starts[first] - 1, self.src.starts[last]
        return any(a <= off < b for off, _ in self.src.toks.comments)


def src_location(src: SourceIndex, tok: int, file: str) -> Location:
    """The location of token ``tok``."""
    offset = src.starts[tok]
    return Location(file, src.row_of(offset), src.col_of(offset))


def _piece_source(token_text: str, opening: bool) -> str:
    """The characters of a template piece between its delimiters, as written:
    after the opening ``$"`` (or after the ``}`` of the previous expression),
    before the closing quote or the ``{`` of the next expression."""
    body = token_text[2:] if opening else token_text
    return body[:-1]


def _relocate_expr(expr: Expr, loc: Loc) -> None:
    """Give an expression and everything in it the location ``loc``."""
    expr.loc = loc
    expr.terms_end_row = loc.row
    terms = expr.terms
    if isinstance(terms, list):
        for t in terms:
            _relocate_term(t, loc)
    elif isinstance(terms, Term):
        _relocate_term(terms, loc)
    elif isinstance(terms, SomeDecl):
        terms.loc = loc
        for t in terms.symbols:
            _relocate_term(t, loc)
    else:
        terms.loc = loc
        for x in (terms.key, terms.value, terms.domain):
            if x is not None:
                _relocate_term(x, loc)
        for e in terms.body:
            _relocate_expr(e, loc)
    for w in expr.withs:
        w.loc = loc
        _relocate_term(w.target, loc)
        _relocate_term(w.value, loc)


def _relocate_term(term: Term, loc: Loc) -> None:
    term.loc = loc
    for t in term.items:
        _relocate_term(t, loc)
    for k, v in term.pairs:
        _relocate_term(k, loc)
        _relocate_term(v, loc)
    for x in (term.term, term.key):
        if x is not None:
            _relocate_term(x, loc)
    for e in term.body:
        _relocate_expr(e, loc)
    for p in term.parts:
        if isinstance(p, Expr):
            _relocate_expr(p, loc)
        else:
            _relocate_term(p, loc)


def _relocate_head(head: Head, loc: Loc) -> None:
    head.loc = loc
    for t in head.ref:
        _relocate_term(t, loc)
    for x in (head.key, head.value):
        if x is not None:
            _relocate_term(x, loc)
    for a in head.args or ():
        _relocate_term(a, loc)


def _is_const_body(body: ast.Body) -> bool:
    """No body (OPA's generated `true`), or the body `{ true }`."""
    if not body:
        return True
    if len(body) != 1:
        return False
    e = body[0]
    return (
        not e.negated
        and not e.with_mods
        and isinstance(e.statement, ast.Scalar)
        and e.statement.value is True
    )


def _is_ground(t: ast.Term) -> bool:
    if isinstance(t, ast.Scalar):
        return True
    if isinstance(t, ast.Var):
        return False
    if isinstance(t, ast.Ref):
        return all(_is_ground(p) for p in t.path)
    if isinstance(t, (ast.Array, ast.SetTerm)):
        return all(_is_ground(x) for x in t.items)
    if isinstance(t, ast.Object):
        return all(_is_ground(k) and _is_ground(v) for k, v in t.items)
    if isinstance(t, ast.Call):
        return all(_is_ground(a) for a in t.args)
    return False


def _value_key(t: ast.Term) -> object:
    """A key under which OPA's sets and objects hold a term (None: keep it apart)."""
    if isinstance(t, ast.Scalar):
        v = t.value
        if v is None or isinstance(v, bool):
            return ("const", v)
        if isinstance(v, str):
            return ("string", v)
        try:
            return ("number", Decimal(t.text if t.text is not None else str(v)).normalize())
        except InvalidOperation:
            return None
    if isinstance(t, ast.Var):
        return None if t.name.startswith(WILDCARD_PREFIX) else ("var", t.name)
    if isinstance(t, (ast.Ref, ast.Array)):
        parts = [t.head, *t.path] if isinstance(t, ast.Ref) else list(t.items)
        keys = [_value_key(p) for p in parts]
        return None if any(k is None for k in keys) else (type(t).__name__, tuple(keys))
    return None


def _dedupe(items: tuple[ast.Term, ...]) -> list[ast.Term]:
    """A set's elements as OPA keeps them: the first of equal elements."""
    seen: set[object] = set()
    out = []
    for x in items:
        k = _value_key(x)
        if k is not None:
            if k in seen:
                continue
            seen.add(k)
        out.append(x)
    return out


def _dedupe_pairs(items: tuple[tuple[ast.Term, ast.Term], ...]) -> list[tuple[ast.Term, ast.Term]]:
    """An object's entries as OPA keeps them: a repeated key keeps its first
    position and takes the last value."""
    index: dict[object, int] = {}
    out: list[tuple[ast.Term, ast.Term]] = []
    for k, v in items:
        key = _value_key(k)
        if key is not None and key in index:
            i = index[key]
            out[i] = (out[i][0], v)
            continue
        if key is not None:
            index[key] = len(out)
        out.append((k, v))
    return out


# Go's unicode.IsSpace (Python's str.isspace also takes \x1c-\x1f).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _trim_right_space(text: str) -> str:
    return text.rstrip(_GO_SPACE)

