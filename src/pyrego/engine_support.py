"""Helpers of :mod:`pyrego.engine`: rule paths, data merging and conflicts,
extension calls, query texts and the functions ``with`` replaces; and
:class:`CompiledProgram`, all that pyrego's own capabilities (coverage and
traces, partial evaluation, filters, ``pyrego test``, the CLI) take from an
engine."""

from __future__ import annotations

import time
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

from pyrego.ast import nodes as ast
from pyrego.codegen.program import Program
from pyrego.compile.base import CompiledTree
from pyrego.errors import (
    ArgumentError,
    DataError,
    EvalBuiltinError,
    EvalConflictError,
    EvalRecursionError,
    EvalTypeError,
    Location,
    RegoCompileError,
    RegoError,
    RegoParseError,
)
from pyrego.parse.parser import parse_module, parse_term
from pyrego.runtime.context import EvalContext
from pyrego.runtime.convert import from_python, to_python, valid_text
from pyrego.runtime.values import UNDEF

if TYPE_CHECKING:
    from pyrego.engine import Engine

def runs_again_in_opa_order(exc: BaseException, program: Program | None) -> bool:
    """Whether an evaluation that raised ``exc`` runs again with every object
    and set iterated in OPA's order (runtime.helpers.opa_iteration_order), to
    raise the error OPA meets first, or OPA's value where an early exit comes
    before any error in that order. Not while already so, nor where the
    ``program`` prints (its lines would be printed twice)."""
    from pyrego.runtime.helpers import OPA_ORDER

    if OPA_ORDER[0] or program is None or program.tree.printing_nodes:
        return False
    return isinstance(exc, (EvalTypeError, EvalBuiltinError, EvalConflictError))


def _again_in_opa_order(engine: Engine, path: str, input: Any) -> Any:
    """``engine.eval_rule(path, input=input)`` iterating in OPA's order (see runs_again_in_opa_order)."""
    from pyrego.runtime.helpers import opa_iteration_order

    with opa_iteration_order():
        return engine.eval_rule(path, input=input)


#: ``input`` not given to an evaluation call: the engine's own input is used.
NO_INPUT: Any = object()

#: A rule prepared for evaluation (:meth:`pyrego.engine.Engine.prepare_rule`):
#: ``rule(input)`` is its value for that input, or ``pyrego.UNDEFINED``.
PreparedRule = Callable[[Any], Any]

#: A policy file as an engine holds it: its text and parsed module.
PolicySource = tuple[str, ast.Module]


class CompiledProgram:
    """An engine's compiled program, and the few things that use it, as
    :meth:`pyrego.engine.Engine.program` hands them to pyrego's own
    capabilities. They take this, never the engine's attributes.

    - ``code``: the generated program (its namespace, rule functions,
      mockable functions and the compiled rule ``tree``).
    - ``policies``: ``{path: (text, module)}`` it was compiled from.
    - ``version``: changes whenever the policies or settings change (a
      capability's cache of anything built from the program keys on it).
    - ``rego_v0`` and ``builtins_key`` (extensions and allowed builtins, for
      the key of a program built from the same policies).
    - ``state``: a dict the engine keeps for its capabilities (not copied by
      ``clone``).
    - ``context(input=NO_INPUT)``: a fresh evaluation context with the
      engine's input, data and evaluation settings (strict errors, print
      hook, options, deadline).
    - ``compile_query(query, package, imports)`` and
      ``compile_body(body, texts, check_types=True)``: a compiled query
      (``.fn``, ``.texts``, ``.locations``), as the engine compiles its own;
      compiling one may add mockable functions, and so give the engine a new
      program (take :meth:`~pyrego.engine.Engine.program` again after).
    - ``execute(query, input=NO_INPUT)``: its solutions, with the engine's
      error handling.
    - ``attach_source(err)`` and ``with_source(fn)``: give an error the
      source line of its location in the policies.
    """

    __slots__ = (
        "code",
        "policies",
        "version",
        "rego_v0",
        "builtins_key",
        "state",
        "context",
        "compile_query",
        "compile_body",
        "execute",
        "attach_source",
        "with_source",
    )

    def __init__(
        self,
        code: Program,
        policies: Mapping[str, PolicySource],
        version: int,
        rego_v0: bool,
        builtins_key: tuple[Any, ...],
        state: dict[str, Any],
        context: Callable[..., EvalContext],
        compile_query: Callable[..., Any],
        compile_body: Callable[..., Any],
        execute: Callable[..., list[tuple[dict[str, Any], tuple[Any, ...]]]],
        attach_source: Callable[[RegoError], None],
        with_source: Callable[[Callable[[], Any]], Any],
    ) -> None:
        self.code = code
        self.policies = policies
        self.version = version
        self.rego_v0 = rego_v0
        self.builtins_key = builtins_key
        self.state = state
        self.context = context
        self.compile_query = compile_query
        self.compile_body = compile_body
        self.execute = execute
        self.attach_source = attach_source
        self.with_source = with_source

    @property
    def tree(self) -> CompiledTree:
        """The compiled (resolved, checked) rule tree."""
        return self.code.tree

    @property
    def texts(self) -> dict[str, str]:
        """The policies' texts by path."""
        return {path: text for path, (text, _) in self.policies.items()}


class ProgramSource(Protocol):
    """What capabilities take an engine as: something that gives its :class:`CompiledProgram`."""

    def program(self) -> CompiledProgram: ...


def query_context(package: str | None, imports: tuple[str, ...], rego_v0: bool) -> ast.Module | None:
    """The package and imports a query is resolved in, parsed as a module header
    (so they are checked as ``package``/``import`` lines are)."""
    if package is None and not imports:
        return None
    header = f"package {package or '__query__'}\n" + "".join(f"import {i}\n" for i in imports)
    if "\n" in (package or "") or any("\n" in i for i in imports):
        raise ArgumentError("a query package or import must be one line")
    module = parse_module(header, "query", rego_v1=not rego_v0)
    if package is None:
        module = ast.Module(ast.Ref(ast.Var("data"), ()), module.imports, (), file="query")
    return module


def check_extension_decl(decl: Any, arity: int) -> str:
    """An extension's declared type as canonical JSON; ArgumentError unless it
    is a function type of ``arity`` arguments with a result."""
    import json

    from pyrego.typecheck.static_types import FunctionType, from_decl

    try:
        text = json.dumps(decl, sort_keys=True)
        tpe = from_decl(json.loads(text))
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as exc:
        raise ArgumentError(f"invalid extension decl: {exc}") from None
    if not isinstance(tpe, FunctionType) or tpe.variadic is not None:
        raise ArgumentError('invalid extension decl: not {"type": "function", ...}')
    if len(tpe.args) != arity or tpe.result is None:
        result = "a result" if tpe.result is not None else "no result"
        raise ArgumentError(f"invalid extension decl: {len(tpe.args)} arguments and {result}, for arity {arity}")
    return text


def extension_call(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a user's Python function as a builtin over Rego values."""
    from pyrego.builtins.registry import BuiltinError

    def call(*args: Any) -> Any:
        try:
            result = fn(*[to_python(a) for a in args])
        except Exception as exc:  # the user's code: any failure is a builtin error
            raise BuiltinError(f"{type(exc).__name__}: {exc}") from exc
        if result is UNDEF:
            return UNDEF
        try:
            return from_python(result)
        except DataError as exc:
            raise BuiltinError(f"result is not a Rego value: {exc.message}") from None

    return call


def _package_name(module: ast.Module) -> str:
    return ast.ref_to_string(module.package)


def _first_non_constant(t: ast.Term) -> ast.Term | None:
    """The first part of ``t`` that is not a constant (a ref, call, variable, comprehension...)."""
    if type(t) is ast.Scalar:
        return None
    if type(t) is ast.Array or type(t) is ast.SetTerm:
        items: list[ast.Term] = list(t.items)
    elif type(t) is ast.Object:
        items = [x for pair in t.items for x in pair]
    else:
        return t
    for item in items:
        bad = _first_non_constant(item)
        if bad is not None:
            return bad
    return None


def rule_path(path: Any) -> tuple[str | int, ...]:
    """The keys of a rule path under ``data`` (``data.a.b``, ``a["b-c"]``, ``data.xs[0]``).

    Only a ref of string and integer keys is a path: anything else (a query,
    ``with``, a call, a variable key) is refused, so ``eval_rule`` evaluates
    nothing but a document. Without ``data.`` in front, the path starts
    under ``data``."""
    if type(path) is not str:
        raise ArgumentError(f"rule path must be a string, not {type(path).__name__}")
    return _rule_path_of_text(path)


# A fresh engine resolves its rule paths again; parsing one cost about as much
# as evaluating a small policy. Only results are kept (lru_cache does not keep
# exceptions), and a path's keys depend on nothing but its text.
@lru_cache(maxsize=1024)
def _rule_path_of_text(path: str) -> tuple[str | int, ...]:
    try:
        term = parse_term(path, "path")
    except RegoParseError as err:
        raise ArgumentError(f"invalid rule path {path!r}: {err.message}", err.location) from None
    keys: tuple[ast.Term, ...] = ()
    if type(term) is ast.Var:
        head = term
    elif type(term) is ast.Ref and type(term.head) is ast.Var:
        head, keys = term.head, term.path
    else:
        raise ArgumentError(f"invalid rule path {path!r}: not a reference", getattr(term, "location", None))
    parts: list[str | int] = [] if head.name == "data" else [head.name]
    if head.name in ("input", "future", "rego") or head.name.startswith("$"):
        raise ArgumentError(f"invalid rule path {path!r}: a rule path is under data", head.location)
    for key in keys:
        value = key.value if type(key) is ast.Scalar else None
        if type(value) is not str and type(value) is not int:
            raise ArgumentError(f"invalid rule path {path!r}: keys must be strings or integers", getattr(key, "location", None))
        parts.append(value)
    return tuple(parts)


def _rule_location(program: Program, name: str) -> Location | None:
    """Where the rule whose function is ``name`` (or its entry form ``E<id>``) is defined (its first definition)."""
    if name.startswith("E"):
        name = "R" + name[1:]
    for path, fn_name in program.rule_functions.items():
        if fn_name == name:
            node = program.tree.nodes.get(path)
            if node is not None:
                rule = node.rules[0] if node.rules else node.default
                return rule.location if rule is not None else None
    return None


def prepared_rule(engine: Engine, path: str) -> PreparedRule:
    """:meth:`pyrego.engine.Engine.prepare_rule`'s function: ``eval_rule(path,
    input=...)`` with the engine's table lookup done once.

    It runs the engine's steps (see ``Engine.eval_rule``) with what it took
    from the engine's table of resolved rules, for as long as that table is
    the engine's: a change of policies, data or settings (coverage too)
    replaces the table, and the next call goes through ``eval_rule`` and
    takes the new ones (with coverage on, the table's function runs the
    covered evaluation: see ``Engine._resolve_rule``). Until
    the table holds the rule's final functions (while the code is in its
    compact form), every call goes through ``eval_rule``.

    What it took is one list, replaced whole: ``[table, fn, more, default,
    program, config, data, spare, direct]``; ``spare`` is a context made for
    those settings and data, left by the last call for the next (read and
    cleared with nothing between, so two threads never take the same: see
    ``Engine.eval_rule``); ``direct``, where the rule needs no context, its
    evaluation as a function of the input (``codegen.prepared``)."""
    monotonic = time.monotonic
    new_context = EvalContext.fast
    current: list[Any] | None = None

    def through_engine(input: Any) -> Any:
        nonlocal current
        value = engine.eval_rule(path, input=input)
        # Taken after the evaluation: its settings and resolved entry are made by then.
        table, config, data = engine._rule_fns, engine._config, engine._data
        entry = table.get(path)
        if entry is not None and entry[0] is not None and config is not None:
            current = [table, *entry, config, data, None, _input_function(entry, config, data)]
        return value

    def rule(input: Any) -> Any:
        now = current
        if now is None or engine._rule_fns is not now[0]:
            return through_engine(input)
        direct = now[8]
        if direct is not None:
            try:
                return direct(input)  # (its values need no conversion)
            except Exception as exc:
                if runs_again_in_opa_order(exc, now[4]):
                    return _again_in_opa_order(engine, path, input)
                failure = engine._evaluation_failure(exc, path, now[4], input)
                if failure is exc:
                    raise
                raise failure from (None if type(exc) is RecursionError else exc)
        ctx = now[7]
        now[7] = None
        if ctx is not None:
            ctx.input = input
            if ctx.cache:
                ctx.cache = {}
            ctx.q = None
            if ctx.deadline is not None:
                ctx.deadline = monotonic() + now[5].timeout
        else:
            config = now[5]
            timeout = config.timeout
            ctx = new_context(input, now[6], config, None if timeout is None else monotonic() + timeout)
        try:
            value = now[1](ctx)
            if value is UNDEF:
                for fn in now[2]:
                    value = fn(ctx)
                    if value is not UNDEF:
                        break
                else:
                    value = now[3]
        except Exception as exc:
            if runs_again_in_opa_order(exc, now[4]):
                return _again_in_opa_order(engine, path, input)
            failure = engine._evaluation_failure(exc, path, now[4], input)
            if failure is exc:
                raise
            raise failure from (None if type(exc) is RecursionError else exc)
        now[7] = ctx
        if value is True or value is False or value is UNDEF:
            return value
        try:
            return rule_value(value)
        except EvalRecursionError as exc:
            raise engine._evaluation_failure(exc, path, now[4], input) from None

    rule.__doc__ = f"The value of {path} for the input given, or pyrego.UNDEFINED (see Engine.prepare_rule)."
    rule.__qualname__ = rule.__name__ = "prepared_rule"
    guarded = _guarded_input_function(engine, path, rule)
    if guarded is not None:
        guarded.__doc__, guarded.__qualname__, guarded.__name__ = rule.__doc__, rule.__qualname__, rule.__name__
        return guarded
    return rule


def _guarded_input_function(engine: Engine, path: str, slow: Callable[[Any], Any]) -> Callable[[Any], Any] | None:
    """For a rule that needs no context: its evaluation as one function of the
    input, made now (the program's code put in its fast form first, as a
    prepared query is in OPA), which checks on each call that the engine's
    table of resolved rules is still the one it was made from and otherwise
    hands the call to ``slow`` (the prepared rule above, which follows the
    engine's changes). One call per decision: what a hand-written function costs."""
    if engine._covering:
        return None  # coverage on: every call runs the table's covered entry (see Engine._resolve_rule)
    program = engine._get_program()
    if program.gen is None:
        return None
    program.gen.promote()
    config = engine._context().cfg
    table = engine._rule_fns
    entry = table.get(path)
    if entry is None:
        entry = table[path] = engine._resolve_rule(path)
    if entry[0] is None:
        if entry[3] is None:
            return None  # a document, not a rule
        entry = (*engine._rule_entry(path, entry[1], entry[3]), entry[3])
    if table is not engine._rule_fns or config is not engine._config:
        return None  # changed meanwhile: the slow path follows

    def fail(exc: Exception, input: Any) -> None:
        failure = engine._evaluation_failure(exc, path, entry[3], input)
        if failure is exc:
            raise exc
        raise failure from (None if type(exc) is RecursionError else exc)

    guard = {"ENGINE_": engine, "ENGINE_STATE_": vars(engine), "TABLE_": table, "SLOW_": slow, "FAIL_": fail}
    return _input_function(entry, config, engine._data, guard)


def _input_function(entry: Any, config: Any, data: Any, guard: dict[str, Any] | None = None) -> Callable[[Any], Any] | None:
    """The evaluation of a resolved rule ``entry`` as a function of the input
    (see :mod:`pyrego.codegen.prepared`), where it can be one; never with a
    time limit (the deadline is found from a context on the stack).
    ``guard``: see ``codegen.prepared.input_function``."""
    fn, more, default, program = entry
    if config.timeout is not None or program is None:
        return None
    from pyrego.codegen.prepared import input_function

    return input_function(program, (fn, *more), default, lambda: EvalContext.fast(UNDEF, data, config, None), data, rule_value, guard)


def rule_value(value: Any) -> Any:
    """A rule's value as ``eval_rule`` gives it (Python values; text checked as UTF-8)."""
    t = type(value)
    if t is int or t is float or value is None or value is UNDEF or t is bool:
        return value
    if t is str:
        return value if value.isascii() else valid_text(value)
    try:
        return to_python(value)
    except RecursionError:
        raise too_deep_error() from None


def too_deep_error() -> EvalRecursionError:
    return EvalRecursionError("value nested too deeply to convert")


def _check_data_conflicts(tree: CompiledTree, data: dict[Any, Any]) -> None:
    """Refuse a rule whose path holds base data, or lies under a base value that is not an object (OPA's check)."""
    if not data:
        root = tree.nodes.get(())
        if root is None or not root.has_rules():
            return  # no base data: only a rule at the root itself could clash
    for node in tree.nodes.values():
        if not node.has_rules():
            continue
        doc: Any = data
        for key in node.path:
            if type(doc) is not dict:
                break  # under a scalar or array: a conflict
            doc = doc.get(key, UNDEF)
            if doc is UNDEF:
                break
        else:
            doc = None  # base data at the rule's own path
        if doc is not UNDEF:
            rule = node.rules[0] if node.rules else node.default
            where = rule.location if rule is not None else None
            raise RegoCompileError(f"conflicting rule for data path {'/'.join(node.path)} found", where)


def _merge(a: dict[Any, Any], b: dict[Any, Any], path: tuple[str, ...]) -> dict[Any, Any]:
    out = dict(a)
    for k, v in b.items():
        if k in out:
            old = out[k]
            if type(old) is dict and type(v) is dict:
                out[k] = _merge(old, v, path + (str(k),))
                continue
            raise DataError(f"merge error: conflicting data at data.{'.'.join(path + (str(k),))}")
        out[k] = v
    return out


def expr_texts(query: str, body: ast.Body) -> list[str]:
    """The source text of each query expression (for OPA's ``expressions[].text``)."""
    lines = query.splitlines() or [query]
    starts = []
    for e in body:
        loc = e.location
        offset = sum(len(line) + 1 for line in lines[: max(loc.row - 1, 0)]) + max(loc.col - 1, 0)
        starts.append(offset)
    texts = []
    for i, s in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(query)
        texts.append(query[s:end].strip().rstrip(";").strip())
    return texts


def name_query_error(query: str, err: RegoError, rego_v1: bool) -> None:
    """Give an evaluation error of ``query`` the text OPA names its place by.

    A query has no file name, so OPA shows where an error happened by the text
    written there: the failing call's (``1 / 0: eval_builtin_error: ...``), or
    the whole expression's when the call is one (``not f(x)``, whose
    location then is the expression's), or the key a comprehension made
    twice. Errors of other kinds keep ``row:col``."""
    loc = err.location
    if loc is None or loc.file or err.location_text is not None or len(query) > _NAMED_QUERY_LIMIT:
        return
    op = err.message.split(":", 1)[0]
    from pyrego.parse.parser import parse_query  # (only on errors)

    try:
        body = parse_query(query, "", rego_v1=rego_v1)
    except RegoError:
        return
    for e, text in zip(body, expr_texts(query, body)):
        s = e.statement
        if type(s) is ast.Call and s.op == op and s.location == loc:
            err.location, err.location_text = e.location, text
            err.args = (err.format(),)
            return
    # A conflict (an object comprehension's key made twice) is named by the key.
    conflict = isinstance(err, EvalConflictError)
    for node in _query_nodes(body):
        if getattr(node, "location", None) != loc:
            continue
        if (type(node) is ast.Call and node.op == op) or (conflict and type(node) is not ast.Expr):
            found = _term_text(query, node)
            if found is not None:
                err.location_text = found
                err.args = (err.format(),)
            return


# Past this length a query's error keeps row:col (its text is found by parsing
# ever longer prefixes of it).
_NAMED_QUERY_LIMIT = 4000


def _query_nodes(node: Any) -> Any:
    """Every AST node under ``node`` (a body, an expression or a term), parents first."""
    import dataclasses

    if isinstance(node, (list, tuple)):
        for x in node:
            yield from _query_nodes(x)
    elif dataclasses.is_dataclass(node):
        yield node
        for f in dataclasses.fields(node):
            if f.name != "location":
                yield from _query_nodes(getattr(node, f.name))


def _term_text(query: str, term: Any) -> str | None:
    """The text of ``term`` in ``query``: the shortest text from its location on
    that parses to it."""
    loc = term.location
    lines = query.split("\n")
    if not 0 < loc.row <= len(lines):
        return None
    start = sum(len(line) + 1 for line in lines[: loc.row - 1]) + loc.col - 1
    for end in range(start + 1, len(query) + 1):
        if query[end - 1].isspace():
            continue
        try:
            if parse_term(query[start:end]) == term:
                return query[start:end]
        except RegoError:
            continue
    return None
