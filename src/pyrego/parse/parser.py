"""The Rego parser: modules, queries and single terms.

Public API::

    parse_module(text, filename="", *, rego_v1=True) -> ast.Module
    parse_query(text, filename="", *, rego_v1=True) -> ast.Body
    parse_term(text, filename="") -> ast.Term

The grammar follows OPA's parser (``v1/ast/parser.go`` and ``parser_ext.go``):
a module is a sequence of statements, each tried as a package, an import, a
rule and finally a bare body (which OPA then reinterprets as a rule, e.g.
``p := 1`` or ``f(x) = y``). Rego v1 is the default; ``rego_v1=False`` gives
v0, where ``if``/``contains``/``in``/``every`` are plain names until imported
from ``future.keywords`` (or with ``import rego.v1``) and rules need no ``if``.
OPA 1.20's opt-in ``and``/``or``/body-``not`` keywords are in
:mod:`pyrego.parse.logic`; terms in :mod:`pyrego.parse.terms`, expressions in
:mod:`pyrego.parse.exprs`;
``# METADATA`` annotations in :mod:`pyrego.parse.annotations`.

Every failure raises :class:`~pyrego.errors.RegoParseError` carrying the
location of the offending token and its source line.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pyrego.ast import nodes as ast
from pyrego.errors import Location, RegoParseError
from pyrego.parse.lexer import ALL_KEYWORDS, BASE_KEYWORDS, EOF, FUTURE_KEYWORDS, IDENT, LOGICAL_KEYWORDS
from pyrego.parse.logic import LogicParser
from pyrego.parse.nodes import new_ref, new_rule, new_rule_head, new_scalar, new_var
from pyrego.parse.terms import FatalParseError, memo_key, value_name

if TYPE_CHECKING:
    from pyrego.parse.annotations import Statement

__all__ = ["parse_module", "parse_query", "parse_term"]

# What `import future.keywords.X` accepts (OPA 1.20: the v0 future keywords,
# plus the logical ones, see parser_logic); `import future.keywords` takes all.
_IMPORTABLE_KEYWORDS = FUTURE_KEYWORDS | LOGICAL_KEYWORDS | {"not"}
_IMPORT_HINT = " (hint: import a different path or use an alias)"

# Operators that may not directly follow a rule name (OPA's parseHeadFinish).
_HEAD_BAD_OPS = frozenset({"+", "-", "*", "/", "%", "&", "|", "==", "!=", ">", ">=", "<", "<="})

_IMPORT_ROOTS = ("data", "input", "future", "rego")

# Deepest Python stack the parser may need: up to about 15 frames per nesting
# level (MAX_DEPTH levels). Python 3.11 keeps Python frames off the C stack.
_RECURSION_LIMIT = 20000


@dataclass(eq=False, slots=True)
class _Head:
    """A rule head while it is being built (OPA's Head, with its parse flags)."""

    var: ast.Var
    path: list[ast.Term]
    location: Location
    args: tuple[ast.Term, ...] | None = None
    value: ast.Term | None = None
    key: ast.Term | None = None
    assign: bool = False
    generated_value: bool = False
    has_if: bool = False
    has_contains: bool = False

    def name(self) -> str:
        return ast.ref_to_string(new_ref(self.var, tuple(self.path), self.location))


@dataclass(eq=False, slots=True)
class _Rule:
    head: _Head
    location: Location
    default: bool = False
    body: ast.Body = ()
    generated_body: bool = False
    else_: _Rule | None = None


@dataclass(eq=False, slots=True)
class _Package:
    ref: ast.Ref
    location: Location


@dataclass(eq=False, slots=True)
class _BodyStmt:
    body: ast.Body
    location: Location


@dataclass(eq=False, slots=True)
class _Rules:
    rules: list[_Rule] = field(default_factory=list)


class Parser(LogicParser):
    """Statement-level parser; see the module docs."""

    def __init__(self, text: str, filename: str, rego_v1: bool) -> None:
        super().__init__(text, filename, set(FUTURE_KEYWORDS) if rego_v1 else set())
        self.rego_v1 = rego_v1
        # v1 rule checks apply in v1 and in v0 modules that import rego.v1
        self.v1_checks = rego_v1
        self.annotations = True  # read ``# METADATA`` blocks (rego.parse_module does not, as in OPA)

    def set_future(self, keywords: set[str]) -> None:
        if keywords != self.future:
            self.use_keywords(set(keywords))

    # ------------------------------------------------------------ modules

    def module(self) -> ast.Module:
        stmts: list[_Package | ast.Import | _Rules | _BodyStmt] = []
        while self.kind != EOF:
            state = self.save()
            if self.kind == "package":
                pkg = self.parse_package()
                if pkg is not None:
                    stmts.append(pkg)
                    continue
                self.restore(state)
            elif self.kind == "import":
                imp = self.parse_import()
                if imp is not None:
                    self.process_import(imp)
                    stmts.append(imp)
                    continue
                self.restore(state)
            rules = self.parse_rules()
            if rules is not None:
                stmts.append(_Rules(rules))
                continue
            self.restore(state)
            loc = self.loc()
            stmts.append(_BodyStmt(self.parse_query(True, EOF), loc))
        return self.assemble(stmts)

    def assemble(self, stmts: list[_Package | ast.Import | _Rules | _BodyStmt]) -> ast.Module:
        if not stmts:
            # (OPA's error has the file alone: row 0, no detail lines)
            empty = RegoParseError("empty module", Location(self.file, 0, 0))
            empty.detailed = False
            raise empty
        # As OPA's parseModule, a statement that is no rule, a package out of
        # place or a missing one is an error that does not stop the others
        # (nor the v1 checks of the rules read): all are reported, first
        # raised, all in its ``errors``, each without detail lines.
        found: list[RegoParseError] = []
        first = stmts[0]
        if not isinstance(first, _Package):
            found.append(self.error_at(_stmt_location(first), "package expected"))
        imports: list[ast.Import] = []
        rules: list[_Rule] = []
        for st in stmts[1:]:
            if isinstance(st, ast.Import):
                imports.append(st)
            elif isinstance(st, _Rules):
                rules.extend(st.rules)
            elif isinstance(st, _BodyStmt):
                try:
                    rules.append(self.rule_from_body(st.body, st.location))
                except RegoParseError as exc:
                    found.append(exc)
            else:
                found.append(self.error_at(st.location, "unexpected package"))
        for err in found:
            err.detailed = False
            err.args = (err.format(),)
        if self.v1_checks:
            # Every rule is checked, each of its else branches too.
            for rule in rules:
                r: _Rule | None = rule
                while r is not None:
                    found += self.check_v1(r)
                    r = r.else_
        if found:
            found[0].errors = found  # type: ignore[attr-defined]
            raise found[0]
        assert isinstance(first, _Package)
        annotations: tuple[ast.Annotation, ...] = ()
        if self.annotations and any("METADATA" in text for _, text in self.toks.comments):  # (else there are no blocks)
            # (imported here: annotations bring in the YAML parser, which most policies never need)
            from pyrego.parse.annotations import attach_annotations, parse_annotation_blocks

            blocks = parse_annotation_blocks(self.comment_positions(), self.file, self.source_line, parse_query)
            annotations = attach_annotations(blocks, _placed(first, stmts), self.source_line)
        return ast.Module(
            first.ref,
            tuple(imports),
            tuple(self.build_rule(r) for r in rules),
            self.file,
            self.v1_checks,
            annotations,
            first.location,
            self.closures,
            "with" in self.text and "with" in self.kinds,
            self.templates,
        )

    def build_rule(self, r: _Rule) -> ast.Rule:
        chain = [r]
        while chain[-1].else_ is not None:
            chain.append(chain[-1].else_)  # type: ignore[arg-type]
        built: ast.Rule | None = None
        for branch in reversed(chain):  # (the last else first: each branch holds the next)
            h = branch.head
            head = new_rule_head(
                new_ref(h.var, tuple(h.path), h.var.location),
                h.value,
                h.key if h.value is None else None,
                h.args,
                h.assign,
                h.location,
            )
            built = new_rule(head, branch.body, branch.default, built, branch.location, self.file)
        assert built is not None
        return built

    def check_v1(self, r: _Rule) -> list[RegoParseError]:
        """OPA's CheckRegoV1 rule checks (run at parse time in v1): every one
        that fails, in OPA's order, each printed without detail lines (OPA
        makes these errors after parsing, with none)."""
        h = r.head
        what = "function" if h.args else "rule"
        messages = []
        if not h.path and h.var.name in ALL_KEYWORDS:
            messages.append(f"{h.var.name} keyword cannot be used for rule name")
        if r.generated_body and h.generated_value:
            messages.append(f"{what} must have value assignment and/or body declaration")
        if not r.generated_body and not h.has_if and not r.default:
            messages.append(f"`if` keyword is required before {what} body")
        if h.key is not None and h.value is None and not h.has_contains:
            messages.append("`contains` keyword is required for partial set rules")
        errors = [self.error_at(r.location, m) for m in messages]
        for err in errors:
            err.detailed = False
            err.args = (err.format(),)
        return errors

    # ------------------------------------------------------------ package and imports

    def parse_package(self) -> _Package | None:
        loc = self.loc()
        if self.next_is_ref():  # `package.x` / `package[0]`: a ref, not a package
            return None
        self.advance()
        if self.kinds[self.pos] != IDENT and self.kinds[self.pos] not in BASE_KEYWORDS:
            raise self.illegal()
        self.kind = IDENT
        term = self.parse_term()
        data = new_var("data", term.location)
        if isinstance(term, ast.Var):
            return _Package(new_ref(data, (new_scalar(term.name, term.location),), term.location), loc)
        if isinstance(term, ast.Ref) and isinstance(term.head, ast.Var):
            path: list[ast.Term] = [new_scalar(term.head.name, term.head.location)]
            for p in term.path:
                if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
                    raise self.error_at(p.location, f"unexpected {value_name(p)} token: expecting string")
                path.append(p)
            return _Package(new_ref(data, tuple(path), term.location), loc)
        if isinstance(term, ast.Ref):
            raise self.error_at(term.location, f"unexpected {value_name(term.head)} token: expecting var")
        raise self.illegal()

    def parse_import(self) -> ast.Import | None:
        loc = self.loc()
        if self.next_is_ref():
            return None
        self.advance()
        if self.kinds[self.pos] != IDENT and self.kinds[self.pos] not in BASE_KEYWORDS:
            raise self.illegal()
        # The path is read with no future keywords, so that
        # `import future.keywords.in` works where `in` is already a keyword.
        saved = self.future
        self.use_keywords(set())
        self.kind = IDENT
        try:
            term = self.parse_term()
        finally:
            self.use_keywords(saved)
        # OPA's reader of the path has already read the next token, with
        # those keywords off: one there starts the next statement as a name.
        if self.kind in _IMPORTABLE_KEYWORDS:
            self.kind = IDENT
        if isinstance(term, ast.Var):
            term = new_ref(term, (), term.location)
        if not isinstance(term, ast.Ref) or not isinstance(term.head, ast.Var):
            raise self.error("expected path")
        for p in term.path:
            if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
                raise self.error_at(p.location, f"unexpected {value_name(p)} token: expecting string")
        root = term.head.name
        if root not in _IMPORT_ROOTS:
            raise self.error_at(
                term.location,
                "unexpected import path, must begin with one of: {data, future, input, rego}, "
                f"got: {root} (hint: if this is unexpected, try updating OPA)",
            )
        if self.kind == "as":
            self.advance()
            if self.kind != IDENT:
                raise self.illegal("expected var")
            alias = self.parse_term()
            if not isinstance(alias, ast.Var):
                raise self.illegal("expected var")
            return ast.Import(term, alias.name, loc)
        keywords = ALL_KEYWORDS if self.rego_v1 else BASE_KEYWORDS
        if not term.path:
            if root in keywords:
                raise self.error_at(term.location, f"unexpected import path, must not end with a keyword, got: {root}{_IMPORT_HINT}")
        elif root != "future":
            last = term.path[-1]
            assert isinstance(last, ast.Scalar) and isinstance(last.value, str)
            if last.value in keywords:
                raise self.error_at(
                    last.location, f"unexpected import path, must not end with a keyword, got: {last.value}{_IMPORT_HINT}"
                )
        return ast.Import(term, None, loc)

    def process_import(self, imp: ast.Import) -> None:
        """`import rego.v1` / `import future.keywords[.x]` switch keywords on."""
        # (the next statement's first token stays the name parse_import made it)
        was_name = self.kind == IDENT
        self.switch_keywords(imp)
        if was_name:
            self.kind = IDENT

    def switch_keywords(self, imp: ast.Import) -> None:
        path = imp.path
        root = path.head.name if isinstance(path.head, ast.Var) else ""
        names = [p.value for p in path.path if isinstance(p, ast.Scalar)]
        if root == "rego":
            if names != ["v1"]:
                raise self.error_at(path.location, f"invalid import `{ast.ref_to_string(path)}`, must be `rego.v1`")
            if self.rego_v1:
                return
            if imp.alias is not None:
                raise self.error_at(path.location, "`rego` imports cannot be aliased")
            self.v1_checks = True
            self.set_future(self.future | FUTURE_KEYWORDS)
        elif root == "future":
            if not names or names[0] != "keywords":
                raise self.error_at(path.location, "invalid import, must be `future.keywords`")
            if imp.alias is not None:
                raise self.error_at(path.location, "`future` imports cannot be aliased")
            keywords: set[str] = set(_IMPORTABLE_KEYWORDS)
            if len(names) == 2:
                kw = names[1]
                if kw not in _IMPORTABLE_KEYWORDS:
                    allowed = " ".join(sorted(_IMPORTABLE_KEYWORDS))
                    raise self.error_at(path.location, f"unexpected keyword, must be one of [{allowed}]")
                assert isinstance(kw, str)
                keywords = {kw, "in"} if kw == "every" else {kw}  # every needs in
            if "not" in keywords:
                self.not_body = True  # `not` negates whole bodies from now on
            self.set_future(self.future | (keywords - {"not"}))

    # ------------------------------------------------------------ rules

    def parse_rules(self) -> list[_Rule] | None:
        """A rule (plus any extra `{ }` bodies, each its own rule), or None when
        the statement is not a rule of this shape (it may still be a body)."""
        loc = self.loc()
        self.keyword_as_ident()
        default = False
        if self.kind == "default":
            self.advance()
            default = True
            self.keyword_as_ident()
        if self.kind != IDENT:
            return None
        got = self.parse_head(default)
        if got is None:
            return None
        head, uses_contains = got
        rule = _Rule(head, loc, default)
        if default:
            self.validate_default(rule)
            return [rule]

        has_if = self.kind == "if"
        if has_if and not uses_contains and len(head.path) == 1:
            # `p[x] if ...` is a single-value rule p[x] = true
            v = head.path[0]
            if (not is_ground(v) or isinstance(v, ast.Ref)) and head.args is None:
                head.key = v
            if head.value is None:
                head.value = new_scalar(True, head.location)
                head.generated_value = True
        if not has_if and not uses_contains and head.args is None and len(head.path) == 1:
            # v0 `p[x] { ... }` is a partial set; `p[k] = v { ... }` a partial object
            head.key = head.path[0]
            if head.value is None:
                head.path = []

        if has_if:
            head.has_if = True
            self.advance()
            rule.body = self.parse_if_body()
        elif self.kind == "{":
            self.advance()
            rule.body = self.parse_body("}")
            self.advance()
        elif uses_contains:
            rule.generated_body = True
            rule.location = head.location
            return [rule]
        else:
            return None

        if self.kind == "else" and not self.next_is_ref():
            if head.path and not all(is_ground(p) for p in head.path):
                raise self.error("else keyword cannot be used on rules with variables in head")
            if head.key is not None:
                raise self.error("else keyword cannot be used on multi-value rules")
            rule.else_ = self.parse_else(head)

        rules = [rule]
        while self.kind == "{":
            if rule.else_ is not None:
                raise self.error("expected else keyword")
            bloc = self.loc()
            self.advance()
            body = self.parse_body("}")
            self.advance()
            nh = self.copy_head(head, bloc)
            nh.value, nh.key, nh.generated_value = head.value, head.key, head.generated_value
            nh.has_contains = head.has_contains
            rules.append(_Rule(nh, bloc, body=body))
        return rules

    def parse_if_body(self) -> ast.Body:
        """After `if`: one expression, or a braced body. `{ x }` is a body, not
        a set literal (a set is always true, so that reading is useless)."""
        if self.kind != "{":
            return (self.parse_literal(),)  # (`set()` too: an empty set, true as OPA reads it)
        state = self.save()
        # Braces: as OPA, try them as a one-expression body first (a set or
        # object term, possibly the start of a longer expression), unless
        # that reading certainly fails.
        if self.logic or self.not_body or not self.braces_hold_no_collection():
            try:
                expr = self.parse_literal()
                if not isinstance(expr.statement, ast.SetTerm) or expr.negated:
                    return (expr,)
            except FatalParseError:
                raise
            except RegoParseError:
                # As OPA: an error after a first term that parsed (and is no
                # set) stands; only a failed `{` reading falls back to a body.
                hit = self.cache.get(memo_key(*state))
                if hit is not None and hit[1] is None and not isinstance(hit[0], ast.SetTerm):
                    raise
            self.restore(state)
        self.advance()
        body = self.parse_body("}")
        self.advance()
        return body

    def matching_paren(self) -> int:
        """The '(' opening the call whose ')' is the previous token."""
        p, level = self.pos - 1, 0
        while p > 0:
            if self.kinds[p] == ")":
                level += 1
            elif self.kinds[p] == "(":
                level -= 1
                if level == 0:
                    return p
            p -= 1
        return self.pos

    def copy_head(self, head: _Head, loc: Location) -> _Head:
        """A head for a chained body or else branch: same ref and args, fresh wildcards."""
        args = head.args
        if args is not None:
            fresh: list[ast.Term] = []
            for a in args:
                if isinstance(a, ast.Var) and a.name.startswith("$wildcard"):
                    a = new_var(f"$wildcard{self.wild}", a.location)
                    self.wild += 1
                fresh.append(a)
            args = tuple(fresh)
        return _Head(head.var, list(head.path), loc, args, head.value, None, head.assign, False, head.has_if)

    def parse_head(self, default: bool) -> tuple[_Head, bool] | None:
        loc = self.loc()
        start = self.pos
        var = self.parse_var()
        self.advance()
        if self.kind in _HEAD_BAD_OPS and not self.gaps[self.pos]:
            raise self.illegal()
        term: ast.Term = var
        if self.kind == "(" or self.kind == "." or self.kind == "[":
            term = self.parse_ref(var)
        args: tuple[ast.Term, ...] | None = None
        if isinstance(term, ast.Var):
            path: list[ast.Term] = []
        elif isinstance(term, ast.Ref) and isinstance(term.head, ast.Var):
            path = list(term.path)
        elif isinstance(term, ast.Call) and term.op_ref is not None and isinstance(term.op_ref.head, ast.Var):
            path = list(term.op_ref.path)
            # As OPA: `f()` (no arguments) is a plain rule `f`, not a function.
            args = term.args or None
        elif isinstance(term, ast.Call) and term.op_ref is not None:
            raise self.illegal(f"rule head ref {self.source_text(start, self.matching_paren())} invalid")
        else:
            return None  # `set()`, `f(x).y`: not a rule head (may still be a body)
        head = _Head(var, path, loc, args)
        k = self.kind
        if k == "contains":
            if args is not None:
                raise self.illegal(
                    "the contains keyword can only be used with multi-value rule definitions "
                    f"(e.g., {head.name()} contains <VALUE> {{ ... }})"
                )
            self.advance()
            head.key = self.parse_term_in(True)
            head.has_contains = True
            return head, True
        if k == "=" or k == ":=":
            self.advance()
            head.assign = k == ":="
            head.value = self.parse_term_in(True)
        if head.value is None and (len(path) != 1 or args is not None):
            head.value = new_scalar(True, loc)
            head.generated_value = True
        return head, False

    def parse_else(self, head: _Head) -> _Rule:
        """An else chain, branch after branch (a loop: OPA takes chains of
        any length, and generated lookup tables have thousands)."""
        first = branch = self._parse_else(head)
        while self.kind == "else" and not branch.generated_body:
            branch.else_ = self._parse_else(head)
            branch = branch.else_
        return first

    def _parse_else(self, head: _Head) -> _Rule:
        loc = self.loc()
        nh = self.copy_head(head, loc)
        nh.has_if = False  # (an else branch needs its own `if` in v1)
        self.advance()
        k = self.kind
        if k == "{" or k == "if":
            nh.value = new_scalar(True, loc)
            nh.generated_value = True
        elif k == ":=" or k == "=":
            nh.assign = k == ":="
            self.advance()
            nh.value = self.parse_term_in(True)
        else:
            raise self.illegal("expected else value term or rule body")
        rule = _Rule(nh, loc)
        if self.kind != "if" and self.kind != "{":
            rule.generated_body = True
            return rule
        if self.kind == "if":
            nh.has_if = True
            self.advance()
        if self.kind == "{":
            self.advance()
            rule.body = self.parse_body("}")
            self.advance()
        elif self.kind != EOF:
            rule.body = (self.parse_literal(),)
        else:
            raise self.illegal("rule body expected")
        return rule

    def validate_default(self, rule: _Rule) -> None:
        h = rule.head
        if h.value is None:
            raise self.error_at(rule.location, "illegal default rule (must have a value)")
        bad = _default_value_problem(h.value)
        if bad is not None:
            raise self.error_at(rule.location, f"illegal default rule (value cannot contain {bad})")
        seen: set[str] = set()
        for a in h.args or ():
            if not isinstance(a, ast.Var):
                raise self.error_at(rule.location, f"illegal default rule (arguments cannot contain {value_name(a)})")
            if a.name in seen:
                raise self.error_at(rule.location, f"illegal default rule (arguments cannot be repeated {a.name})")
            seen.add(a.name)

    def rule_from_body(self, body: ast.Body, loc: Location) -> _Rule:
        """OPA's ParseRuleFromBody: `p := 1`, `p[k] = v`, `f(x) = y`, `p[x]`,
        `a.b.c`, `f(x)` written without a rule body."""
        if len(body) != 1:
            raise self.error_at(loc, "multiple expressions cannot be used for rule head")
        expr = body[0]
        if id(expr) in self.logical_ids:
            raise self.error_at(loc, "expression cannot be used for rule head")
        if expr.with_mods:
            raise self.error_at(loc, "expressions using with keyword cannot be used for rule head")
        if expr.negated:
            raise self.error_at(loc, "negated expressions cannot be used for rule head")
        stmt = expr.statement
        if isinstance(stmt, (ast.SomeVars, ast.SomeIn)):
            raise self.error_at(loc, "'some' declarations cannot be used for rule head")
        if isinstance(stmt, ast.Every):
            raise self.error_at(loc, "expression cannot be used for rule head")
        if isinstance(stmt, (ast.Assign, ast.Unify)):
            head = self.head_from_eq(stmt.lhs, stmt.rhs, loc)
            head.assign = isinstance(stmt, ast.Assign)
            return _Rule(head, loc, generated_body=True)
        if isinstance(stmt, ast.Call):
            op = stmt.op_ref
            if op is None or _is_builtin(stmt.op):
                raise self.error_at(loc, "rule name conflicts with built-in function")
            if not stmt.args:
                raise self.error_at(loc, "rule argument list must take at least one argument")
            if not isinstance(op.head, ast.Var):
                raise self.error_at(loc, f"invalid rule head: {ast.ref_to_string(op)}")
            head = _Head(op.head, list(op.path), loc, stmt.args, new_scalar(True, loc))
            return _Rule(head, loc, generated_body=True)
        if isinstance(stmt, ast.Ref):
            if not isinstance(stmt.head, ast.Var):
                raise self.error_at(loc, f"invalid rule head: {ast.ref_to_string(stmt)}")
            if len(stmt.path) >= 2:
                head = _Head(stmt.head, list(stmt.path), loc, None, new_scalar(True, loc), generated_value=True)
            elif len(stmt.path) == 1:
                head = _Head(stmt.head, [], loc, None, None, stmt.path[0])
            else:
                raise self.error_at(loc, "refs cannot be used for rule head")
            return _Rule(head, loc, generated_body=True)
        raise self.error_at(loc, f"{value_name(stmt)} cannot be used for rule name")

    def head_from_eq(self, lhs: ast.Term, rhs: ast.Term, loc: Location) -> _Head:
        if isinstance(lhs, ast.Call):
            op = lhs.op_ref
            if op is None:  # an operator: OPA makes a function of it too (`x + 1 = 2` defines plus)
                names = lhs.op.split(".")
                path = tuple(new_scalar(n, lhs.location) for n in names[1:])
                op = new_ref(new_var(names[0], lhs.location), path, lhs.location)
            if not isinstance(op.head, ast.Var):
                raise self.error_at(loc, f"invalid rule head: {ast.ref_to_string(op)}")
            return _Head(op.head, list(op.path), loc, lhs.args or None, rhs)
        if isinstance(lhs, ast.Ref):
            if not isinstance(lhs.head, ast.Var):
                raise self.error_at(loc, f"invalid rule head: {ast.ref_to_string(lhs)}")
            return _Head(lhs.head, list(lhs.path), loc, None, rhs)
        if isinstance(lhs, ast.Var):
            return _Head(lhs, [], loc, None, rhs)
        raise self.error_at(loc, f"{value_name(lhs)} cannot be used for rule name")

    # ------------------------------------------------------------ queries

    def query(self) -> ast.Body:
        body: list[ast.Expr] = []
        while self.kind != EOF:
            if (self.kind == "package" or self.kind == "import") and not self.next_is_ref():
                raise self.error(f"expected body but got {self.kind}")
            body.extend(self.parse_query(True, EOF))
        return tuple(body)


def is_ground(t: object) -> bool:
    """OPA's groundness: no variables (a ref's head does not count)."""
    if isinstance(t, ast.Scalar):
        return True
    if isinstance(t, ast.Var):
        return False
    if isinstance(t, ast.Ref):
        return all(is_ground(p) for p in t.path)
    if isinstance(t, (ast.Array, ast.SetTerm)):
        return all(is_ground(x) for x in t.items)
    if isinstance(t, ast.Object):
        return all(is_ground(k) and is_ground(v) for k, v in t.items)
    if isinstance(t, ast.Call):
        return all(is_ground(a) for a in t.args)
    if isinstance(t, ast.TemplateString):
        return all(isinstance(p, str) or is_ground(p) for p in t.parts)
    return False  # comprehensions always bind variables


def _placed(first: _Package, stmts: list[_Package | ast.Import | _Rules | _BodyStmt]) -> list[Statement]:
    """What annotations may attach to, in order (only wanted when there are
    METADATA comments). A body statement's rule has the statement's location."""
    from pyrego.parse.annotations import Statement

    placed = [Statement("package", first.location.row)]
    for st in stmts[1:]:
        if isinstance(st, ast.Import):
            placed.append(Statement("import", st.location.row))
        elif isinstance(st, _Rules):
            placed.extend(Statement("rule", r.location.row) for r in st.rules)
        else:
            placed.append(Statement("rule", _stmt_location(st).row))
    return placed


def _stmt_location(st: _Package | ast.Import | _Rules | _BodyStmt) -> Location:
    if isinstance(st, _Rules):
        return st.rules[0].location
    return st.location


def _default_value_problem(t: ast.Term) -> str | None:
    """What a default value may not contain (vars, refs, calls), closures excepted."""
    if isinstance(t, ast.Var):
        return "var"
    if isinstance(t, ast.Ref):
        return "ref"
    if isinstance(t, ast.Call):
        return "call"
    items: list[ast.Term] = []
    if isinstance(t, (ast.Array, ast.SetTerm)):
        items = list(t.items)
    elif isinstance(t, ast.Object):
        for k, v in t.items:
            items.extend((k, v))
    elif isinstance(t, ast.TemplateString):
        items = [p for p in t.parts if not isinstance(p, str)]
    for x in items:
        bad = _default_value_problem(x)
        if bad is not None:
            return bad
    return None


def _is_builtin(name: str) -> bool:
    # Imported lazily: only top-level call expressions need it.
    try:
        from pyrego.builtins.registry import lookup

        return lookup(name) is not None
    except Exception:
        return False


@contextmanager
def deep_recursion() -> Iterator[None]:
    """A recursion limit that fits MAX_DEPTH levels of the parser, and else
    chains thousands of branches long in what walks a module's tree (the
    formatter, the JSON form): since Python 3.11 calls between Python
    functions use no C stack."""
    old = sys.getrecursionlimit()
    if old < _RECURSION_LIMIT:
        sys.setrecursionlimit(_RECURSION_LIMIT)
    try:
        yield
    finally:
        if old < _RECURSION_LIMIT:
            sys.setrecursionlimit(old)


def _run(text: str, filename: str, rego_v1: bool, what: str, annotations: bool = True) -> object:
    with deep_recursion():
        return _run_parser(text, filename, rego_v1, what, annotations)


def _run_parser(text: str, filename: str, rego_v1: bool, what: str, annotations: bool) -> object:
    """Parse, mapping any stray exception to RegoParseError (the contract
    is: nothing else escapes)."""
    if not isinstance(text, str):
        raise RegoParseError(f"expected text, got {type(text).__name__}", Location(filename, 1, 1))
    parser: Parser | None = None
    try:
        parser = Parser(text, filename, rego_v1)
        parser.annotations = annotations
        if what == "module":
            return parser.module()
        return parser.query()
    except RegoParseError as exc:
        # (OPA's detail comes from the whole text: at the end of a text that
        # ends in a newline it is the last line with text, not the empty one)
        for err in getattr(exc, "errors", None) or [exc]:
            err.attach_text(text)
        raise
    except RecursionError:
        raise _internal_error(parser, filename, "max parsing recursion depth exceeded")
    except Exception as e:  # a parser bug must still surface as a parse error
        raise _internal_error(parser, filename, f"internal parser error: {type(e).__name__}: {e}")
    finally:
        if parser is not None:
            # Memoised errors hold tracebacks whose frames hold the parser:
            # clearing the memo lets all of it be freed at once by refcount.
            parser.cache.clear()


def _internal_error(parser: Parser | None, filename: str, message: str) -> RegoParseError:
    if parser is None:
        return RegoParseError(message, Location(filename, 1, 1))
    return parser.error(message)


def parse_module(text: str, filename: str = "", *, rego_v1: bool = True, annotations: bool = True) -> ast.Module:
    """Parse a policy file (``annotations=False``: ``# METADATA`` blocks are
    plain comments). Raises RegoParseError."""
    result = _run(text, filename, rego_v1, "module", annotations)
    assert isinstance(result, ast.Module)
    return result


def parse_query(text: str, filename: str = "", *, rego_v1: bool = True) -> ast.Body:
    """Parse a query: expressions separated by ';' or newlines. Raises RegoParseError."""
    result = _run(text, filename, rego_v1, "query")
    assert isinstance(result, tuple)
    return result


def parse_term(text: str, filename: str = "") -> ast.Term:
    """Parse exactly one term (e.g. ``{"a": [1, 2]}`` or ``data.x``). Raises RegoParseError."""
    body = parse_query(text, filename)
    if len(body) != 1:
        loc = body[1].location if len(body) > 1 else Location(filename, 1, 1)
        raise RegoParseError("expected exactly one term", loc, source_line=_line(text, loc.row))
    expr = body[0]
    stmt = expr.statement
    if expr.negated or expr.with_mods or isinstance(stmt, (ast.Assign, ast.Unify, ast.SomeVars, ast.SomeIn, ast.Every)):
        raise RegoParseError("expected term", expr.location, source_line=_line(text, expr.location.row))
    return stmt


def _line(text: str, row: int) -> str | None:
    lines = text.split("\n")
    return lines[row - 1].rstrip("\r") if 1 <= row <= len(lines) else None
