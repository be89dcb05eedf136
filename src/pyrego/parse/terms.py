"""Terms: the lower half of the Rego parser (expressions and bodies are in
:mod:`pyrego.parse.exprs`).

:class:`TermParser` follows OPA's recursive-descent parser (``v1/ast/parser.go``)
closely, including its backtracking: comprehensions are tried before plain
collections (``{x | y}`` is a set comprehension, never a set holding ``x | y``),
``k, v in xs`` is tried before a plain term, ``p if {...}`` is tried as a
one-expression body before a braced body. Where OPA records an error and
restores a saved state, this parser raises :class:`RegoParseError` and catches
it at the same place.

Every parsed term is memoised by token position (successes and failures), so
backtracking never re-parses a term: the cost stays linear even on inputs built
to defeat the backtracking.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Callable, cast

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Ref, Scalar, Var
from pyrego.errors import Location, RegoParseError
from pyrego.parse.lexer import (
    BASE_KEYWORDS,
    EOF,
    IDENT,
    ILLEGAL,
    NUMBER,
    STRING,
    TMPL,
    TMPLC,
    number_value,
)
from pyrego.parse.nodes import RefTwin, ScalarTwin, VarTwin, new_call, new_expr, new_ref, new_scalar, new_var
from pyrego.parse.tokens import MAX_DEPTH, FatalParseError, IllegalRefError, TokenCursor, memo_key

__all__ = ["MAX_DEPTH", "FatalParseError", "TermParser", "memo_key", "value_name"]

ROOTS = ("data", "input")

_new_tuple = tuple.__new__  # (Location's own __new__ is a Python function)


# Tokens that are a whole term by themselves unless a '.', '[' or '(' follows
# right after them (see TermParser.is_lone_token).
_LONE_TERM_KINDS = frozenset({IDENT, STRING, "null", "true", "false"})
_TERM_SUFFIXES = frozenset({".", "[", "("})
#: The kinds _term reads a term from (``and``/``or`` too, right before '(').
_TERM_STARTS = frozenset({IDENT, "contains", "[", "{", STRING, NUMBER, ".", "-", "null", "true", "false", TMPL, "("})


def value_name(t: object) -> str:
    """OPA's name for the kind of a term, as used in error messages."""
    if isinstance(t, ast.Scalar):
        v = t.value
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "boolean"
        if isinstance(v, str):
            return "string"
        return "number"
    return {
        ast.Var: "var",
        ast.Ref: "ref",
        ast.Array: "array",
        ast.Object: "object",
        ast.SetTerm: "set",
        ast.ArrayCompr: "arraycomprehension",
        ast.SetCompr: "setcomprehension",
        ast.ObjectCompr: "objectcomprehension",
        ast.Call: "call",
        ast.TemplateString: "templatestring",
    }.get(type(t), "term")


def _op_name(ref: ast.Ref) -> str:
    """The name a call is looked up by: its ref's parts joined with dots.

    Functions are named by joining their paths that way, however a key was
    written, so ``fruit["color.name"](x)`` must be ``fruit.color.name`` to
    find the function ``fruit["color.name"](x) := ...``.
    """
    if not isinstance(ref.head, ast.Var):
        return "<term>"
    parts = [ref.head.name]
    for p in ref.path:
        if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
            return ast.ref_to_string(ref, written=True)
        parts.append(p.value)
    return ".".join(parts)


class TermParser(TokenCursor):
    """The term grammar. See module docs."""

    #: Read a ref with a scalar head as any ref (see reads_with_bad_refs)
    lenient_refs = False

    # ------------------------------------------------------------ terms

    def parse_var(self) -> ast.Var:
        name = self.texts[self.pos]
        if name == "_":
            # every wildcard is a distinct variable
            name = f"$wildcard{self.wild}"
            self.wild += 1
        pos = self.pos
        var = VarTwin()  # new_var(name, its location), inlined
        var.name = name
        var.location = self.locs[pos] or self.make_loc(pos)
        var.__class__ = Var  # type: ignore[assignment]
        return var  # type: ignore[return-value]

    def parse_term(self) -> ast.Term:
        """One term, with any ref/call suffix; no infix operators."""
        pos = self.pos
        kind = self.kind
        if kind in _LONE_TERM_KINDS and self.depth < MAX_DEPTH and (kind != IDENT or self.texts[pos] != "_"):
            # is_lone_token and lone_term, inlined: most terms are lone tokens
            nxt = pos + 1
            after = self.kinds[nxt]
            if after != ILLEGAL and (after not in _TERM_SUFFIXES or self.gaps[nxt]):
                loc = self.locs[pos] or self.make_loc(pos)
                lone: ast.Term
                # (new_var and new_scalar, inlined)
                if kind == IDENT:
                    name = self.texts[pos]
                    var = VarTwin()
                    var.name = name
                    var.location = loc
                    var.__class__ = Var  # type: ignore[assignment]
                    lone = var  # type: ignore[assignment]
                    if name in ROOTS:
                        lone = new_ref(lone, (), loc)
                else:
                    scalar = ScalarTwin()
                    scalar.value = self.values[pos] if kind == STRING else None if kind == "null" else kind == "true"  # type: ignore[assignment]
                    scalar.location = loc
                    scalar.text = None
                    scalar.__class__ = Scalar  # type: ignore[assignment]
                    lone = scalar  # type: ignore[assignment]
                # advance(), knowing that the next token is no illegal one
                self.pos = nxt
                if after == IDENT and self.texts[nxt] in self.future:
                    after = self.texts[nxt]
                self.kind = after
                return lone
        key = pos + pos + (kind == IDENT)  # memo_key(pos, kind), inlined
        hit = self.cache.get(key)
        if hit is not None:
            term, err, self.pos, self.kind = hit
            if err is not None:
                raise err.with_traceback(None)
            assert term is not None
            return term
        if kind == IDENT and self.depth < MAX_DEPTH and self.kinds[pos + 1] == "." and not self.gaps[pos + 1]:
            ref = self.dotted_ref(pos, key)
            if ref is not None:
                return ref
        self.depth += 1  # enter(), inlined
        if self.depth > MAX_DEPTH:
            raise self.too_deep()
        try:
            term = self._term()
        except FatalParseError:
            raise
        except RegoParseError as e:
            self.cache[key] = (None, e, self.pos, self.kind)
            raise
        finally:
            self.depth -= 1
        self.cache[key] = (term, None, self.pos, self.kind)
        return term

    def dotted_ref(self, pos: int, key: int) -> ast.Term | None:
        """The commonest term that is no lone token, ``a.b.c`` (names only,
        with no '.', '[' or '(' right after), read from the name at ``pos``
        (followed right away by a '.') as _term and parse_ref would read it,
        memo entry included; None for anything else (a wildcard head, a bad
        name after a '.', a longer ref or a call, an illegal token next),
        which parse_term reads the long way."""
        texts = self.texts
        name = texts[pos]
        if name == "_":
            return None
        kinds = self.kinds
        gaps = self.gaps
        locs = self.locs
        loc = locs[pos] or self.make_loc(pos)
        # The names are on the line of the head (no space between): their
        # locations are made here as make_loc would make them.
        file, row = loc.file, loc.row
        base = self.line_bases[row]
        starts = self.starts
        path: list[ast.Term] = []
        p = pos + 1  # a '.' right after the name
        while True:
            q = p + 1  # (a '.' is never the last token: eof is)
            nk = kinds[q]
            if gaps[q] or (nk != IDENT and nk not in BASE_KEYWORDS):
                return None  # (parse_ref reports it)
            k = ScalarTwin()  # new_scalar(texts[q], its location), inlined
            k.value = texts[q]
            kloc = locs[q]
            if kloc is None:
                kloc = locs[q] = _new_tuple(Location, (file, row, starts[q] - base))
            k.location = kloc
            k.text = None
            k.__class__ = Scalar  # type: ignore[assignment]
            path.append(k)  # type: ignore[arg-type]
            p = q + 1
            after = kinds[p]
            if after != "." or gaps[p]:
                break
        if after == ILLEGAL or (not gaps[p] and (after == "[" or after == "(")):
            return None
        var = VarTwin()  # new_var(name, loc), inlined
        var.name = name
        var.location = loc
        var.__class__ = Var  # type: ignore[assignment]
        ref = RefTwin()  # new_ref(var, tuple(path), loc), inlined
        ref.head = var  # type: ignore[assignment]
        ref.path = tuple(path)
        ref.location = loc
        ref.__class__ = Ref  # type: ignore[assignment]
        if after == IDENT and texts[p] in self.future:
            after = texts[p]
        self.pos = p
        self.kind = after
        self.cache[key] = (ref, None, p, after)  # type: ignore[assignment]
        return ref  # type: ignore[return-value]

    def is_lone_token(self, pos: int, kind: str) -> bool:
        """Whether the token at ``pos``, read as ``kind``, is a whole term by
        itself that parse_term reads without the memo (the same test is
        inlined there): reading it again costs less than the memo would, and
        gives an equal term. Not a wildcard (`_` gets a fresh name at each reading, the memo
        keeps the first), not before an illegal token (whose error advancing
        raises) or a '.', '[' or '(' right after it (a ref or call)."""
        if kind not in _LONE_TERM_KINDS or (kind == IDENT and self.texts[pos] == "_"):
            return False
        after = self.kinds[pos + 1]
        return after != ILLEGAL and (after not in _TERM_SUFFIXES or self.gaps[pos + 1] != 0)

    def _term(self) -> ast.Term:
        k = self.kind
        head: ast.Term
        # `contains` is a var outside rule heads (the builtin), and so are the
        # `and`/`or` keywords right before '(': the set builtins `and(a, b)`.
        if k == IDENT or k == "contains" or ((k == "and" or k == "or") and self.next_is_call()):
            var = self.parse_var()
            # advance() (a name is never the last token: eof is) and finish(var), inlined
            p = self.pos + 1
            k = self.kinds[p]
            if k == IDENT:
                if self.texts[p] in self.future:
                    k = self.texts[p]
            elif k == ILLEGAL:
                self.advance()  # raises the lexer's error, if it has one
            self.pos = p
            self.kind = k
            if (k == "." or k == "[" or k == "(") and not self.gaps[p]:
                return self.parse_ref(var)
            if var.name in ROOTS:
                return new_ref(var, (), var.location)
            return var
        elif k == "[":
            head = self.parse_array()
            self.advance()  # past ']', as OPA does after the term (outside its backtracking)
        elif k == "{":
            head = self.parse_set_or_object()
            self.advance()
        elif k == STRING:
            head = new_scalar(self.values[self.pos], self.loc())  # type: ignore[arg-type]
            self.advance()
        elif k == NUMBER or k == ".":
            head = self.parse_number()
        elif k == "-":
            return self.parse_minus()
        elif k == "null" or k == "true" or k == "false":
            head = new_scalar(None if k == "null" else k == "true", self.loc())
            self.advance()
        elif k == TMPL:
            head = self.parse_template()
        elif k == "(":
            self.advance()
            head = self.parse_term_in(True)
            if self.kind != ")":
                raise self.error("non-terminated expression")
            self.advance()
        else:
            raise self.illegal()
        return self.finish(head)

    def finish(self, head: ast.Term) -> ast.Term:
        """A '.', '[' or '(' right after a term continues it as a ref or call."""
        k = self.kind
        if (k == "." or k == "[" or k == "(") and not self.gaps[self.pos]:
            return self.parse_ref(head)
        if type(head) is ast.Var and head.name in ROOTS:
            return new_ref(head, (), head.location)
        return head

    def parse_number(self) -> ast.Scalar:
        loc = self.loc()
        prefix = ""
        if self.kind == "-":
            prefix = "-"
            self.advance()
            if self.kind != NUMBER and self.kind != ".":
                raise self.illegal("expected number")
        if self.kind == ".":
            prefix += "."
            self.advance()
            if self.kind != NUMBER:
                raise self.illegal("expected number")
        lit = self.texts[self.pos]
        if not prefix.endswith(".") and len(lit) > 1 and lit[0] == "0":
            if not (lit[1] == "." or (len(lit) > 2 and lit[1] in "eE")):
                raise self.illegal("expected number without leading zero")
        text = prefix + lit
        value = number_value(text)
        if value is None:
            try:
                Decimal(text)
            except InvalidOperation:
                raise self.illegal("invalid float")
            raise self.error("number too big")
        self.advance()
        return new_scalar(value, loc, text)

    def parse_minus(self) -> ast.Term:
        # '-' before a number is part of the literal; before a var, ref, call
        # or parenthesised term it negates it as minus(0, x) (OPA PR #8551).
        nk = self.kind_at(self.pos + 1) if self.pos + 1 < self.n else EOF
        if nk == NUMBER or nk == ".":
            return self.finish(self.parse_number())
        loc = self.loc()
        self.advance()
        if nk != IDENT and nk != "contains" and nk != "(":
            raise self.illegal("expected number")
        return new_call("minus", (new_scalar(0, loc), self.parse_term()), loc)

    def parse_ref(self, head: ast.Term) -> ast.Term:
        if not isinstance(
            head,
            (ast.Var, ast.Array, ast.Object, ast.SetTerm, ast.ArrayCompr, ast.ObjectCompr, ast.SetCompr, ast.Call),
        ):
            where = head.location
            if not self.lenient_refs:
                raise IllegalRefError(f"illegal ref (head cannot be {value_name(head)})", where, source_line=self.source_line(where.row))
        loc = head.location
        path: list[ast.Term] = []
        gaps = self.gaps
        kinds = self.kinds
        texts = self.texts
        locs = self.locs
        while True:
            k = self.kind
            if k == ".":
                p = self.pos
                while True:  # `.name` after `.name`, with no space between
                    name = p + 1  # (a '.' is never the last token: eof is)
                    nk = kinds[name]
                    if gaps[name] or (nk != IDENT and nk not in BASE_KEYWORDS):
                        self.pos = p
                        self.kind = "."
                        self.advance()  # (raises for an illegal token)
                        if gaps[self.pos]:
                            raise self.dot_whitespace_error(name - 1)
                        raise self.illegal("expected identifier")
                    key = ScalarTwin()  # new_scalar(texts[name], its location), inlined
                    key.value = texts[name]
                    key.location = locs[name] or self.make_loc(name)
                    key.text = None
                    key.__class__ = Scalar  # type: ignore[assignment]
                    path.append(key)  # type: ignore[arg-type]
                    p = name + 1
                    if kinds[p] != "." or gaps[p]:
                        break
                # advance() from the last name (never the last token), inlined
                k = kinds[p]
                if k == IDENT:
                    if texts[p] in self.future:
                        k = texts[p]
                elif k == ILLEGAL:
                    self.pos = name
                    self.advance()  # raises the lexer's error, if it has one
                self.pos = p
                self.kind = k
            elif k == "[":
                self.advance()
                path.append(self.parse_term_in(True))
                if self.kind != "]":
                    raise self.illegal("expected [")
                self.advance()
            elif k == "(":
                call = self.parse_call(new_ref(head, tuple(path), loc))
                if (self.kind == "." or self.kind == "[") and not gaps[self.pos]:
                    return self.parse_ref(call)
                return call
            else:
                break
            if gaps[self.pos]:
                break
        ref = RefTwin()  # new_ref(head, tuple(path), loc), inlined
        ref.head = head
        ref.path = tuple(path)
        ref.location = loc
        ref.__class__ = Ref  # type: ignore[assignment]
        return ref  # type: ignore[return-value]

    def dot_whitespace_error(self, dot: int) -> RegoParseError:
        """The error for a ref's '.' followed by a space, newline or comment."""
        after = self.starts[dot] + 1
        if self.text[after : after + 1] == "#":  # OPA skips a comment here
            nl = self.text.find("\n", after)
            after = nl if nl >= 0 else len(self.text)
        row, col = self.toks.row_col(after)
        if self.text[after : after + 1] == "\n":
            row, col = row + 1, 1  # OPA puts a newline token on the next line
        return self.error_at(Location(self.file, row, col), "unexpected whitespace token: expected identifier")

    def parse_call(self, op: ast.Ref) -> ast.Term:
        loc = op.location
        self.advance()  # '('
        if self.kind == ")":
            self.advance()
            if not op.path and isinstance(op.head, ast.Var) and op.head.name == "set":
                return ast.SetTerm((), loc)
            return new_call(_op_name(op), (), loc, op)
        args = self.parse_term_list(")", [])
        self.advance()
        return new_call(_op_name(op), tuple(args), loc, op)

    def parse_term_list(self, end: str, items: list[ast.Term]) -> list[ast.Term]:
        """Comma-separated terms up to ``end`` (not consumed); a trailing comma is fine."""
        if self.kind == end:
            return items
        while True:
            items.append(self.parse_term_in(False))
            k = self.kind
            if k == end:
                return items
            if k == ",":
                self.advance()
                if self.kind == end:
                    return items
                continue
            raise self.illegal(f'expected "," or "{end}"')

    # The collection parsers stop at their closing bracket; _term steps over
    # it. (As in OPA: a bad token right after a collection is read outside
    # the collection's backtracking, so that its error is not dropped.)

    def parse_array(self) -> ast.Term:
        loc = self.loc()
        self.advance()
        if self.kind == "]":
            return ast.Array((), loc)
        comprehension = True
        if self.kind == ",":  # OPA tolerates a leading comma (but then no comprehension)
            comprehension = False
            self.advance()
        start = self.save()
        # A plain term first: `[x | y]` is a comprehension, not an array of `x | y`.
        head = self.parse_term()
        k = self.kind
        if k == "]":
            return ast.Array((head,), loc)
        if k == ",":
            self.advance()
            return ast.Array(tuple(self.parse_term_list("]", [head])), loc)
        if k == "|" and comprehension:
            try:
                self.advance()
                self.closures = True
                return ast.ArrayCompr(head, self.parse_body("]"), loc)
            except FatalParseError:
                raise
            except RegoParseError:
                if self.kind != ",":
                    raise
        self.restore(start)
        return ast.Array(tuple(self.parse_term_list("]", [])), loc)

    def parse_set_or_object(self) -> ast.Term:
        loc = self.loc()
        self.advance()
        if self.kind == "}":
            return ast.Object((), loc)
        comprehension = True
        if self.kind == ",":
            comprehension = False
            self.advance()
        start = self.save()
        head = self.parse_term()
        k = self.kind
        if (k == "|" and comprehension) or k == "}" or k == ",":
            return self.parse_set(start, head, comprehension, loc)
        if k == ":":
            return self.parse_object(head, comprehension, loc)
        self.restore(start)
        head = self.parse_term_in(False)
        k = self.kind
        if k == "}" or k == ",":
            return self.parse_set(start, head, False, loc)
        if k == ":":
            return self.parse_object(head, comprehension, loc)
        raise self.illegal("non-terminated set")

    def braces_hold_no_collection(self) -> bool:
        """Whether reading the `{` at the current token as a set or object
        term certainly fails, as it does for a body like `{ x := 1 ... }`.

        This replays parse_set_or_object up to where it gives up, with the
        same (memoised) reads, minus its error: parse_if_body then skips a
        reading whose failure it would only catch. False when unsure."""
        state = self.save()
        if memo_key(*state) in self.cache:
            return False
        self.enter()  # as parse_term does for the `{` term
        try:
            self.advance()
            k = self.kind
            if k == "}" or k == ",":
                return False
            if k not in _TERM_STARTS and self.depth < MAX_DEPTH and not ((k == "and" or k == "or") and self.next_is_call()):
                # (`some`, `not`, `every`...): parse_term would only make and raise its error
                return True
            start = self.save()
            self.parse_term()
            k = self.kind
            if k == "|" or k == "}" or k == "," or k == ":":
                return False
            self.restore(start)
            depth = self.depth
            term = self.parse_term_in(False)
            k = self.kind
            if k == "}" or k == "," or k == ":":
                return False
            # The body's first expression starts with this same reading:
            # parse_literal takes it from here instead of reading it again.
            self.body_head = (start[0], start[1], depth, term, self.pos, k)
            return True
        except FatalParseError:
            raise
        except RegoParseError:
            return True
        finally:
            self.depth -= 1
            self.restore(state)

    def parse_set(self, start: tuple[int, str], head: ast.Term, comprehension: bool, loc: Location) -> ast.Term:
        k = self.kind
        if k == "}":
            return ast.SetTerm((head,), loc)
        if k == ",":
            self.advance()
            return ast.SetTerm(tuple(self.parse_term_list("}", [head])), loc)
        # k == "|" and comprehension
        try:
            self.advance()
            self.closures = True
            return ast.SetCompr(head, self.parse_body("}"), loc)
        except FatalParseError:
            raise
        except RegoParseError:
            if self.kind != ",":
                raise
        self.restore(start)
        return ast.SetTerm(tuple(self.parse_term_list("}", [])), loc)

    def parse_object(self, key: ast.Term, comprehension: bool, loc: Location) -> ast.Term:
        self.advance()  # ':'
        start = self.save()
        # `{k: v | body}` is a comprehension; only when that fails is
        # `v | ...` an `or` expression.
        value = self.parse_term()
        if comprehension:
            k = self.kind
            if k == "}" or k == ",":
                try:
                    return self.parse_object_finish(key, value, True, loc)
                except FatalParseError:
                    raise
                except RegoParseError as err:
                    # As OPA: an error anywhere in the rest of the object is
                    # reported as "non-terminated object" at its first value;
                    # but OPA notes a ref with a scalar head and reads on, so
                    # that is the error when the rest of the object reads.
                    self.restore(start)
                    if type(err) is IllegalRefError and self.reads_with_bad_refs(lambda: self.parse_object_finish(key, self.parse_term(), True, loc)):
                        raise err.with_traceback(None) from None
                    raise self.illegal("non-terminated object") from None
            if k == "|":
                try:
                    return self.parse_object_finish(key, value, True, loc)
                except FatalParseError:
                    raise
                except RegoParseError:
                    pass
        self.restore(start)
        value = self.parse_term_in(False)
        if self.kind == "}" or self.kind == ",":
            return self.parse_object_finish(key, value, False, loc)
        raise self.illegal("non-terminated object")

    def reads_with_bad_refs(self, read: Callable[[], object]) -> bool:
        """Whether ``read`` succeeds from here when refs with a scalar head
        pass (with a memo of its own); the position is kept."""
        state, cache = self.save(), self.cache
        self.cache, self.lenient_refs = {}, True
        try:
            read()
            return True
        except FatalParseError:
            raise
        except RegoParseError:
            return False
        finally:
            self.cache, self.lenient_refs = cache, False
            self.restore(state)

    def parse_object_finish(self, key: ast.Term, value: ast.Term, comprehension: bool, loc: Location) -> ast.Term:
        k = self.kind
        if k == "}":
            return ast.Object(((key, value),), loc)
        if k == "|":
            if not comprehension:
                raise self.illegal("non-terminated object")
            self.advance()
            self.closures = True
            return ast.ObjectCompr(key, value, self.parse_body("}"), loc)
        # k == ","
        self.advance()
        pairs = [(key, value)]
        while self.kind != "}":
            k2 = self.parse_term_in(False)
            if self.kind != ":":
                raise self.illegal('expected ":"')
            self.advance()
            pairs.append((k2, self.parse_term_in(False)))
            if self.kind == "}":
                break
            if self.kind != ",":
                raise self.illegal('expected "," or "}"')
            self.advance()
        return ast.Object(tuple(pairs), loc)

    def parse_template(self) -> ast.Term:
        loc = self.loc()
        self.templates = True
        parts: list[str | ast.Term] = []
        raw = False
        while True:
            piece = self.values[self.pos]
            assert isinstance(piece, tuple)
            text: str = piece[0]
            is_end: bool = piece[1]
            raw = piece[2]
            if text:
                parts.append(text)
            if is_end:
                self.advance()
                break
            self.advance()
            expr = self.parse_literal()
            stmt = expr.statement
            bad = None
            if expr.negated:
                bad = "unexpected negation ('not') in template-string expression"
            elif isinstance(stmt, ast.Unify):
                bad = "unexpected unification ('=') in template-string expression"
            elif isinstance(stmt, ast.Assign):
                bad = "unexpected assignment (':=') in template-string expression"
            elif isinstance(stmt, ast.Every):
                bad = "unexpected 'every' in template-string expression"
            elif isinstance(stmt, (ast.SomeVars, ast.SomeIn)):
                bad = "unexpected 'some' in template-string expression"
            if bad is not None:
                raise self.error_at(expr.location, bad)
            value = cast(ast.Term, stmt)  # the statements that are not terms were refused above
            parts.append(self.template_with(value, expr) if expr.with_mods else value)
            if self.kind != "}":
                raise self.error("expected } to end template string expression")
            self.advance()
            if self.kind != TMPLC:
                raise self.illegal("expected template string")
        return ast.TemplateString(tuple(parts), bool(raw), loc)

    def template_with(self, value: ast.Term, expr: ast.Expr) -> ast.Term:
        """``{t with ...}`` in a template string: ``[v | v := t with ...][0]``.

        The modifiers apply to that expression alone, as they would to a body
        expression; an undefined value leaves the element out, so the part is
        undefined (``<undefined>``) as a plain part would be. ``v`` is named
        like a wildcard, so no variable of the policy can be it.
        """
        loc = expr.location
        var = new_var(f"$wildcard{self.wild}", loc)
        self.wild += 1
        body = (new_expr(ast.Assign(var, value, loc), False, expr.with_mods, loc),)
        self.closures = True
        return new_ref(ast.ArrayCompr(var, body, loc), (new_scalar(0, loc),), loc)

    # ------------------------------------------------------------ the expression layer

    # Terms hold expressions and bodies (brackets, comprehensions, template
    # strings); the layer above, pyrego.parse.exprs.ExprParser, reads them.

    def parse_term_in(self, keyval: bool) -> ast.Term:
        raise NotImplementedError

    def parse_body(self, end: str) -> ast.Body:
        raise NotImplementedError

    def parse_literal(self) -> ast.Expr:
        raise NotImplementedError
