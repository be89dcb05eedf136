"""Partial evaluation: evaluate what is known, keep what is not as Rego.

``partial_eval(engine, "data.filters.include", unknowns=["input.tickets"],
input={...})`` evaluates the query with everything under ``input.tickets``
unknown: known input, data, builtins and rules are folded; rules and
functions that read the unknowns are inlined; what is left is a list of
*residual queries* (the query holds when any of them does) and *support
rules* they may refer to. This is OPA's partial evaluation (``rego.Partial``,
``opa eval --partial --unknowns``), down to the shapes of its results, so the
filters built on it (:mod:`pyrego.filters`) match OPA's Compile API.

Modules: :mod:`.evaluator` (bodies, unification, saving), :mod:`.refs`,
:mod:`.rules` (inlining, support rules), :mod:`.calls` (terms, builtins,
closures), :mod:`.copyprop` (cleaning up results), :mod:`.rule_order`
(OPA's rule order), :mod:`.unknowns`, :mod:`.known` (known parts evaluated
by the engine's compiled code), :mod:`.output` (AST and Rego text),
:mod:`.annotations` (unknowns declared in ``# METADATA``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.compile.pipeline import resolve_query
from pyrego.parse.parser import parse_query
from pyrego.partial.base import PartialEvalError
from pyrego.partial.bindings import Scope
from pyrego.partial.copyprop import copy_propagate
from pyrego.partial.evaluator import Evaluator
from pyrego.partial.known import KnownDocuments
from pyrego.partial.output import body_text, finalize, module_text
from pyrego.partial.support import SupportRule
from pyrego.partial.unknowns import UnknownsError, parse_unknowns
from pyrego.runtime.values import UNDEF

if TYPE_CHECKING:
    from pyrego.engine_support import ProgramSource

__all__ = ["PartialResult", "PartialEvalError", "UnknownsError", "partial_eval", "SupportModule"]


@dataclass
class SupportModule:
    """A support module: its package path (``("partial", "filters")``) and rules."""

    package: tuple[str, ...]
    rules: list[ast.Rule]

    @property
    def text(self) -> str:
        """The module as Rego source."""
        return module_text(self.package, self.rules)


@dataclass
class PartialResult:
    """The result of partial evaluation.

    ``queries``: the residual queries, each an ``ast.Body`` (the original
    query holds when any of them holds; no queries: it never holds; an
    empty body: it always holds). ``support``: the support modules they
    refer to (under ``data.partial``).
    """

    queries: list[ast.Body] = field(default_factory=list)
    support: list[SupportModule] = field(default_factory=list)

    @property
    def query_texts(self) -> list[str]:
        """Each residual query as Rego (expressions joined with ``; ``)."""
        return [body_text(q) for q in self.queries]

    @property
    def support_texts(self) -> list[str]:
        return [m.text for m in self.support]


def partial_eval(
    engine: ProgramSource,
    query: str | ast.Body,
    *,
    unknowns: Any = ("input",),
    input: Any = UNDEF,
    eval_nondeterministic: bool = False,
    namespace: str = "partial",
) -> PartialResult:
    """Partially evaluate ``query`` with ``unknowns`` unknown (see the module docstring).

    ``input``: the known part of the input (UNDEF: none). Nondeterministic
    builtins (``http.send``, ``time.now_ns``...) are kept in the result
    unless ``eval_nondeterministic`` (OPA's Compile API evaluates them)."""
    compiled = engine.program()
    tree = compiled.tree
    body = parse_query(query, "", rego_v1=not compiled.rego_v0) if isinstance(query, str) else query
    resolved, names = resolve_query(body, tree)
    if unknowns is None:
        from pyrego.partial.annotations import declared_unknowns, query_path

        qpath = query_path(query)
        declared = declared_unknowns(tree, qpath) if qpath is not None else None
        unknowns = declared if declared is not None else ["input"]
    paths = parse_unknowns(unknowns)
    known = KnownDocuments(compiled, input)
    ev = Evaluator(
        tree,
        known,
        paths,
        input=input,
        strict=known.ctx.cfg.strict,
        eval_nondeterministic=eval_nondeterministic,
        namespace=namespace,
    )
    scope = Scope()
    ordered = ev.ordered(resolved, scope, set())
    user_vars = {scope.var(unique): name for unique, name in names.items() if not name.startswith("$")}
    live = set(user_vars) | {p[0] for p in paths}
    queries: list[ast.Body] = []
    for _ in ev.body(ordered, scope):
        exprs = list(ev.frames[0])
        bindings = []
        for g in sorted(user_vars, key=lambda g: user_vars[g]):
            value = ev.env.plug(ast.Var(g))
            if not (type(value) is ast.Var and value.name == g):
                bindings.append(ast.Expr(ast.Unify(ast.Var(g), value)))
        result = copy_propagate(exprs + bindings, live, arity=tree.arity)
        queries.append(finalize(result, user_vars))
    support = [SupportModule(pkg, [_support_rule(r) for r in rules]) for pkg, rules in ev.support.modules()]
    return PartialResult(queries, support)


def _support_rule(r: SupportRule) -> ast.Rule:
    from pyrego.partial.output import Renamer, finalize_expr, rename_term

    rn = Renamer({})
    name = r.path[-1]
    head_ref = ast.Ref(ast.Var(name), ())
    if r.args is not None:
        head = ast.RuleHead(head_ref, rename_term(r.value, rn), None, tuple(rename_term(a, rn) for a in r.args), False)
    elif r.key is not None and r.value is None:
        head = ast.RuleHead(head_ref, None, rename_term(r.key, rn))
    elif r.key is not None:
        head = ast.RuleHead(ast.Ref(ast.Var(name), (rename_term(r.key, rn),)), rename_term(r.value, rn))
    else:
        head = ast.RuleHead(head_ref, rename_term(r.value, rn) if r.value is not None else None)
    body = tuple(finalize_expr(e, rn) for e in r.body)
    return ast.Rule(head, body, r.default)

