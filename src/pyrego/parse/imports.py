"""The ``package`` and ``import`` statements of a module, and the keywords
an import switches on (``import rego.v1``, ``import future.keywords[.x]``)."""

from __future__ import annotations

from dataclasses import dataclass

from pyrego.ast import nodes as ast
from pyrego.errors import Location
from pyrego.parse.lexer import ALL_KEYWORDS, BASE_KEYWORDS, FUTURE_KEYWORDS, IDENT, LOGICAL_KEYWORDS
from pyrego.parse.logic import LogicParser
from pyrego.parse.nodes import new_ref, new_scalar, new_var
from pyrego.parse.terms import value_name

# What `import future.keywords.X` accepts (OPA 1.20: the v0 future keywords,
# plus the logical ones, see parser_logic); `import future.keywords` takes all.
_IMPORTABLE_KEYWORDS = FUTURE_KEYWORDS | LOGICAL_KEYWORDS | {"not"}
_IMPORT_HINT = " (hint: import a different path or use an alias)"
_IMPORT_ROOTS = ("data", "input", "future", "rego")


@dataclass(eq=False, slots=True)
class PackageStatement:
    """A module's ``package`` statement as read (its path under ``data``)."""

    ref: ast.Ref
    location: Location


class ImportParser(LogicParser):
    """Reads ``package`` and ``import`` statements (a part of the module parser)."""

    rego_v1: bool
    v1_checks: bool

    def set_future(self, keywords: set[str]) -> None:
        if keywords != self.future:
            self.use_keywords(set(keywords))

    def parse_package(self) -> PackageStatement | None:
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
            return PackageStatement(new_ref(data, (new_scalar(term.name, term.location),), term.location), loc)
        if isinstance(term, ast.Ref) and isinstance(term.head, ast.Var):
            path: list[ast.Term] = [new_scalar(term.head.name, term.head.location)]
            for p in term.path:
                if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
                    raise self.error_at(p.location, f"unexpected {value_name(p)} token: expecting string")
                path.append(p)
            return PackageStatement(new_ref(data, tuple(path), term.location), loc)
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
