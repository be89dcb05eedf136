"""Queries on an engine's program (its ``QueryMixin``): parsed, resolved against
the compiled rule tree, type-checked and generated once per program (shared by
every engine on it, and kept per engine by text), then run per evaluation.

``eval_query``, ``eval_partial``, the reads of base data by ``eval_rule`` and
the capabilities (``CompiledProgram.compile_body``/``execute``) go through
these methods."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable

from pyrego.ast import nodes as ast
from pyrego.codegen.bounded import BoundedDict
from pyrego.codegen.build_cache import cache_lock
from pyrego.codegen.program import PATHS_KEPT, QUERIES_KEPT, Program
from pyrego.compile.pipeline import resolve_query
from pyrego.compile.with_targets import body_with_function_targets
from pyrego.engine_support import (
    NO_INPUT,
    PreparedRule,
    expr_texts,
    name_query_error,
    prepared_rule,
    query_context,
    rule_path,
    too_deep_error,
)
from pyrego.errors import (
    EvalError,
    EvalRecursionError,
    Location,
    RegoError,
)
from pyrego.parse.parser import parse_query
from pyrego.runtime.convert import result_json_value, to_python
from pyrego.runtime.helpers import REPLAYED_ERRORS, run_sorted, sorted_iteration
from pyrego.runtime.values import UNDEF

if TYPE_CHECKING:
    import threading
    from collections.abc import Iterable, Iterator

    from pyrego.batch.results import BatchResult, OnError
    from pyrego.runtime.context import EvalContext


class CompiledQuery:
    """A query compiled against one program: its function, the text and
    location of each expression, the program it runs in and its source text
    (empty for a query pyrego makes itself)."""

    __slots__ = ("fn", "texts", "locations", "program", "source")

    def __init__(
        self, fn: Callable[..., Any], texts: list[str], locations: list[Location], program: Program, source: str = ""
    ) -> None:
        self.fn = fn
        self.texts = texts
        self.locations = locations
        # Keeps the program (and so the namespace fn runs in) alive while the query can run.
        self.program = program
        self.source = source

    def run_by(self, fn: Callable[..., Any]) -> CompiledQuery:
        """This query with ``fn`` running it instead (as coverage does)."""
        return CompiledQuery(fn, self.texts, self.locations, self.program, self.source)



#: Batches of at most this many inputs (in a list) evaluate each through a
#: rule the engine keeps prepared, their results made at once (see eval_many).
SMALL_BATCH = 32

# pyrego.batch.results' result makers, imported with the first small batch.
_ok_result: Any = None
_error_result: Any = None
_OK_TRUE: Any = None


def _load_batch_results() -> None:
    global _ok_result, _error_result, _OK_TRUE
    from pyrego.batch.results import OK_TRUE, error_result, ok_result

    _ok_result, _error_result, _OK_TRUE = ok_result, error_result, OK_TRUE


class QueryMixin:
    """Compiling and running queries, for :class:`pyrego.Engine`: its query
    methods (``eval_query``, ``eval_partial``, ``compile_filters``) and the
    compilation they share; rules prepared for many evaluations
    (``prepare_rule``, ``eval_many``)."""

    if TYPE_CHECKING:  # (the engine's)
        _queries: BoundedDict[str, CompiledQuery] | None
        _lock: threading.Lock
        _rego_v0: bool
        _extra_mockable: frozenset[str]
        _input: Any
        _prepared_rules: dict[str, PreparedRule]
        _rule_fns: dict[str, Any]
        _covering: bool

        def _get_program(self) -> Program: ...
        def _covered_query(self, compiled: CompiledQuery, query: str, package: str | None, imports: tuple[str, ...]) -> CompiledQuery: ...
        def _invalidate(self) -> None: ...
        def _context(self, input: Any = NO_INPUT) -> EvalContext: ...
        def _attach_source(self, err: RegoError, policies: Any = None) -> None: ...

    def prepare_rule(self, path: str) -> PreparedRule:
        """The rule (or document) at ``path`` as a function of the input, for
        evaluating it many times (as OPA's ``PrepareForEval``):
        ``rule = engine.prepare_rule("data.authz.allow")``, then
        ``rule(input)`` is ``engine.eval_rule("data.authz.allow", input=input)``
        (a value, or ``pyrego.UNDEFINED``; the same errors), with less fixed cost.

        The policies are compiled now (their errors are raised here), and the
        code of the rule is put in its final form. The function follows the
        engine: after policies, data or settings change, its next call
        evaluates the new ones (never a decision of the old). Like
        ``eval_rule`` with ``input=``, it may be called from several threads
        at once. Preparing the same path again, while the engine has not
        changed, gives the same function."""
        rule_path(path)  # (refuses a path that is not one)
        self._get_program()
        # Taken before preparing: each change of the rule table gives the engine a
        # new, empty dict, so a rule prepared meanwhile goes into the dropped one.
        rules = self.__dict__.get("_prepared_rules")  # (never the class's shared empty one)
        if rules is None or len(rules) >= PATHS_KEPT:
            rules = self._prepared_rules = {}
        rule = rules.get(path)
        if rule is None:
            rule = rules[path] = prepared_rule(self, path)  # type: ignore[arg-type]  # (a mixin of Engine)
        return rule

    def eval_many(
        self, path: str, inputs: Iterable[Any], *, processes: int | None = None, chunk_size: int = 1000, on_error: OnError = "report"
    ) -> Iterator[BatchResult]:
        """The rule at ``path`` for each of ``inputs`` (read lazily): a ``BatchResult(value, error)``
        per input, in order; an input's error is its result and the batch goes on.
        ``processes=N``: in ``N`` worker processes. See :func:`pyrego.batch.eval_many`."""
        if processes is None and on_error == "report" and type(inputs) is list and len(inputs) <= SMALL_BATCH:
            # A few inputs: each through the rule prepared for this engine as it
            # is (preparing it per batch, and a generator, cost more than a
            # small decision); the results are made at once.
            # (Each change of the rule table empties _prepared_rules; should one
            # be missed, a prepared rule still checks the table itself.)
            try:
                rule = self._prepared_rules[path]
            except (KeyError, TypeError):  # TypeError: a path that is not even hashable
                rule = self.prepare_rule(path)
            if _ok_result is None:
                _load_batch_results()
            out = []
            for value in inputs:
                try:
                    result = rule(value)
                except RegoError as err:
                    if not err.code.startswith("eval_"):
                        raise  # (a compile error or a bad path is not the input's)
                    out.append(_error_result(err))
                    continue
                out.append(_OK_TRUE if result is True else _ok_result(result))
            return iter(out)
        batch: Any = sys.modules.get("pyrego.batch")  # (an import statement per call costs more than a small batch)
        if batch is None:
            import pyrego.batch as batch
        return batch.eval_many(self, path, inputs, processes=processes, chunk_size=chunk_size, on_error=on_error)  # type: ignore[no-any-return]


    def _after_failure(self, exc: Exception, path: str, program: Program | None, failed: EvalContext, fns: tuple[Any, ...], default: Any) -> Any:
        """The value of an evaluation of the rule ``path`` (its functions ``fns``,
        tried in turn, then ``default``) that raised ``exc`` in context ``failed``,
        run again with OPA's iteration order (see :func:`sorted_iteration`):
        OPA's value, or OPA's error raised."""
        input = failed.input
        if self._replays(exc, failed):
            try:
                return run_sorted(fns, default, failed.replay())
            except Exception as again:
                exc = again
        failure = self._evaluation_failure(exc, path, program, input)  # type: ignore[attr-defined]
        if failure is exc:
            raise exc
        raise failure from (None if type(exc) is RecursionError else exc)

    def _replays(self, exc: Exception, failed: EvalContext) -> bool:
        """Whether an evaluation that raised ``exc`` in ``failed`` is run again
        in OPA's iteration order; if so, the lines it printed are taken back."""
        if type(exc) not in REPLAYED_ERRORS or _input_fault(exc, failed.input) is not None:
            return False
        printed = failed.q.printed if failed.q is not None else None
        for line in printed or ():
            line[0] = None  # (take_prints skips it)
        return True

    def _eval_rule_by_query(self, query: str, input: Any) -> Any:
        solutions = list(self._execute(self._compile_query(query), input))
        for bindings, _ in solutions:
            return to_python(bindings["__rule_value__"])
        return UNDEF

    def _run_query_body(self, body: ast.Body, text: str, bind: bool = False) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
        return list(self._execute(self._compile_body(body, [text] * len(body))))

    def _compile_query(self, query: str, package: str | None = None, imports: tuple[str, ...] = ()) -> CompiledQuery:
        queries = self._queries
        if queries is None:
            with self._lock:  # (made once: under the lock, a reset of the policies comes before or after)
                queries = self._queries
                if queries is None:
                    queries = self._queries = BoundedDict(QUERIES_KEPT)
        local_key: Any = query if package is None and not imports else (query, package, imports)
        q = queries.get(local_key)
        if q is None:
            # Compiled queries are shared by every engine on the same program.
            prog = self._get_program()
            key = (query, self._rego_v0, package, imports)
            q = prog.queries.get(key)
            if q is None:
                context = query_context(package, imports, self._rego_v0)
                body = parse_query(query, "", rego_v1=not self._rego_v0)
                texts = expr_texts(query, body)
                q = self._compile_body(body, texts, context)
                q.source = query
                q.program.queries[key] = q  # the program it was compiled for
            if self._covering:  # (the engine's own entry: the program's stays as compiled)
                q = self._covered_query(q, query, package, imports)
            queries[local_key] = q
        return q

    def _compile_body(self, body: ast.Body, texts: list[str], context: ast.Module | None = None, *, check_types: bool = True) -> CompiledQuery:
        # (check_types=False: a query pyrego makes itself, such as pyrego test's probes of a rule's body)
        prog = self._get_program()
        resolved, names = resolve_query(body, prog.tree, context)
        targets = body_with_function_targets(resolved, prog.tree)
        if not targets <= prog.mockable:
            self._extra_mockable = self._extra_mockable | targets
            self._invalidate()
            prog = self._get_program()
            resolved, names = resolve_query(body, prog.tree, context)
        gen = prog.gen
        assert gen is not None
        with cache_lock:
            fn = gen.query(resolved, names)
        if check_types and prog.tree.types is not None:
            from pyrego.typecheck import check_query

            check_query(prog.tree.types, resolved)
        return CompiledQuery(fn, texts, [e.location for e in body], prog)

    def _execute(self, q: CompiledQuery, input: Any = NO_INPUT) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
        ctx = self._context(input)
        try:
            try:
                return list(q.fn(ctx))
            except EvalError as err:
                # Run again with OPA's iteration order: its error, or its answer (see sorted_iteration).
                if not self._replays(err, ctx):
                    raise
            with sorted_iteration():
                ctx = ctx.replay()
                return list(q.fn(ctx))
        except RegoError as err:
            fault = _input_fault(err, ctx.input)
            if fault is not None:
                raise fault from None
            self._attach_source(err)
            if q.source and isinstance(err, EvalError):
                name_query_error(q.source, err, not self._rego_v0)
            raise
        except RecursionError as exc:
            raise _input_fault(exc, ctx.input) or EvalRecursionError(
                "evaluation exceeded the maximum depth", q.locations[0] if q.locations else None
            ) from None
        except Exception as exc:
            fault = _input_fault(exc, ctx.input)
            if fault is not None:
                raise fault from None
            raise EvalError(f"internal error: {type(exc).__name__}: {exc}", code="eval_internal_error") from exc

    def eval_query(
        self, query: str, *, input: Any = NO_INPUT, package: str | None = None, imports: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Evaluate ``query`` and return OPA's result shape (values as JSON-ready Python).

        ``input``: the input document for this call only, as for :meth:`eval_rule`.
        ``package`` (``"authz"``) and ``imports`` (``["data.lib.util"]``): resolve
        the query's names as in a module of that package with those imports
        (``opa eval --package --import``)."""
        q = self._compile_query(query, package, tuple(imports))
        results = []
        try:
            for bindings, values in self._execute(q, input):
                exprs = [
                    {"value": result_json_value(v), "text": text, "location": {"row": loc.row, "col": loc.col}}
                    for v, text, loc in zip(values, q.texts, q.locations)
                ]
                results.append({"expressions": exprs, "bindings": {k: result_json_value(v) for k, v in bindings.items()}})
        except RecursionError as exc:
            raise _input_fault(exc, self._input if input is NO_INPUT else input) or too_deep_error() from None
        return {"result": results}

    def eval_query_json(self, query: str, *, input: Any = NO_INPUT) -> str:
        """:meth:`eval_query` as JSON text (sets as sorted arrays, as ``opa eval`` prints)."""
        from pyrego.runtime.convert import dumps

        result = self.eval_query(query, input=input)
        try:
            return dumps(result)
        except RecursionError:
            raise too_deep_error() from None

    def eval_partial(self, query: str, *, unknowns: Sequence[str] | None = ("input",), input: Any = NO_INPUT) -> Any:
        """Partially evaluate ``query`` with ``unknowns`` unknown (OPA's ``rego.Partial``).

        Returns a :class:`pyrego.partial.PartialResult`: residual queries and
        support modules. ``unknowns`` None: those the queried rule's
        ``# METADATA`` declares (``compile: unknowns:``), else ``input``.
        ``input``: the known part of the input (default: the engine's)."""
        from pyrego.partial import partial_eval

        engine: Any = self  # (an Engine: the mixin's only user)
        known = self._input if input is NO_INPUT else input
        try:
            return partial_eval(engine, query, unknowns=unknowns, input=known)
        except RecursionError as exc:
            raise _input_fault(exc, known) or EvalRecursionError("evaluation exceeded the maximum depth") from None

    def compile_filters(
        self,
        query: str,
        input: Any = None,
        *,
        unknowns: Sequence[str] | None = ("input",),
        target: str = "sql",
        dialect: str = "postgresql",
        mappings: dict[str, Any] | None = None,
        mask_rule: str | None = None,
    ) -> dict[str, Any]:
        """OPA's Compile API: ``query`` as a data filter, ``{"query": ..., "masks": ...}``
        (a SQL ``WHERE`` clause or a UCAST object); see :func:`pyrego.filters.compile_filters`."""
        from pyrego.filters import compile_filters

        engine: Any = self  # (an Engine: the mixin's only user)
        try:
            return compile_filters(
                engine, query, input, unknowns=unknowns, target=target, dialect=dialect, mappings=mappings, mask_rule=mask_rule
            )
        except RecursionError as exc:
            raise _input_fault(exc, input) or EvalRecursionError("evaluation exceeded the maximum depth") from None


def _input_fault(exc: BaseException, input: Any) -> RegoError | None:
    """The error naming the fault of ``input`` that ended an evaluation with
    ``exc`` (see :mod:`pyrego.runtime.input_faults`, loaded only here)."""
    from pyrego.runtime.input_faults import input_fault

    return input_fault(exc, input)
