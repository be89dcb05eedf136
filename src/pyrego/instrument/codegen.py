"""The instrumented program: the policies' code with a report at each step.

Coverage, traces and profiles are made by evaluating a second program,
generated from the same checked rule tree by :class:`InstrumentedGen`; the
normal program is not touched (an engine with coverage off runs exactly the
code it ran before, and pays nothing). The instrumented program is cached
apart from the normal one (its cache key says so) and differs from it in
that

* rule bodies are compiled in the form OPA evaluates
  (:mod:`pyrego.compile.opa_form`), in OPA's order (no cheap tests hoisted ahead),
  and each expression starts with ``EV(ctx, <piece>)``; a failing test
  reports ``FL``, an iterating expression ``Redo`` per further solution,
  a rule body its ``Enter`` and, when it succeeds, ``XT`` (its head: OPA's
  coverage marks a head covered when the rule exits);
* the document and function wrappers ask OPA's rule index
  (:mod:`pyrego.compile.rule_index`) which definitions and ``else`` branches to
  evaluate, in which order, and whether the first value ends the search,
  and report a default rule when they take it;
* constant rules, closures and the fast form are not used (every rule is
  generated code in the canonical form, which nothing recompiles).

What is reported goes to the evaluation's :class:`~pyrego.instrument.recorder.Recorder`.
"""

from __future__ import annotations

import functools
import re
import time
from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.codegen.body import BodyEmitter
from pyrego.codegen.generator import ModuleGen
from pyrego.codegen.program import Program
from pyrego.codegen.rule_values import conflict_message
from pyrego.compile.base import (
    COMPLETE,
    FUNCTION,
    PARTIAL_OBJECT,
    PARTIAL_SET,
    CompiledTree,
    RuleNode,
    child_at,
    iter_rule_chain,
    rule_suffix,
)
from pyrego.compile.body_order import reorder_body
from pyrego.compile.ground import ground_value, is_ground
from pyrego.compile.opa_form import OpaForm, PieceTable
from pyrego.compile.rule_index import IndexedRule, RuleIndex, head_value
from pyrego.compile.safety import stmt_vars
from pyrego.instrument.recorder import NAMESPACE
from pyrego.parse.spans import SourceSpans
from pyrego.runtime.helpers import MISS, VALUES, resolve_index_ref, rt_conflict
from pyrego.runtime.values import UNDEF, equal, freeze

_LOOP = re.compile(r"for (.*?) in (.*):")

#: The file name of a query's locations (as the engine parses queries).
QUERY_FILE = "query"


class _Branch:
    """The rule branch whose top-level body is about to be written (``key``: in
    a keyed definition, the head's key, unified with the key looked up first)."""

    __slots__ = ("node", "chain", "branch", "rule_pid", "head_pid", "key")

    def __init__(self, node: RuleNode, chain: int, branch: int, rule_pid: int, head_pid: int, key: ast.Term | None) -> None:
        self.node = node
        self.chain = chain
        self.branch = branch
        self.rule_pid = rule_pid
        self.head_pid = head_pid
        self.key = key


class InstrumentedEmitter(BodyEmitter):
    """Writes a function body with a report at each expression."""

    hoist = False
    gen: InstrumentedGen

    def __init__(self, gen: ModuleGen, indent: int = 1) -> None:
        super().__init__(gen, indent)
        self.piece = -1  # the expression being written (for its failures)
        self._close_query: list[int] = []  # indents at which a subquery's block ends
        self._subquery = False  # the next body is a comprehension's or negation's query

    def body(
        self,
        body: ast.Body,
        *,
        required: set[str] | None = None,
        location: ast.Location | None = None,
        record: dict[int, str] | None = None,
    ) -> None:
        gen = self.gen
        branch, gen.branch_info = gen.branch_info, None
        subquery, self._subquery = self._subquery, False
        if record is not None:  # a query: its expressions as written
            super().body(body, required=required, location=location, record=record)
            return
        ctx = self.ctx
        if branch is not None:
            self.w(f"if not IXA({ctx}, {branch.node.id}, {branch.branch}): {self.fail}")
            self.w(f"EN({ctx}, {branch.rule_pid})")
            if branch.key is not None:
                # A keyed definition: the head's key takes the key looked up before the body runs.
                saved, self.piece = self.piece, branch.rule_pid
                self.unify_value(branch.key, "key", branch.key.location)
                self.piece = saved
        form = gen.opa
        split = form.split(body)
        own = set(self.outer | self.bound).union(*[stmt_vars(e.statement, set()) for e in split])
        ordered, _ = reorder_body(split, set(self.bound), own, gen.arity, required=required, location=location, bind_operands=False)
        final = form.bind(ordered)
        if branch is not None and branch.key is None:
            gen.branch_bodies[(branch.node.id, branch.chain, branch.branch)] = final
        super().body(final, required=required, location=location)
        if branch is not None:
            self.w(f"XT({self.ctx}, {branch.head_pid})")
        elif subquery:
            self.w(f"QS({self.ctx})")  # each solution of a comprehension's or negation's query

    def expr(self, e: ast.Expr, record_as: str | None = None) -> None:
        pid = self.gen.opa.table.of(e)
        if pid is None and type(e.statement) is not ast.SomeVars:
            pid = self.gen.opa.expr_piece(e)
        saved = self.piece
        if pid is not None:
            names = self._shown_vars(e) if self.gen.trace_locals else ()
            if names:
                shown = tuple(n.split("#")[0] for n in names)
                values = "".join(f"{self.vars[n]}, " for n in names)
                self.w(f"EVL({self.ctx}, {pid}, {self.gen.const(shown)}, ({values}))")
            else:
                self.w(f"EV({self.ctx}, {pid})")
            self.piece = pid
        super().expr(e, record_as)
        self.piece = saved

    def _shown_vars(self, e: ast.Expr) -> list[str]:
        """The policy's own variables of ``e`` bound before it (their values go with its ``Eval``)."""
        names = stmt_vars(e.statement, set()) & self.bound
        return sorted(n for n in names if n in self.vars and not n.startswith(("$", "__local")))

    def guard(self, cond: str) -> None:
        if self._close_query and self._close_query[-1] == self.indent:
            # The first test after a negation's block: its subquery has ended.
            self._close_query.pop()
            self.w(f"QX({self.ctx})")
        if self.piece >= 0:
            self.lines.append(f"{'    ' * self.indent}if {cond}: FL({self.ctx}, {self.piece}); {self.fail}")
            return
        super().guard(cond)

    def open_loop(self, header: str) -> None:
        m = _LOOP.fullmatch(header)
        if m is not None and self.piece >= 0:
            header = f"for {m.group(1)} in RI({self.ctx}, {self.piece}, {m.group(2)}):"
        super().open_loop(header)

    def negation(self, e: ast.Expr) -> None:
        self.w(f"QE({self.ctx})")
        self._close_query.append(self.indent)
        self._subquery = True
        super().negation(e)
        if self._close_query and self._close_query[-1] == self.indent:  # (no test was written)
            self._close_query.pop()
            self.w(f"QX({self.ctx})")

    def comprehension(self, t: ast.ArrayCompr | ast.SetCompr | ast.ObjectCompr) -> str:
        self.w(f"QE({self.ctx})")
        saved = self.piece
        self._subquery = True
        out = super().comprehension(t)
        self.piece = saved
        self.w(f"QX({self.ctx})")
        return out

    def call(self, t: ast.Call, check: bool = True) -> str:
        if t.op == "trace" and len(t.args) in (1, 2) and self.piece >= 0:
            msg = self.term(t.args[0])
            res = self.tmp("r")
            self.assign(res, f"NT({self.ctx}, {self.piece}, {msg})")
            if len(t.args) == 2:
                self.unify_value(t.args[1], res, t.location)
                return "True"
            self.result_check(res, check)
            return res
        return super().call(t, check)


class InstrumentedWrapper:
    """The instrumented ``R<id>``/``F<id>``: definitions chosen by the rule index."""

    def __init__(
        self,
        gen: InstrumentedGen,
        node: RuleNode,
        defs: tuple[str, ...],
        index: RuleIndex,
        default: tuple[str | None, Any, tuple[int, int, int] | None],
        keyed_defs: tuple[str, ...] = (),
    ) -> None:
        self.kind = node.kind or COMPLETE
        self.node_id = node.id
        self.path = node.name
        self.defs = defs
        self.keyed_defs = keyed_defs
        self.index = index
        self.default_fn, self.default_value, self.default_pieces = default
        self.conflict = conflict_message(node)
        # Each definition's location: a conflict is reported where the differing value came from.
        self.where = tuple(r.location for r in node.rules)

    @property
    def name(self) -> str:
        return f"F{self.node_id}" if self.kind == FUNCTION else f"R{self.node_id}"

    def describe(self) -> str:
        return f"# {self.name}: instrumented {self.kind}, definitions {', '.join(self.defs) or 'none'}"

    def compact(self, namespace: dict[str, Any]) -> Callable[..., Any]:
        defs = tuple(namespace[d] for d in self.defs)
        default_fn = namespace[self.default_fn] if self.default_fn is not None else None
        run = _Run(self, defs, default_fn, tuple(namespace[d] for d in self.keyed_defs))
        if self.kind == FUNCTION:
            return run.function
        if self.kind in (PARTIAL_SET, PARTIAL_OBJECT):
            return run.partial
        return run.complete


class _Run:
    """The wrappers' steps at run time (methods, not nested closures: no reference cycles)."""

    def __init__(
        self,
        w: InstrumentedWrapper,
        defs: tuple[Callable[..., Any], ...],
        default_fn: Callable[..., Any] | None,
        keyed_defs: tuple[Callable[..., Any], ...] = (),
    ) -> None:
        self.w = w
        self.defs = defs
        self.default_fn = default_fn
        self.keyed_defs = keyed_defs
        self.key = w.node_id

    def chosen(self, ctx: Any, args: tuple[Any, ...]) -> Any:
        """The rule index's choice for ``args`` (traced as an ``Index`` event)."""
        return self._chosen(ctx, args)

    def _chosen(self, ctx: Any, args: tuple[Any, ...]) -> Any:
        started = time.perf_counter_ns()
        res = self.w.index.lookup(lambda ref: resolve_index_ref(ctx, ref, args))
        rec = ctx.cfg.recorder
        rec.count("timer_eval_op_rule_index_ns", time.perf_counter_ns() - started)
        rec.index(self.w.path, res.count(), res.early_exit)
        return res

    def _values(self, ctx: Any, args: tuple[Any, ...]) -> Any:
        rec = ctx.cfg.recorder
        res = self._chosen(ctx, args)
        r = UNDEF
        for chain, branches in res.rules:
            rec.allow(self.key, branches)
            rec.push()
            try:
                x = self.defs[chain](ctx, *args)
            finally:
                rec.pop()
            if x is not UNDEF:
                if r is UNDEF:
                    r = x
                elif not equal(r, x):
                    rt_conflict(self.w.conflict, self.w.where[chain])
                if res.early_exit:
                    break
        if r is UNDEF and (self.default_fn is not None or self.w.default_value is not UNDEF):
            pieces = self.w.default_pieces
            if pieces is not None:
                rec.default_rule(*pieces)
            r = self.default_fn(ctx, *args) if self.default_fn is not None else self.w.default_value
        return r

    def _cached(self, ctx: Any) -> None:
        """A value taken from the evaluation's cache: OPA still looks up (and traces) the index."""
        rec = ctx.cfg.recorder
        rec.count("counter_eval_op_virtual_cache_hits")
        if rec.events is not None:
            self._chosen(ctx, ())

    def complete(self, ctx: Any) -> Any:
        c = ctx.cache
        r = c.get(self.key, MISS)
        if r is not MISS:
            self._cached(ctx)
            return r
        ctx.cfg.recorder.count("counter_eval_op_virtual_cache_misses")
        r = self._values(ctx, ())
        c[self.key] = r
        return r

    def function(self, ctx: Any, *args: Any) -> Any:
        return self._values(ctx, args)

    def partial(self, ctx: Any) -> Any:
        c = ctx.cache
        r = c.get(self.key, MISS)
        if r is not MISS:
            self._cached(ctx)
            return r
        rec = ctx.cfg.recorder
        rec.count("counter_eval_op_virtual_cache_misses")
        res = self._chosen(ctx, ())
        acc: Any = set() if self.w.kind == PARTIAL_SET else {}
        for chain, branches in res.rules:
            rec.allow(self.key, branches)
            rec.push()
            try:
                self.defs[chain](ctx, acc)
            finally:
                rec.pop()
        if type(acc) is dict:
            acc.pop(VALUES, None)
        c[self.key] = acc
        return acc

    def keyed(self, ctx: Any, key: Any) -> Any:
        """The document's part for ``key`` alone (``data.p[k]`` with ``k`` known):
        OPA evaluates each definition with its head's key bound to ``k`` first."""
        c = ctx.cache
        full = c.get(self.key, MISS)
        if full is not MISS:
            self._cached(ctx)
            return full
        slot = (self.key, freeze(key))
        r = c.get(slot, MISS)
        if r is not MISS:
            self._cached(ctx)
            return r
        rec = ctx.cfg.recorder
        rec.count("counter_eval_op_virtual_cache_misses")
        res = self._chosen(ctx, ())
        acc: Any = set() if self.w.kind == PARTIAL_SET else {}
        for chain, branches in res.rules:
            rec.allow(self.key, branches)
            rec.push()
            try:
                self.keyed_defs[chain](ctx, acc, key)
            finally:
                rec.pop()
        if type(acc) is dict:
            acc.pop(VALUES, None)
        c[slot] = acc
        return acc


class InstrumentedGen(ModuleGen):
    """Generates the instrumented program (see the module docs)."""

    emitter = InstrumentedEmitter
    keyed_lookups = False  # (its own: RK<id>, below)

    def __init__(self, tree: CompiledTree, mockable: frozenset[str], texts: dict[str, str], *, trace_locals: bool = False) -> None:
        super().__init__(tree, mockable)
        # Whether each Eval reports the values of its expression's variables (traces).
        self.trace_locals = trace_locals
        self.closures = False
        self.compact = False
        self.namespace.update(NAMESPACE)
        self.namespace["FIX"] = self._function_index
        self._texts = texts
        self._spans: dict[str, SourceSpans | None] = {}
        self.query_text: str | None = None
        self.opa = OpaForm(PieceTable(), self.spans)
        self.branch_info: _Branch | None = None
        self.branch_bodies: dict[tuple[int, int, int], ast.Body] = {}
        self._chain = 0
        self._branch_no = 0
        # Each branch's form (its head's calls moved into its body), by the branch's identity.
        self._forms: dict[int, ast.Rule] = {}
        self._rule_piece_ids: dict[int, tuple[int, int]] = {}
        # Partial rules with keyed definitions (``RK<id>``), and whether one is being written.
        self._keyed_nodes: set[int] = set()
        self._keyed_def = False
        self._chain_rules: list[ast.Rule] = []

    @property
    def table(self) -> PieceTable:
        return self.opa.table

    def spans(self, file: str) -> SourceSpans | None:
        """The ranges of the module ``file`` (or of the query being compiled); None for an unknown file."""
        if file == QUERY_FILE and self.query_text is not None:
            return SourceSpans(file, self.query_text)
        if file not in self._spans:
            text = self._texts.get(file)
            self._spans[file] = SourceSpans(file, text) if text is not None else None
        return self._spans[file]

    def module_files(self) -> frozenset[str]:
        """The files coverage reports on (not the queries')."""
        return frozenset(self._texts)

    def query_for(self, text: str, body: ast.Body, names: dict[str, str]) -> Callable[..., Any]:
        """Compile a query; its expressions are shown with their text from ``text``."""
        self.query_text = text
        try:
            return self.query(body, names)
        finally:
            self.query_text = None

    def promote(self) -> None:
        """The instrumented program keeps its canonical code (never the fast form)."""

    def materializer(self, node: RuleNode) -> None:
        """``N<id>`` as in the normal program, and, for each function among the
        children, the index lookup OPA makes (and traces) when it enumerates
        a document that holds functions."""
        start = len(self.lines)
        super().materializer(node)
        lines = self.lines[start:]
        del self.lines[start:]
        calls = {f"    v = {'R' if c.has_rules() else 'N'}{c.id}(ctx)": name for name, c in node.children.items()}
        functions = sorted((name, c) for name, c in node.children.items() if c.kind == FUNCTION)
        out: list[str] = []
        for line in lines:
            name = calls.get(line)
            while functions and name is not None and functions[0][0] < name:
                out.append(f"    FIX(ctx, {self.literal(f'F{functions.pop(0)[1].id}')})")
            if line.startswith(f"    c[{-node.id - 1}] = r"):
                out += [f"    FIX(ctx, {self.literal(f'F{c.id}')})" for _, c in functions]
                functions = []
            out.append(line)
        self.lines.extend(out)

    def _function_index(self, ctx: Any, name: str) -> None:
        run = getattr(self.load(name), "__self__", None)
        if isinstance(run, _Run):
            run.chosen(ctx, ())

    # -- rules --------------------------------------------------------------------------------

    def rule_node(self, node: RuleNode, constant: bool | None = None) -> InstrumentedWrapper | None:  # type: ignore[override]
        defs = tuple(self.definition(node, rule, i) for i, rule in enumerate(node.rules))
        if node.kind in (PARTIAL_SET, PARTIAL_OBJECT) and (
            node.default is not None or (node.kind == PARTIAL_OBJECT and self._rules_below_children(node))
        ):
            self.partial_rule_def(node, list(defs))  # (rare shapes: no rule index)
            return None
        default = self._default(node)
        keyed: tuple[str, ...] = ()
        if self._keyable(node):
            keyed = tuple(self._keyed_definition(node, rule, i) for i, rule in enumerate(node.rules))
            self._keyed_nodes.add(node.id)
            self.namespace[f"RK{node.id}"] = functools.partial(self._keyed_lookup, f"R{node.id}")
        return InstrumentedWrapper(self, node, defs, self._index(node), default, keyed)

    # -- partial rules looked up by key ------------------------------------------------------

    @staticmethod
    def _keyable(node: RuleNode) -> bool:
        """Whether the node's rules can be evaluated for one key (partial sets, and
        partial objects whose rules all give a value)."""
        if node.kind == PARTIAL_SET:
            return all(_pattern(r.head.key) for r in node.rules)
        return node.kind == PARTIAL_OBJECT and all(r.head.value is not None and rule_suffix(0, r) and _pattern(rule_suffix(0, r)[0]) for r in node.rules)

    def _keyed_definition(self, node: RuleNode, rule: ast.Rule, index: int) -> str:
        """``DK<id>_<n>(ctx, acc, key)``: definition ``n`` with its head's key bound to ``key``."""
        name = f"DK{node.id}_{index}"
        em = self.emitter(self)
        chain = list(iter_rule_chain(rule))
        self._chain, self._branch_no, self._chain_rules = index, 0, chain
        self._keyed_def = True
        try:
            for branch in chain:
                self.branch(em, node, branch, once=len(chain) > 1)
        finally:
            self._keyed_def = False
        em.finish()
        self.lines.append(f"def {name}(ctx, acc, key):")
        self.lines.extend(em.lines)
        self.lines.append("")
        return name

    def _keyed_lookup(self, name: str, ctx: Any, key: Any) -> Any:
        run = getattr(self.load(name), "__self__", None)
        assert isinstance(run, _Run)
        return run.keyed(ctx, key)

    def data_ref(self, em: BodyEmitter, path: tuple[ast.Term, ...], check: bool = True) -> str:
        """As in the normal program, except that a partial rule read with a known
        key (``data.p[k]``, ``data.p.foo``) is evaluated for that key only, as OPA does."""
        kind, cur, i = self.data_target(path)
        if kind == "rule" and cur.id in self._keyed_nodes | self._keyable_ids(cur) and i < len(path) and not em.has_unbound(path[i]):
            key = em.term(path[i])
            v = em.tmp()
            em.assign(v, f"RK{cur.id}({em.ctx}, {key})")
            return em.walk_path(v, path[i:], check=check)
        return super().data_ref(em, path, check)

    def _keyable_ids(self, node: RuleNode) -> set[int]:
        """``{node.id}`` when ``node`` will get keyed definitions (its code may not be written yet)."""
        shape_ok = not (node.default is not None or (node.kind == PARTIAL_OBJECT and self._rules_below_children(node)))
        return {node.id} if shape_ok and self._keyable(node) else set()

    def _default(self, node: RuleNode) -> tuple[str | None, Any, tuple[int, int, int] | None]:
        rule = node.default
        if rule is None:
            return None, UNDEF, None
        value = rule.head.value
        fn, literal = None, UNDEF
        if node.kind == FUNCTION or value is None or not is_ground(value):
            fn = self.default_value(node)
        else:
            literal = ground_value(value)
        rule_pid, head_pid = self._rule_pieces(node, rule)
        true_pid = self.table.of(self.opa.true_piece(rule))
        assert true_pid is not None
        return fn, literal, (rule_pid, true_pid, head_pid)

    def _index(self, node: RuleNode) -> RuleIndex:
        rules = []
        for chain, rule in enumerate(node.rules):
            for branch, r in enumerate(iter_rule_chain(rule)):
                body = self.branch_bodies.get((node.id, chain, branch), ())
                has, ground, value = head_value(self._forms.get(id(r), r))
                rules.append(
                    IndexedRule(
                        chain, branch, body, tuple(r.head.args or ()), node.kind in (COMPLETE, FUNCTION), has, ground, value
                    )
                )
        return RuleIndex(rules, self._is_virtual)

    def _is_virtual(self, path: tuple[str, ...]) -> bool:
        """Whether ``data.<path>`` reaches a document defined by rules (OPA does not index those)."""
        cur = self.tree.root
        for key in path:
            if cur.has_rules():
                return True
            nxt = child_at(cur, key)
            if nxt is None:
                return False
            cur = nxt
        return self._has_rules_below(cur)

    def definition(self, node: RuleNode, rule: ast.Rule, index: int) -> str:
        self._chain, self._branch_no = index, 0
        self._chain_rules = list(iter_rule_chain(rule))
        return super().definition(node, rule, index)

    def branch(self, em: BodyEmitter, node: RuleNode, rule: ast.Rule, once: bool = True, keyed: int = 0) -> None:
        form = self.opa.rule(rule, else_branch=self._branch_no > 0)
        self._forms[id(rule)] = form
        rule_pid, head_pid = self._rule_pieces(node, rule)
        key: ast.Term | None = None
        if self._keyed_def:
            key = form.head.key if node.kind == PARTIAL_SET else rule_suffix(0, form)[0]
        self.branch_info = _Branch(node, self._chain, self._branch_no, rule_pid, head_pid, key)
        self._branch_no += 1
        spans = self.spans(rule.location.file)
        if self._branch_no > 1 and spans is not None:
            # OPA locates every expression and term of a one-line `else ... if cond`
            # body at the rest of the rule (from `else` to the chain's end).
            self.opa.forced = spans.else_body(rule, self._chain_rules)
        try:
            super().branch(em, node, form, once, keyed)
        finally:
            self.branch_info = None
            self.opa.forced = None

    def _rule_pieces(self, node: RuleNode, rule: ast.Rule) -> tuple[int, int]:
        """The pieces of a rule's ``Enter`` (at the rule) and ``Exit`` (its head's range)."""
        known = self._rule_piece_ids.get(id(rule))
        if known is not None:
            return known
        spans = self.spans(rule.head.location.file)
        span = spans.head(rule) if spans is not None else None
        rule_pid = self.opa.piece("rule", rule.location, span, node.name)
        head_pid = self.opa.piece("head", rule.head.location, span, node.name)
        # Enter and Exit show the document's name, not the head's text.
        self.table.pieces[rule_pid] = self.table.pieces[rule_pid]._replace(text=node.name)
        self.table.pieces[head_pid] = self.table.pieces[head_pid]._replace(text=node.name)
        self._rule_piece_ids[id(rule)] = (rule_pid, head_pid)
        return rule_pid, head_pid


def _pattern(t: ast.Term | None) -> bool:
    """Whether a head's key can be unified with a value before the body runs (a
    variable, a constant, or a collection of those)."""
    if isinstance(t, (ast.Scalar, ast.Var)):
        return not (isinstance(t, ast.Var) and t.name in ("input", "data"))
    if isinstance(t, ast.Array):
        return all(_pattern(x) for x in t.items)
    if isinstance(t, ast.Object):
        return all(is_ground(k) and _pattern(v) for k, v in t.items)
    return False


def generate_instrumented(tree: CompiledTree, mockable: frozenset[str], texts: dict[str, str], *, trace_locals: bool = False) -> Program:
    """Generate and load the instrumented program of ``tree`` (``texts``: module file -> policy text;
    ``trace_locals``: each expression's ``Eval`` reports its variables' values)."""
    gen = InstrumentedGen(tree, mockable, texts, trace_locals=trace_locals)
    return gen.build()


def piece_table(program: Program) -> PieceTable:
    gen = program.gen
    assert isinstance(gen, InstrumentedGen)
    return gen.table


__all__ = ["InstrumentedGen", "generate_instrumented", "piece_table"]
