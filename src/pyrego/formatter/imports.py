"""What the output may use, and which ``future.keywords`` / ``rego.v1``
imports it keeps, adds or drops (OPA's ``AstWithOpts`` preamble)."""

from __future__ import annotations

from dataclasses import dataclass

from pyrego.formatter.nodes import GENERATED_FILE, Every, Expr, Import, Loc, Module, Rule, Term
from pyrego.formatter.writer import future_keyword
from pyrego.formatter.writer_base import FmtOpts, walk_terms

__all__ = ["Version", "prepare"]


@dataclass(frozen=True)
class Version:
    """The Rego version of the output: ``v1``, ``v0``, or ``v0v1`` (v0 input
    written so that it is valid v0 and v1, as ``opa fmt --v0-v1``)."""

    name: str

    @property
    def v1_output(self) -> bool:
        return self.name in ("v1", "v0v1")


#: keywords that need an import in v1 too (OPA 1.20's opt-in logical keywords)
V1_FUTURE_KEYWORDS = ("and", "not", "or")


def prepare(module: Module, version: Version, logical_keywords: set[str] | None = None) -> FmtOpts:
    """Settle the output options and fix up the module's imports for ``version``
    (``logical_keywords``: the and/or/not keywords the module's code uses)."""
    opts = FmtOpts()
    if version.v1_output:
        opts.rego_v1 = opts.ifs = opts.contains = True
    for imp in module.imports:
        kw = future_keyword(imp)
        if kw is not None:
            opts.future_keywords.append(kw)
        if is_rego_v1(imp) or is_all_future_keywords(imp):
            opts.contains = opts.ifs = True
        elif kw == "contains":
            opts.contains = True
        elif kw == "if":
            opts.ifs = True
    opts.ref_heads = any(_needs_ref_heads(r) for r in module.rules)

    extra = _keywords_used(module) | (logical_keywords or set())
    imports = module.imports
    if version.name == "v0v1" and not any(is_rego_v1(i) for i in imports):
        imports = imports + [_new_import(imports, ["rego", "v1"])]
    rego_v1_imported = any(is_rego_v1(i) for i in imports)
    if version.v1_output or rego_v1_imported:
        if rego_v1_imported:  # rego.v1 makes future.keywords imports redundant
            # (OPA drops them all and adds back those of and/or/not; keeping
            # those in place instead keeps the output stable)
            needed = extra & set(V1_FUTURE_KEYWORDS)
            imports = [i for i in imports if not is_future_import(i) or future_keyword(i) in needed]
        # (`in` and `every` need no import in v1; the logical keywords do)
        for kw in sorted(extra & set(V1_FUTURE_KEYWORDS)):
            if not _has_keyword_import(imports, kw):
                imports = imports + [_new_import(imports, ["future", "keywords", kw])]
    else:
        for kw in sorted(extra):
            if not _has_keyword_import(imports, kw):
                imports = imports + [_new_import(imports, ["future", "keywords", kw])]
    module.imports = imports
    return opts


def is_rego_v1(imp: Import) -> bool:
    items = imp.path.items
    return len(items) == 2 and _names(items) == ["rego", "v1"]


def is_all_future_keywords(imp: Import) -> bool:
    return _names(imp.path.items) == ["future", "keywords"]


def is_future_import(imp: Import) -> bool:
    items = imp.path.items
    return len(items) >= 2 and items[0].kind == "var" and items[0].value == "future"


def _names(items: list[Term]) -> list[str]:
    return [t.value for t in items]


def _has_keyword_import(imports: list[Import], kw: str) -> bool:
    for imp in imports:
        have = future_keyword(imp)
        if is_all_future_keywords(imp) or have == kw or (have == "every" and kw == "in"):
            return True
    return False


def _new_import(imports: list[Import], names: list[str]) -> Import:
    """An import placed after the last future/rego import (or at the top)."""
    rows = [i.loc.row for i in imports if is_future_import(i) or is_rego_v1(i)]
    loc = Loc(max(rows) + 1 if rows else 1, 1, ".".join(names), -1, GENERATED_FILE)
    items = [Term("var", loc, value=names[0])] + [Term("string", loc, value=n) for n in names[1:]]
    return Import(loc, Term("ref", loc, items=items))


def _needs_ref_heads(rule: Rule) -> bool:
    n = len(rule.head.ref)
    return n > 2 or (n == 2 and rule.head.key is not None and rule.head.value is None)


def _keywords_used(module: Module) -> set[str]:
    """The future keywords the output's expressions use (`in`, `every`)."""
    used: set[str] = set()

    def visit_body(body: list[Expr]) -> None:
        for expr in body:
            terms = expr.terms
            if isinstance(terms, list) and terms[0].name in ("internal.member_2", "internal.member_3"):
                used.add("in")
            elif isinstance(terms, Every):
                used.add("every")
                visit_body(terms.body)
            for t in walk_terms(expr):
                if t.body:
                    visit_body(t.body)

    for rule in module.rules:
        r: Rule | None = rule
        while r is not None:
            visit_body(r.body)
            for t in walk_terms([*r.head.ref, *(r.head.args or [])]):
                if t.body:
                    visit_body(t.body)
            for x in (r.head.key, r.head.value):
                for t in walk_terms(x):
                    if t.body:
                        visit_body(t.body)
            r = r.else_
    return used
