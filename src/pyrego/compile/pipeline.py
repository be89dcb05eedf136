"""The compile pipeline: from parsed modules to a program, one stage after another.

Each stage is a function of the :class:`CompileState` that hands its product
on in the state (the next stages read it, none goes back); each has a name
and a metric name (timed under ``timer_<metric>_ns`` when the state carries a
``metrics`` dict). A stage that finds errors reports them to the state; the
pipeline stops after that stage and raises them from one place
(:func:`run`), the first error with all of them in its ``errors``, as OPA's
compiler reports a failed stage. The stages, in order (OPA's, as far as
pyrego has them):

1. ``early_checks`` (``compile_stage_early_checks``): OPA's stages before
   name resolution, over each module (:func:`pyrego.compile.checks.early_errors`:
   arguments shadowing ``input``/``data``, keyword overrides, duplicate
   imports, local variable declarations); skipped for modules that passed
   them when they were added (outside strict mode);
2. ``resolve_refs`` (``compile_stage_resolve_refs``): the modules merged into
   one rule tree, every name resolved (:func:`pyrego.compile.compiler.build_tree`);
3. ``check_rule_conflicts`` (``compile_stage_check_rule_conflicts``): print
   calls used as values and their undeclared operands (OPA's CheckVoidCalls
   and RewritePrintCalls, where print is called), then OPA's rule conflicts:
   rules inside a document they may not be in, rules of two kinds or shapes
   or two defaults for one document, packages inside a rule
   (:mod:`pyrego.compile.rule_conflicts`);
4. ``check_undefined_funcs`` (``compile_stage_check_undefined_funcs``): unknown
   functions and arities (:func:`pyrego.compile.compiler.call_errors`), then
   calls of functions a local variable hides;
5. ``check_safety_rule_heads`` (``compile_stage_check_safety_rule_heads``);
6. ``check_recursion`` (``compile_stage_check_recursion``): the dependency
   graph of the rules (:mod:`pyrego.compile.graph`) and its cycles;
7. ``check_types`` (``compile_stage_check_types``): OPA's type checker, when
   on (:func:`pyrego.typecheck.check_program`);
8. ``generate_code`` (``compile_stage_generate_code``): the program
   (:func:`pyrego.codegen.generator.generate_program`), which orders each
   body and reports OPA's body safety errors;
9. ``check_deprecated_builtins`` (``compile_stage_check_deprecated_builtins``):
   OPA's last stage, in Rego v1 modules (every module in strict mode).

:func:`compile_modules` runs stages 1-7 (the checked rule tree);
:func:`compile_program` runs them all (what ``Engine`` compiles).

A query has stages of its own (:data:`QUERY_STAGES`, over a
:class:`QueryState`, run by :func:`resolve_query` through the same
:func:`run`; metrics ``timer_query_compile_stage_<name>_ns``):

1. ``check_keyword_overrides``: strict mode, ``input``/``data`` assigned;
2. ``check_declarations``: declarations as in rule bodies (OPA finds them
   when it rewrites local variables; pyrego before resolving names);
3. ``resolve_refs``: names resolved, local variables made unique;
4. ``check_undefined_funcs``: unknown functions and arities, then calls of
   functions a local variable hides;
5. ``check_deprecated_builtins``: strict mode (OPA's last stage; here
   before the code is generated, as pyrego has always reported it).

The engine then generates the query's code in its program (OPA's
``check_safety``: body safety errors come from the code generator) and
type-checks it; those depend on the program the query runs in (a ``with``
target may need a new one), so they are the engine's steps
(``pyrego.queries``), not stages here.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, TypeVar

from pyrego.ast import nodes as ast
from pyrego.builtins.registry import Builtin
from pyrego.builtins.table import NONDETERMINISTIC
from pyrego.codegen.generator import generate_program
from pyrego.codegen.program import Program
from pyrego.compile.base import CompiledTree, Uses, package_path
from pyrego.compile.checks import (
    DEPRECATED_BUILTINS,
    check_query,
    check_query_deprecated,
    check_query_keywords,
    deprecated_errors,
    early_errors,
    first_with_all,
)
from pyrego.compile.compiler import (
    build_tree,
    call_errors,
    drop_unreached_defaults,
    query_call_errors,
    resolve_query_names,
)
from pyrego.compile.graph import dependency_graph, first_cycle
from pyrego.compile.rule_checks import head_safety_errors, recursion_errors
from pyrego.compile.rule_conflicts import may_conflict, rule_conflict_errors
from pyrego.compile.with_checks import check_query_with_targets, check_with_targets
from pyrego.compile.with_targets import with_function_targets
from pyrego.errors import RegoError, RegoTypeError, RegoUnsafeVarError

if TYPE_CHECKING:
    from pyrego.typecheck.schemas import SchemaSet

__all__ = [
    "MODULE_STAGES",
    "QUERY_STAGES",
    "STAGES",
    "CompileState",
    "QueryState",
    "Stage",
    "compile_modules",
    "compile_program",
    "resolve_query",
    "run",
]


@dataclass(slots=True)
class CompileState:
    """What the stages read and hand on: the inputs and options first, then
    each stage's product (None until the stage has run)."""

    modules: list[ast.Module]
    extensions: dict[str, Builtin] | None = None
    allowed_builtins: frozenset[str] | None = None
    type_check: bool = False
    strict: bool = False
    schemas: SchemaSet | None = None
    # The hidden calls the early checks found when the modules were added (None: not checked).
    checked_hidden_calls: list[RegoError] | None = None
    # The policies' texts (``with`` targets are looked for only in texts with the word).
    texts: Sequence[str] = ()
    # Functions code generation makes replaceable, besides the ``with`` targets.
    mockable: frozenset[str] = frozenset()
    # Stage timings (``timer_<metric>_ns``), when wanted.
    metrics: dict[str, int] | None = None
    # Whether the code is for evaluations with strict builtin errors (see generate_program).
    strict_errors: bool = False

    # -- products
    hidden_calls: list[RegoError] = field(default_factory=list)  # early_checks
    packages: list[tuple[str, ...]] = field(default_factory=list)  # resolve_refs
    tree: CompiledTree = None  # type: ignore[assignment]  # resolve_refs
    uses: dict[int, Uses] = field(default_factory=dict)  # resolve_refs
    conflict: RegoTypeError | None = None  # resolve_refs: the first conflict met
    graph: dict[int, set[int]] = field(default_factory=dict)  # check_recursion
    program: Program | None = None  # generate_code
    # The error the failed stage reports (the first, with all in ``errors``).
    failure: RegoError | None = None

    def report(self, errors: list[RegoError], *, sort: bool = False, limit: int = 10) -> None:
        """The stage's errors (if any): ordered by location when ``sort``, cut
        at ``limit`` with OPA's ``error limit reached`` (0: no limit)."""
        if errors:
            self.failure = first_with_all(errors, sort=sort, limit=limit)


@dataclass(slots=True)
class QueryState:
    """What the query stages read and hand on: the parsed query, the rule
    tree it is compiled against and the module it is read in (its package
    and imports; None: none), then each stage's product."""

    body: ast.Body
    tree: CompiledTree
    context: ast.Module | None = None
    # Stage timings (``timer_<metric>_ns``), when wanted.
    metrics: dict[str, int] | None = None

    # -- products
    hidden_calls: list[RegoError] = field(default_factory=list)  # check_declarations
    resolved: ast.Body = ()  # resolve_refs
    names: dict[str, str] = field(default_factory=dict)  # resolve_refs: {unique var name: user name}
    calls: list[ast.Call] = field(default_factory=list)  # resolve_refs
    # The error the failed stage reports (the first, with all in ``errors``).
    failure: RegoError | None = None

    def report(self, errors: list[RegoError], *, limit: int = 10) -> None:
        """The stage's errors (if any), cut at ``limit`` as :meth:`CompileState.report` does."""
        if errors:
            self.failure = first_with_all(errors, limit=limit)


class Stage(NamedTuple):
    name: str
    metric: str
    run: Callable[[Any], None]  # of a CompileState (a QueryState for QUERY_STAGES)


def _early_checks(state: CompileState) -> None:
    if state.checked_hidden_calls is None or state.strict:
        errors, state.hidden_calls = early_errors(state.modules, strict=state.strict)
        if errors:
            state.report(errors, limit=0)  # (cut at OPA's limit already)
    else:
        state.hidden_calls = state.checked_hidden_calls


def _resolve_refs(state: CompileState) -> None:
    state.packages = packages = [package_path(module) for module in state.modules]
    state.tree, state.uses, state.conflict = build_tree(state.modules, packages, state.extensions, state.allowed_builtins, state.strict)
    state.tree.printing_nodes = frozenset(i for i, u in state.uses.items() if any(c.op in ("print", "internal.print") for c in u.calls))


def _check_rule_conflicts(state: CompileState) -> None:
    if any(m.templates for m in state.modules):
        # (OPA's RewriteTemplateStrings comes before its CheckVoidCalls)
        from pyrego.compile.template_vars import template_part_errors

        errors = template_part_errors(state.tree)
        if errors:
            state.report(errors)
            return
    if state.tree.printing_nodes:
        # (OPA's CheckVoidCalls and RewritePrintCalls come before its rule conflicts)
        from pyrego.compile.print_calls import print_operand_errors  # (only where print is called)
        from pyrego.compile.void_calls import void_call_errors

        errors = void_call_errors(state.modules, state.tree) or print_operand_errors(state.tree)
        if errors:
            state.report(errors)
            return
    if state.conflict is not None or may_conflict(state.tree):  # (OPA reports them all)
        errors = rule_conflict_errors(state.modules, state.packages)
        if state.conflict is not None and not errors:
            errors = [state.conflict]
        if errors:
            if any(m.withs for m in state.modules):
                check_with_targets(state.tree)  # (OPA's RewriteWithValues, a stage before, refuses a target first)
            state.report(errors)


def _check_undefined_funcs(state: CompileState) -> None:
    errors, called = call_errors(state.tree, state.uses.values())
    state.tree.calls_deprecated = not DEPRECATED_BUILTINS.isdisjoint(called)
    state.tree.calls_print = "print" in called or "internal.print" in called
    tree = state.tree
    if tree.extensions or tree.allowed_builtins is not None:
        tree.impure = tree.calls_print or any(getattr(tree.builtin(name), "nondeterministic", False) for name in called)
    else:  # (every builtin is the registry's: nondeterministic is its table's fact)
        tree.impure = tree.calls_print or not NONDETERMINISTIC.isdisjoint(called)
    if (errors or state.hidden_calls) and any(m.withs for m in state.modules):
        check_with_targets(state.tree)  # (OPA's RewriteWithValues, a stage before, refuses a target first)
    if errors:
        state.report(errors)
    elif state.hidden_calls:
        state.report(state.hidden_calls, limit=0)


def _check_safety_rule_heads(state: CompileState) -> None:
    errors = head_safety_errors(state.modules, state.packages, state.tree.var_free_rules)
    if errors:
        state.report(errors, sort=True)


def _check_recursion(state: CompileState) -> None:
    state.graph = dependency_graph(state.tree, state.uses)
    first = first_cycle(state.tree, state.graph)
    if first is not None:  # OPA reports every rule on a cycle
        if any(m.withs for m in state.modules):
            check_with_targets(state.tree)  # (a stage before, in OPA)
        # OPA checks the safety of bodies a stage before; pyrego when it
        # generates code: an unsafe variable is the error OPA reports.
        unsafe = _unsafe_var_error(state)
        if unsafe is not None:
            raise unsafe
        state.report(recursion_errors(state.tree, state.uses) or [first], sort=True)


def _check_types(state: CompileState) -> None:
    if state.type_check:
        try:
            state.tree.types = _typecheck().check_program(state.tree, state.graph, state.modules, state.schemas)
        except RegoTypeError as err:
            # OPA checks `with` targets and the safety of bodies before types;
            # pyrego when it generates code. A refused target or an unsafe
            # variable (which may be all that made the types fail: `{x | y :=
            # 1}`) is the error OPA reports.
            if any(m.withs for m in state.modules):
                check_with_targets(state.tree)
            raise _unsafe_var_error(state) or err from None
    # (last: the checks above see these defaults, as OPA's do)
    drop_unreached_defaults(state.tree)


def _unsafe_var_error(state: CompileState) -> RegoUnsafeVarError | None:
    """The unsafe variable the code generator finds in the (ill-typed) program, if any."""
    try:
        generate_program(state.tree, frozenset(state.mockable | with_function_targets(state.tree)), state.strict_errors)
    except RegoUnsafeVarError as unsafe:
        return unsafe
    except (RegoError, RecursionError):
        return None
    return None


@functools.cache
def _typecheck() -> Any:
    """:mod:`pyrego.typecheck`, imported when first used; its function is read
    at each use, so that a replaced one is the one called."""
    from pyrego import typecheck

    return typecheck


# `with f as g` can only appear in text that has the word "with" (as \bwith\b,
# written so that the search looks for the literal "with" first: \b in front
# made it try every position, ~20 us on a policy that says "startswith").
_WITH_WORD = re.compile(r"with\b(?<!\wwith)")


def _generate_code(state: CompileState) -> None:
    any_with = any("with" in text and _WITH_WORD.search(text) is not None for text in state.texts)
    if any_with and not any(m.withs for m in state.modules):
        any_with = False  # (the word is only in comments or strings)
    targets = with_function_targets(state.tree) if any_with else frozenset()
    state.program = generate_program(state.tree, frozenset(state.mockable | targets), state.strict_errors)


def _check_deprecated_builtins(state: CompileState) -> None:
    if state.tree.calls_deprecated:
        state.report(deprecated_errors(state.modules, strict=state.strict), limit=0)


#: The stages that check modules into a rule tree (:func:`compile_modules`).
MODULE_STAGES: tuple[Stage, ...] = (
    Stage("early_checks", "compile_stage_early_checks", _early_checks),
    Stage("resolve_refs", "compile_stage_resolve_refs", _resolve_refs),
    Stage("check_rule_conflicts", "compile_stage_check_rule_conflicts", _check_rule_conflicts),
    Stage("check_undefined_funcs", "compile_stage_check_undefined_funcs", _check_undefined_funcs),
    Stage("check_safety_rule_heads", "compile_stage_check_safety_rule_heads", _check_safety_rule_heads),
    Stage("check_recursion", "compile_stage_check_recursion", _check_recursion),
    Stage("check_types", "compile_stage_check_types", _check_types),
)

#: Every stage, to the program (:func:`compile_program`).
STAGES: tuple[Stage, ...] = MODULE_STAGES + (
    Stage("generate_code", "compile_stage_generate_code", _generate_code),
    Stage("check_deprecated_builtins", "compile_stage_check_deprecated_builtins", _check_deprecated_builtins),
)


def _query_keywords(state: QueryState) -> None:
    check_query_keywords(state.body, strict=state.tree.strict)


def _query_declarations(state: QueryState) -> None:
    state.hidden_calls = check_query(state.body, strict=state.tree.strict)


def _query_resolve_refs(state: QueryState) -> None:
    state.resolved, state.names, state.calls = resolve_query_names(state.body, state.tree, state.context)


def _query_check_undefined_funcs(state: QueryState) -> None:
    errors, found = query_call_errors(state.tree, state.calls, state.resolved)
    if not errors and found is None:
        from pyrego.compile.template_vars import holds_template, query_template_part_errors

        if holds_template(state.resolved):
            errors = query_template_part_errors(state.resolved, state.tree.arity)
    if not errors and found is None and any(call.op == "print" for call in state.calls):
        from pyrego.compile.print_calls import query_print_operand_errors

        errors = query_print_operand_errors(state.resolved, state.tree.arity)
    if errors or found is not None or state.hidden_calls:
        check_query_with_targets(state.tree, state.resolved)  # (a stage before, in OPA)
    if errors:
        state.report(errors)
    elif found is not None:
        raise found
    elif state.hidden_calls:
        state.report(state.hidden_calls, limit=0)


def _query_check_deprecated_builtins(state: QueryState) -> None:
    check_query_deprecated(state.body, strict=state.tree.strict)


#: The query compiler's stages (:func:`resolve_query`).
QUERY_STAGES: tuple[Stage, ...] = (
    Stage("check_keyword_overrides", "query_compile_stage_check_keyword_overrides", _query_keywords),
    Stage("check_declarations", "query_compile_stage_check_declarations", _query_declarations),
    Stage("resolve_refs", "query_compile_stage_resolve_refs", _query_resolve_refs),
    Stage("check_undefined_funcs", "query_compile_stage_check_undefined_funcs", _query_check_undefined_funcs),
    Stage("check_deprecated_builtins", "query_compile_stage_check_deprecated_builtins", _query_check_deprecated_builtins),
)

_State = TypeVar("_State", CompileState, QueryState)


def run(state: _State, stages: Iterable[Stage] = STAGES) -> _State:
    """Run ``stages`` in order over ``state``; raise the errors of the first
    that fails (the one place compile errors leave the pipeline)."""
    metrics = state.metrics
    try:
        for stage in stages:
            if metrics is None:
                stage.run(state)
            else:
                start = time.perf_counter_ns()
                stage.run(state)
                metrics["timer_" + stage.metric + "_ns"] = time.perf_counter_ns() - start
            if state.failure is not None:
                break
    except RegoError as err:  # a stage that reports by raising (name resolution, type checking, code generation)
        state.failure = err
    if state.failure is not None:
        raise state.failure
    return state


def compile_modules(
    modules: list[ast.Module],
    extensions: dict[str, Builtin] | None = None,
    allowed_builtins: frozenset[str] | None = None,
    type_check: bool = False,
    strict: bool = False,
    schemas: SchemaSet | None = None,
    checked_hidden_calls: list[RegoError] | None = None,
) -> CompiledTree:
    """Merge, resolve and check ``modules`` (:data:`MODULE_STAGES`), calling
    only ``allowed_builtins``, when given; with ``type_check``, OPA's type
    checker runs last (:mod:`pyrego.typecheck`); ``strict``: OPA's strict
    mode (:mod:`pyrego.compile.checks`); ``schemas``: the JSON schemas the type
    checker reads (:mod:`pyrego.typecheck.schemas`).

    ``checked_hidden_calls``: the modules have each passed OPA's early stages
    (:func:`pyrego.compile.checks.check_modules`, outside strict mode) when they
    were added, which found these hidden calls, in file order: the stages are
    not run again."""
    state = CompileState(modules, extensions, allowed_builtins, type_check, strict, schemas, checked_hidden_calls)
    return run(state, MODULE_STAGES).tree


def compile_program(
    modules: list[ast.Module],
    texts: Sequence[str],
    mockable: frozenset[str] = frozenset(),
    extensions: dict[str, Builtin] | None = None,
    allowed_builtins: frozenset[str] | None = None,
    type_check: bool = False,
    strict: bool = False,
    schemas: SchemaSet | None = None,
    checked_hidden_calls: list[RegoError] | None = None,
    metrics: dict[str, int] | None = None,
    strict_errors: bool = False,
) -> Program:
    """:func:`compile_modules`, then the program's code (every stage of
    :data:`STAGES`); ``texts``: the modules' texts; ``mockable``: functions
    that ``with`` may replace besides those the rules name; ``strict_errors``:
    the code is also for evaluations with strict builtin errors."""
    state = CompileState(
        modules, extensions, allowed_builtins, type_check, strict, schemas, checked_hidden_calls, texts, mockable, metrics, strict_errors
    )
    program = run(state, STAGES).program
    assert program is not None
    return program


def resolve_query(
    body: ast.Body, tree: CompiledTree, context: ast.Module | None = None, metrics: dict[str, int] | None = None
) -> tuple[ast.Body, dict[str, str]]:
    """Check and resolve a query against ``tree`` (:data:`QUERY_STAGES`):
    returns the resolved body and {unique var name: user name}; raises the
    errors of the first stage that fails.

    ``context``: a module without rules whose package and imports the query
    is resolved in (``opa eval --package p --import data.q``): the rules of
    that package are visible by name, as from one of its modules."""
    state = run(QueryState(body, tree, context, metrics), QUERY_STAGES)
    return state.resolved, state.names
