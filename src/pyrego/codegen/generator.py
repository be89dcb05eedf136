"""Code generation: a checked rule tree becomes one Python module.

For every document defined by rules there is a function ``R<id>(ctx)``
returning its value (memoised per evaluation in ``ctx.cache``); each rule
definition is a function ``D<id>_<n>``; user functions are ``F<id>(ctx,
*args)``; documents that hold other documents are built on demand by
``N<id>(ctx)``. Queries compile to generators ``Q(ctx)`` that yield bindings.

The generated source is compiled with :func:`compile` and executed in a
namespace holding only the runtime helpers, the constants table (``K<n>``),
locations (``L<n>``) and builtin functions (``B<n>``).
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Callable

from pyrego.ast import nodes as ast
from pyrego.builtins.registry import Builtin, lookup
from pyrego.codegen import closures, deferred
from pyrego.codegen import docs as codegen_docs
from pyrego.codegen.body import BodyEmitter
from pyrego.codegen.disk_cache import compile_source
from pyrego.codegen.program import LOAD_LOCK, Program
from pyrego.codegen.rule_values import conflict_locations, conflict_message, each_definition, early_exit_name
from pyrego.codegen.set_members import bind_key
from pyrego.codegen.tiers import TICK_LINE, BuiltinSite, RuleWrapper, fast_lines, make_tick
from pyrego.compile.base import (
    COMPLETE,
    FUNCTION,
    PARTIAL_OBJECT,
    PARTIAL_SET,
    CompiledTree,
    KeyPart,
    RuleNode,
    iter_rule_chain,
    path_key,
)
from pyrego.compile.ground import ground_value, is_ground
from pyrego.compile.index_guards import guarded_rule, index_plan, program_can_conflict
from pyrego.compile.index_order import definition_order
from pyrego.compile.rule_index import one_constant_value
from pyrego.compile.safety import body_vars, term_vars
from pyrego.errors import Location, RegoCompileError, RegoError, RegoUnsafeVarError
from pyrego.runtime.docs import DOC_HELPERS, rt_path
from pyrego.runtime.helpers import HELPERS, builtin_call, rt_call_builtin
from pyrego.runtime.values import PLAIN_TYPES, UNDEF, freeze
from pyrego.runtime.withs import make_call_mock, make_with, rt_const_fn, rt_node_child

#: The most characters of compact code a rule may have to be recompiled in
#: the fast form (the largest rules of the benchmark policies have a few thousand).
LARGEST_PROMOTED_CHUNK = 60_000

# What every program's namespace starts with (copied, never shared).
_BASE_NAMESPACE: dict[str, Any] = {
    **HELPERS,
    **DOC_HELPERS,
    "rt_path": rt_path,
    "rt_node_child": rt_node_child,
    "rt_const_fn": rt_const_fn,
}


class ModuleGen:
    """Generates the Python module for a rule tree (and, later, for queries)."""

    #: The writer of function bodies (the instrumented program has its own: pyrego.instrument.codegen).
    emitter: type[BodyEmitter] = BodyEmitter
    #: Whether a lookup of one key runs definitions with the key bound first (codegen.set_members).
    keyed_lookups = True
    #: Whether the code may look OPA's rule index up at run time (see codegen.rule_values.early_exit_name; not an artifact's).
    index_lookups = True

    def __init__(self, tree: CompiledTree, mockable: frozenset[str] = frozenset(), strict_errors: bool = False) -> None:
        self.tree = tree
        self.mockable = mockable
        self.strict_errors = strict_errors  # (code for evaluations with strict builtin errors too)
        self.namespace: dict[str, Any] = dict(_BASE_NAMESPACE)
        self.namespace["__builtins__"] = {}
        self.lines: list[str] = []
        self._consts: dict[Any, str] = {}
        self._locs: dict[Location, str] = {}
        self._builtins: dict[str, str] = {}
        # Builtin call sites (``C<n>``), by builtin name and call location.
        self._site_names: dict[tuple[str, Location], str] = {}
        self.builtin_sites: dict[str, BuiltinSite] = {}
        self._materialize_needed: dict[int, RuleNode] = {}  # (documents whose N<id> is needed, by id)
        self._materialize_pending: list[int] = []  # (a heap of those not written yet)
        self._materialized: set[int] = set()
        self._member_sets: dict[Any, tuple[str, bool]] = {}
        self.children_maps: set[int] = set()  # (ids of nodes whose CH<id> table is written)
        self._rules_below: dict[int, bool] = {}
        # Generated code per document function, compiled on first use, and
        # the document function itself where it is a wrapper (codegen_tiers).
        self.chunks: dict[str, list[str]] = {}
        self.wrappers: dict[str, RuleWrapper] = {}
        # Member readers of partial sets (codegen.set_members): name -> each definition's key pattern.
        self.member_readers: dict[str, dict[str, Any]] = {}
        self.keyed_defs: dict[tuple[int, int], dict[str, str]] = {}
        self.path_readers: dict[str, set[int]] = {}  # (readers along keys: name -> how many keys)  # (their definitions run for one key, by node id)
        # The rule node of each chunk, to write its code again in the
        # canonical shapes that the fast form expands (see fast_chunk).
        self._chunk_nodes: dict[str, RuleNode] = {}
        # Rules' code is written in the compact form (codegen_lines).
        self.compact = True
        # The document function of each rule path.
        self.rule_functions: dict[tuple[str, ...], str] = {}
        # Compact code is compiled until the program is hot (see codegen_tiers).
        self.hot = False
        self._compact_loaded: list[str] = []
        self._pending_tables: list[str] = []
        self._n = 0
        # Rules' definitions run as closures until the program is hot, where
        # their shape allows (see closures); the nodes that have some, whose
        # code is written only when it is compiled (or shown).
        self.closures = closures.ENABLED
        self._closure_nodes: set[int] = set()
        # Documents planned on their first call (codegen.deferred), by function
        # name, and the bodies ordered when they were deferred, by id.
        self.deferred: dict[str, RuleNode] = {}
        self.body_orders: dict[int, Any] = {}
        # Documents of several levels' rules (codegen_docs): nodes with an own part, readers, tables.
        self.own_parts: set[int] = set()
        self.ground_docs: dict[tuple[str, ...], str] = {}
        self.child_tables: dict[tuple[int, tuple[str, ...]], str] = {}
        self.key_tries: set[tuple[int, int]] = set()  # (node id, depth) of tables written (codegen_docs.key_trie_name)
        self.built = False

    # -- names and tables -----------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def literal(self, v: Any) -> str:
        """Python source for a scalar: ``repr`` of a checked type, else a constant."""
        t = type(v)
        if t is str or t is bool or v is None:
            return repr(v)
        if t is KeyPart:
            return self.literal(v.value)  # (a key of a node's path: the key itself)
        if t is int:
            if -(10**30) < v < 10**30:
                return repr(v)
            return self.const(v)
        if t is float:
            if math.isfinite(v):
                return repr(v)
            return self.const(v)
        return self.const(v)

    def const(self, value: Any) -> str:
        """A name in the constants table bound to ``value`` (shared, never mutated)."""
        try:
            key: Any = (type(value), freeze(value) if type(value) in PLAIN_TYPES and type(value) is not tuple else value)  # (a builtin's caller: no value)
            hash(key)
        except TypeError:
            key = None
        if key is not None and key in self._consts:
            return self._consts[key]
        name = self.fresh("K")
        self.namespace[name] = value
        if key is not None:
            self._consts[key] = name
        return name

    def loc(self, location: Location) -> str:
        name = self._locs.get(location)
        if name is None:
            name = self._locs[location] = self.fresh("L")
            self.namespace[name] = location
        return name

    def builtin(self, name: str) -> Builtin | None:
        return self.tree.builtin(name)

    @property
    def builtin_globals(self) -> dict[str, str]:
        """Builtin name -> the global (``B<n>``) the generated code calls it by (a copy)."""
        return dict(self._builtins)

    def builtin_global(self, name: str, builtin: Builtin | None = None) -> str:
        g = self._builtins.get(name)
        if g is None:
            b = builtin if builtin is not None else self.tree.builtin(name)
            assert b is not None
            g = self._builtins[name] = self.fresh("B")
            self.namespace[g] = b.fn
        return g

    def builtin_site(self, name: str, location: Location, builtin: Builtin | None = None) -> str:
        """``C<n>``: the compact form's caller of builtin ``name`` at ``location`` (``C<n>(ctx, *args)``);
        codegen_tiers writes the fast form's inline ``try`` from its :class:`BuiltinSite`."""
        key = (name, location)
        site = self._site_names.get(key)
        if site is None:
            b = builtin if builtin is not None else self.tree.builtin(name)
            assert b is not None
            site = self._site_names[key] = self.fresh("C")
            self.namespace[site] = builtin_call(b.fn, name, location, b.needs_context)
            standard = lookup(name) is b  # (not an extension in the builtin's place)
            self.builtin_sites[site] = BuiltinSite(self.builtin_global(name, b), self.literal(name), self.loc(location), b.needs_context, standard)
        return site

    def builtin_caller(self, name: str) -> str:
        """A ``(ctx, *args)`` callable for builtin ``name`` (used by mocks)."""
        b = self.tree.builtin(name)
        assert b is not None
        fn = b.fn
        loc = None

        if b.needs_context:

            def call(ctx: Any, *args: Any) -> Any:
                return rt_call_builtin(ctx, fn, name, loc, ctx, *args)
        else:

            def call(ctx: Any, *args: Any) -> Any:
                return rt_call_builtin(ctx, fn, name, loc, *args)

        return self.const(call)

    def default_callable(self, op: str, location: Location | None = None) -> str:
        """What a call of ``op`` that a ``with`` may replace runs where no
        replacement is in force; a builtin's error names the call's ``location``."""
        node = self.tree.functions.get(op)
        if node is not None:
            return self.function_name(node)
        if location is not None:
            return self.builtin_site(op, location)
        return self.builtin_caller(op)

    def arity(self, op: str) -> int | None:
        return self.tree.arity(op)

    @property
    def functions(self) -> Callable[[str], bool] | None:
        """Whether a call's name is a function of the policies (None: there are none)."""
        return self.tree.functions.__contains__ if self.tree.functions else None

    def function_name(self, node: RuleNode) -> str:
        return f"F{node.id}"

    def const_member_set(self, t: ast.Term) -> tuple[str, bool] | None:
        """For ``x in <constant array/set>``: a frozenset constant and whether all items are strings."""
        if not isinstance(t, (ast.Array, ast.SetTerm)) or not is_ground(t):
            return None
        values = [ground_value(x) for x in t.items]
        key = tuple(freeze(v) for v in values)
        got = self._member_sets.get(key)
        if got is None:
            all_str = all(type(v) is str for v in values)
            name = self.fresh("K")
            self.namespace[name] = frozenset(key)
            got = self._member_sets[key] = (name, all_str)
        return got

    # -- data references ----------------------------------------------------------

    def data_target(self, path: tuple[ast.Term, ...], passed: list[tuple[RuleNode, int]] | None = None) -> tuple[str, RuleNode, int]:
        """Where ``data.<path>`` is read: ``("rule", node, i)``, the document of
        the rules at ``node`` with ``path[i:]`` inside it (``"function"``: a
        function's name, never a value); ``("base", node, 0)``, base data
        only; ``("tree", node, i)``, a document holding rules, ``path[i:]`` below it.
        ``passed`` gets the nodes with an own part that the path goes through
        (to a child holding rules), each with the index of the key after it:
        their parts belong to the document too (codegen_docs)."""
        cur = self.tree.root
        i = 0
        while i < len(path):
            p = path[i]
            if type(p) is ast.Scalar and path_key(p) in cur.children:  # (a string, or a function's other key: KeyPart)
                cur = cur.children[path_key(p)]
                i += 1
                nxt = path[i] if i < len(path) else None
                below = cur.children.get(path_key(nxt)) if type(nxt) is ast.Scalar else None
                if cur.has_rules() and below is not None and self._has_rules_below(below):
                    if passed is not None and codegen_docs.has_own_part(self, cur):
                        passed.append((cur, i))
                    continue  # a deeper rule defines this part of the document
                if cur.has_rules():
                    return ("function" if cur.kind == FUNCTION else "rule"), cur, i
                continue
            if isinstance(p, ast.Scalar):
                return "base", cur, 0  # below here there are no rules: plain base data
            break
        if not self._has_rules_below(cur):
            return "base", cur, 0
        return "tree", cur, i

    def data_ref(self, em: BodyEmitter, path: tuple[ast.Term, ...], check: bool = True) -> str:
        """The value at ``data.<path>`` (``check``: as for :meth:`BodyEmitter.term`)."""
        passed: list[tuple[RuleNode, int]] = []
        kind, cur, i = self.data_target(path, passed)
        if kind == "function":
            em.w(em.fail)
            return "UNDEF"
        done = codegen_docs.data_ref(self, em, path, (kind, cur, i), passed, check)
        if done is not None:
            return done
        if kind == "base":
            return self._base_data(em, path, check)
        return codegen_docs.rule_or_tree_ref(self, em, path, (kind, cur, i), check)

    def _base_data(self, em: BodyEmitter, path: tuple[ast.Term, ...], check: bool) -> str:
        # Base documents are keyed by strings: ``data[2]`` reads key "2", as in OPA.
        v = em.tmp()
        # (the root document read whole or iterated: without base data's system key)
        em.w(f"{v} = rt_root_base({em.ctx}.data)" if not path or em.has_unbound(path[0]) else f"{v} = {em.ctx}.data")
        return em.walk_path(v, path, data_keys=True, check=check)

    def pure_data_ref(self, ref: ast.Ref) -> bool:
        """Whether reading ``ref`` can neither fail nor have effects: base data,
        or a rule whose only definition is a constant with no body."""
        cur = self.tree.root
        for p in ref.path:
            if type(p) is not ast.Scalar:
                return not self._has_rules_below(cur)
            nxt = cur.children.get(path_key(p))
            if nxt is None:
                return not cur.has_rules()
            cur = nxt
            if cur.has_rules():
                return self._constant_rule(cur)
        return not self._has_rules_below(cur)

    @staticmethod
    def _constant_rule(node: RuleNode) -> bool:
        if node.kind != COMPLETE or len(node.rules) != 1 or node.default is not None:
            return False
        rule = node.rules[0]
        return not rule.body and rule.else_ is None and rule.head.value is not None and is_ground(rule.head.value)

    @staticmethod
    def _check(em: BodyEmitter, v: str, check: bool) -> str:
        em.result_check(v, check)
        return v

    def _has_rules_below(self, node: RuleNode) -> bool:
        known = self._rules_below.get(node.id)
        if known is None:
            known = self._rules_below[node.id] = (
                node.has_rules() or node.is_package or any(self._has_rules_below(c) for c in node.children.values())
            )
        return known

    # -- rules -------------------------------------------------------------------------

    def generate(self) -> None:
        unsafe: list[RegoError] = []  # every document's first, as OPA reports every rule's
        for node in self.tree.nodes.values():
            if node.has_rules():
                if node.kind != FUNCTION:
                    self.rule_functions[node.path] = f"R{node.id}"
                name = f"F{node.id}" if node.kind == FUNCTION else f"R{node.id}"
                constant = self._constant_rule(node)
                if self.closures and deferred.ENABLED and not constant and deferred.can_defer(self, node):
                    self.deferred[name] = self._chunk_nodes[name] = node
                    self.chunks[name] = []  # (its code, if any, once planned)
                    continue
                start = len(self.lines)
                try:
                    wrapper = self.rule_node(node, constant)
                except RegoUnsafeVarError as err:
                    unsafe.extend(getattr(err, "errors", None) or [err])
                    del self.lines[start:]
                    continue
                # Each document's code is compiled by Python on first use
                # (see build): large policy sets load without compiling
                # rules that are never evaluated.
                self.chunks[name] = self.lines[start:]
                self._chunk_nodes[name] = node
                del self.lines[start:]
                if wrapper is not None:
                    self.wrappers[name] = wrapper
        if unsafe:
            from pyrego.compile.rule_checks import raise_all

            raise_all(unsafe)
        self.flush_materializers()

    def materialize_later(self, node: RuleNode) -> None:
        """Have ``N<id>`` of ``node`` written (by :meth:`flush_materializers`: in order of id, each once, no search)."""
        if node.id not in self._materialize_needed:
            self._materialize_needed[node.id] = node
            heapq.heappush(self._materialize_pending, node.id)

    def flush_materializers(self) -> None:
        pending = self._materialize_pending
        while pending:
            nid = heapq.heappop(pending)
            self._materialized.add(nid)
            self.materializer(self._materialize_needed[nid])
        self.lines.extend(self._pending_tables)
        self._pending_tables = []

    def materializer(self, node: RuleNode) -> None:
        self.lines.extend(codegen_docs.materializer_lines(self, node))

    def rule_node(self, node: RuleNode, constant: bool | None = None) -> RuleWrapper | None:
        """Generate a document's code; returns its wrapper, or None where the
        code defines ``R<id>`` itself (``constant``: whether it is a constant
        rule, where known)."""
        if node.kind == FUNCTION:
            return self.function_node(node)
        if constant if constant is not None else self._constant_rule(node):
            value = node.rules[0].head.value
            assert value is not None
            literal = self._value_literal(value)
            return RuleWrapper("complete", node.id, constant=literal, constant_value=self._literal_value(literal, value))
        defs, order, input_decides = self.definitions(node)
        if node.kind in (PARTIAL_SET, PARTIAL_OBJECT):
            if node.default is None and not (node.kind == PARTIAL_OBJECT and self._rules_below_children(node)):
                return RuleWrapper("set" if node.kind == PARTIAL_SET else "object", node.id, defs)
            self.partial_rule_def(node, list(defs), order)
            return None
        conflict = where = default_fn = None
        default, default_value = "UNDEF", UNDEF
        early = early_exit_name(self, node, order, input_decides) if len(defs) > 1 else None  # (OPA's index lookup, where needed)
        if len(defs) > 1 and not one_constant_value(node):  # (one value: OPA stops at the first definition that succeeds)
            conflict, where = self.const(conflict_message(node)), self.const(conflict_locations(self, node, order))
        if node.default is not None:
            value = node.default.head.value
            if value is not None and is_ground(value):
                default = self._value_literal(value)
                default_value = self._literal_value(default, value)
            else:
                default_fn = self.default_value(node)
        return RuleWrapper(
            "complete", node.id, defs, conflict=conflict, where=where, default_fn=default_fn, default=default, default_value=default_value, early_exit=early
        )

    def _literal_value(self, literal: str, term: ast.Term) -> Any:
        """The value of ``literal``, as :meth:`_value_literal` wrote it for ``term``."""
        return term.value if isinstance(term, ast.Scalar) else self.namespace[literal]

    def _rules_below_children(self, node: RuleNode) -> bool:
        return any(child.kind != FUNCTION and self._has_rules_below(child) for child in node.children.values())

    def partial_rule_def(self, node: RuleNode, defs: list[str], order: tuple[int, ...] | None = None) -> None:
        """``R<id>`` of a partial rule as a ``def``: rules deeper down add their
        documents (``a.b.c := 1`` beside ``a[x] := ...``); ``order``: the
        positions of ``defs``' rules (None: their source order)."""
        if codegen_docs.has_own_part(self, node):
            out = codegen_docs.own_part_lines(self, node, defs, TICK_LINE, order)
        else:
            out = [f"def R{node.id}(ctx):", "    c = ctx.cache", f"    r = c.get({node.id}, MISS)", "    if r is not MISS: return r", TICK_LINE]
            out.append("    acc = set()" if node.kind == PARTIAL_SET else "    acc = {}")
            out += [f"    {d}(ctx, acc)" for d in defs]
            out.append("    r = acc" if node.kind == PARTIAL_SET else "    r = rt_obj_done(acc)")
        if node.default is not None:
            value = node.default.head.value
            if value is not None and is_ground(value):
                out.append(f"    if r is UNDEF: r = {self._value_literal(value)}")
            else:
                out.append("    if r is UNDEF:")
                out.append(f"        r = {self.default_value(node)}(ctx)")
        out += [f"    c[{node.id}] = r", "    return r", ""]
        self.lines.extend(out)

    def _value_literal(self, value: ast.Term) -> str:
        if isinstance(value, ast.Scalar):
            return self.literal(value.value)
        return self.const(ground_value(value))

    def default_value(self, node: RuleNode) -> str:
        assert node.default is not None
        rule = node.default
        name = f"DF{node.id}"
        em = self.emitter(self)
        args = rule.head.args or ()
        params = [f"a{i}" for i in range(len(args))]
        em.w("for _ in ONCE:")
        em.indent += 1
        em.fail = "break"
        assert rule.head.value is not None
        if term_vars(rule.head.value, set()) - {v for a in args for v in term_vars(a, set())}:
            raise RegoCompileError("default rule value cannot contain variables", rule.location)
        for a, p in zip(args, params):
            em.unify_value(a, p, rule.location)
        v = em.term(rule.head.value)
        em.w(f"return {v}")
        em.finish()
        self.lines.append(f"def {name}(ctx{''.join(', ' + p for p in params)}):")
        self.lines.extend(em.lines)
        self.lines.append("    return UNDEF")
        self.lines.append("")
        return name

    def definitions(self, node: RuleNode) -> tuple[tuple[str, ...], tuple[int, ...], bool]:
        """The functions of ``node``'s definitions, with OPA's index guards, in OPA's order, their
        positions in source order, and whether the input decides that order. Where all have one constant
        value OPA stops at the first that succeeds, so the order matters (compile.index_order); else it
        decides which error comes first (the plan's)."""
        plan = index_plan(node, self.tree.root, self.tree.functions, self.arity, self.strict_errors)
        defs = each_definition(lambda i, rule: self.definition_or_closure(node, guarded_rule(rule, plan), i), node.rules)
        order, input_decides = None, False
        if len(defs) > 1 and (self.strict_errors or self.tree.calls_print or program_can_conflict(self.tree.root)):
            order, input_decides = definition_order(node, self.tree.root, self.arity)  # (else nothing can raise or print: any order gives one answer)
        if order is None:
            order = plan.order if plan.order is not None and len(plan.order) == len(defs) else tuple(range(len(defs)))
        return tuple(defs[i] for i in order), order, input_decides

    def definition_or_closure(self, node: RuleNode, rule: ast.Rule, index: int) -> str:
        """``D<id>_<n>``: a closure until hot where the shape allows, else code."""
        if self.closures:
            fn = closures.plan_definition(self, node, rule, conflict_message)
            if fn is not None:
                name = f"D{node.id}_{index}"
                self.namespace[name] = fn
                self._closure_nodes.add(node.id)
                return name
        return self.definition(node, rule, index)

    def definition(self, node: RuleNode, rule: ast.Rule, index: int) -> str:
        """One rule (with its else chain) as a function ``D<id>_<n>``."""
        name = f"D{node.id}_{index}"
        em = self.emitter(self)
        kind = node.kind
        params = ["ctx"]
        if kind in (PARTIAL_SET, PARTIAL_OBJECT):
            params.append("acc")
        chain = list(iter_rule_chain(rule))
        # A lone branch needs no `for _ in ONCE` block: failing returns UNDEF.
        once = len(chain) > 1
        for branch in chain:
            self.branch(em, node, branch, once=once)
            if kind in (COMPLETE, FUNCTION) and branch.else_ is not None and em.uses_r:
                em.w("if r is not UNDEF: return r")
        em.finish()
        if kind in (COMPLETE, FUNCTION):
            # `r` only exists where a branch may find a value inside a loop.
            if em.uses_r:
                em.lines.insert(0, "    r = UNDEF")
                em.w("return r")
            elif not (em.lines and em.lines[-1].startswith("    return ")):
                em.w("return UNDEF")
        if kind == FUNCTION:
            params += [f"a{i}" for i in range(node.arity or 0)]
        self.lines.append(f"def {name}({', '.join(params)}):")
        self.lines.extend(em.lines)
        self.lines.append("")
        return name

    def branch(self, em: BodyEmitter, node: RuleNode, rule: ast.Rule, once: bool = True, keyed: int = 0) -> None:
        """Write one rule body and what it adds (``keyed``: its key bound to
        ``key`` first, or with a positive count its path's keys to ``keys``,
        see codegen.set_members)."""
        head = rule.head
        kind = node.kind
        em.rule = rule
        em.node = node
        st = em.state()
        if once:
            em.begin_once()
        base_loops = em.loops
        if kind == FUNCTION:
            for i, a in enumerate(head.args or ()):
                em.unify_value(a, f"a{i}", rule.location)
        required: set[str] = set()
        suffix = codegen_docs.rule_path_suffix(self, em, node, rule)
        for t in [head.key, head.value, *suffix]:
            if t is not None:
                term_vars(t, required)
        late = bind_key(em, node, rule, keyed) if keyed else ()
        em.body(rule.body, required=required, location=head.location)
        if kind == PARTIAL_SET:
            assert head.key is not None
            k = em.term(head.key)
            em.w(f"acc.add({k} if type({k}) is str else freeze({k}))")
        elif kind == PARTIAL_OBJECT and head.value is None:
            # `a.b[x] contains y`: sets at the leaves of an object.
            assert head.key is not None
            keys = [em.term(k) for k in suffix]
            for j, looked_up in late:
                em.guard(f"not rt_eq({keys[j]}, {looked_up})")
            member = em.term(head.key)
            em.w(f"rt_obj_add_member(acc, ({', '.join(keys)},), {member}, {self.loc(head.location)})")
        elif kind == PARTIAL_OBJECT:
            assert head.value is not None
            keys = [em.term(k) for k in suffix]
            for j, looked_up in late:
                em.guard(f"not rt_eq({keys[j]}, {looked_up})")
            v = em.term(head.value)
            if len(keys) == 1:
                put = "rt_obj_put_value" if codegen_docs.tracks_values(self, node) else "rt_obj_put"
                em.w(f"{put}(acc, {keys[0]}, {v}, {self.loc(head.location)})")
            else:
                em.w(f"rt_obj_put_path(acc, ({', '.join(keys)},), {v}, {self.loc(head.location)})")
        else:
            assert head.value is not None
            body_loops = em.loops
            v = em.term(head.value)
            # The value may differ between solutions when the body iterates
            # over variables the value reads, or when the value itself
            # iterates (a relation: ``r := walk(x)`` has a value per pair).
            stable = em.loops == body_loops and (
                em.loops == base_loops or not (term_vars(head.value, set(), closures=True) - set().union(*(term_vars(a, set()) for a in head.args or ())))
            )
            if stable:
                em.returns(v)
            else:
                msg = conflict_message(node)
                em.uses_r = True
                em.w(f"if r is UNDEF: r = {v}")
                em.w(f"elif not rt_eq(r, {v}): rt_conflict({msg!r}, {self.loc(rule.location)})")
        em.restore(st)

    def function_node(self, node: RuleNode) -> RuleWrapper:
        defs, order, input_decides = self.definitions(node)
        conflict = self.const(conflict_message(node))
        where = self.const(conflict_locations(self, node, order))
        default_fn = self.default_value(node) if node.default is not None else None
        first = len(defs) > 1 and one_constant_value(node)  # (OPA then takes the first that succeeds)
        memo = node.id in self.tree.printing_nodes
        early = None if len(defs) < 2 else early_exit_name(self, node, order, input_decides)
        return RuleWrapper(
            "function", node.id, defs, node.arity or 0, conflict=conflict, where=where, default_fn=default_fn, first_only=first, memo=memo, early_exit=early
        )

    # -- queries -----------------------------------------------------------------------

    def query(self, body: ast.Body, names: dict[str, str]) -> Callable[..., Any]:
        """Compile a resolved query into a generator of (bindings, expression values)."""
        # Not while a rule's code is written again for the fast form (_canonical_chunk).
        with LOAD_LOCK:
            return self._query(body, names)

    def _query(self, body: ast.Body, names: dict[str, str]) -> Callable[..., Any]:
        fname = self.fresh("Q")
        em = self.emitter(self)
        em.compact = False  # compiled in the fast form at once
        n = len(body)
        record = {i: f"e{i}" for i in range(n)}
        for i in range(n):
            em.w(f"e{i} = True")
        em.ordered = True
        em.capture_values = n == 1 and not (body_vars(body, set()) - set())
        em.begin_once()
        em.body(body, record=record)
        binds = ", ".join(
            f"{self.literal(user)}: {em.vars[u]}" for u, user in sorted(names.items()) if u in em.vars and u in em.bound
        )
        values = ", ".join(record[i] for i in range(n)) + ("," if n == 1 else "")
        em.w(f"yield ({{{binds}}}, ({values}))")
        start = len(self.lines)
        self.flush_materializers()
        self.lines.append(f"def {fname}(ctx):")
        self.lines.extend(em.lines)
        # A query is compiled once per program and text, and run for every
        # evaluation of it: its code takes the fast form at once.
        self.exec_lines(fast_lines(self.lines[start:], self.builtin_sites, self.wrappers), "<pyrego query>")
        # Neither the query's text nor its name stays with the program: the
        # engines keep the function while they use it (a bounded number).
        del self.lines[start:]
        return self.namespace.pop(fname)  # type: ignore[no-any-return]

    # -- assembly ---------------------------------------------------------------------

    def build(self) -> Program:
        self.generate()
        program = Program(self.namespace, self.tree, self.rule_functions, mockable=self.mockable, gen=self)
        self.namespace["WITH"] = make_with(self.tree)
        self.namespace["CALL_MOCK"] = make_call_mock()
        self.namespace["TICK"] = make_tick(self.promote)
        for name, chunk in self.chunks.items():
            self.namespace[name] = self._lazy(name, chunk)
        codegen_docs.install_own_parts(self)
        if self.lines:
            self.exec_lines(self.lines)
        self.built = True
        return program

    def source(self) -> str:
        """The rules' generated code (compact form; wrappers as comments) and the
        code compiled at build."""
        lines = []
        with LOAD_LOCK:
            for name in list(self.deferred):
                deferred.plan(self, name, closures=False)  # (their code only: what they run stays correct)
        for name, chunk in self.chunks.items():
            node = self._chunk_nodes.get(name)
            lines += self._canonical_chunk(name, compact=True) if node is not None and node.id in self._closure_nodes else chunk
            wrapper = self.wrappers.get(name)
            if wrapper is not None:
                lines.append(wrapper.describe())
        return "\n".join(lines + self.lines)

    def _lazy(self, name: str, chunk: list[str]) -> Callable[..., Any]:
        """A stand-in for ``name`` that compiles its code on first call, then hands over."""
        namespace = self.namespace
        state: dict[str, Any] = {}

        def stub(*args: Any) -> Any:
            real = state.get("fn")
            if real is None:
                real = state["fn"] = self.load(name, chunk)
            return real(*args)

        stub.pyrego_lazy = True  # type: ignore[attr-defined]
        namespace[name] = stub
        return stub

    def fast_chunk(self, name: str) -> list[str]:
        """The fast form of chunk ``name``'s code (its functions and its wrapper's ``def``)."""
        lines = self._canonical_chunk(name)  # (first: a deferred rule gets its wrapper here)
        wrapper = self.wrappers.get(name)
        return fast_lines(lines, self.builtin_sites, self.wrappers) + (wrapper.fast_lines() if wrapper is not None else [])

    def _canonical_chunk(self, name: str, compact: bool = False) -> list[str]:
        """``name``'s code written again, in the canonical shapes (the chunk
        is compact; ``compact``: in the compact form, to show it): the same
        rule, so the same operations, names and constants, one statement for
        each. Definitions that ran as closures get their code here."""
        node = self._chunk_nodes.get(name)
        if node is None or not (self.chunks.get(name) or node.id in self._closure_nodes or name in self.deferred):
            return []  # a wrapper's constant, say: no code of its own
        with LOAD_LOCK:
            deferred.plan(self, name, closures=False)
            saved, self.lines = self.lines, []
            saved_closures, self.closures = self.closures, False
            self.compact = compact
            try:
                self.rule_node(node)
                return self.lines
            finally:
                self.lines = saved
                self.compact = True
                self.closures = saved_closures

    def load(self, name: str, chunk: list[str] | None = None) -> Callable[..., Any]:
        """Compile ``name``'s code if it is still a stand-in; return the real function.

        Only ``name``'s own code: an evaluation often fails before it reads the
        documents ``name`` depends on, which then need never be compiled."""
        fn = self.namespace[name]
        if not getattr(fn, "pyrego_lazy", False):
            return fn  # type: ignore[no-any-return]
        with LOAD_LOCK:
            fn = self.namespace[name]
            if getattr(fn, "pyrego_lazy", False):
                if name in self.deferred:
                    deferred.plan(self, name, closures=not self.hot)
                    chunk = None
                if self.hot:
                    self.exec_lines(self.fast_chunk(name))
                else:
                    lines = chunk if chunk is not None else self.chunks[name]
                    if lines:
                        self.exec_lines(lines)
                    wrapper = self.wrappers.get(name)
                    if wrapper is not None:
                        self.namespace[name] = wrapper.compact(self.namespace)
                        if type(wrapper) is RuleWrapper and wrapper.kind == "complete":
                            # Compact: the entry is the memoising closure (the fast form defines its own).
                            self.namespace[wrapper.entry_name] = self.namespace[name]
                    self._compact_loaded.append(name)
                fn = self.namespace[name]
        return fn  # type: ignore[no-any-return]

    def promote(self) -> None:
        """Recompile the code compiled so far in the fast form (see codegen_tiers)."""
        if self.hot:
            return
        with LOAD_LOCK:
            if self.hot:
                return
            self.hot = True
            # A huge chunk stays compact: its fast form would cost Python's
            # compile() seconds on the caller's path and gain little.
            names = [n for n in self._compact_loaded if sum(map(len, self.chunks.get(n) or ())) <= LARGEST_PROMOTED_CHUNK]
            lines = [line for n in names for line in self.fast_chunk(n)]
            self._compact_loaded = []
            if not lines:
                return
            try:
                self.exec_lines(lines)
            except RegoCompileError:
                pass  # deeper than Python allows in the fast form: the compact code stays

    def exec_lines(self, lines: list[str], filename: str = "<pyrego policy>") -> None:
        source = "\n".join(lines) + "\n"
        try:
            code = compile_source(source, filename)  # compile(), or the on-disk cache
        except (SyntaxError, RecursionError, MemoryError, ValueError) as exc:
            # Python limits nesting (loops, indentation); such policies are too deep to compile.
            raise RegoCompileError(f"policy too deeply nested to compile ({type(exc).__name__}: {exc})") from None
        exec(code, self.namespace)  # noqa: S102 - generated from checked AST only


def generate_program(tree: CompiledTree, mockable: frozenset[str] = frozenset(), strict_errors: bool = False) -> Program:
    """Generate, compile and load the Python code for ``tree`` (``strict_errors``: see compile.eval_order)."""
    return ModuleGen(tree, mockable, strict_errors).build()


__all__ = ["Program", "ModuleGen", "generate_program", "UNDEF", "PARTIAL_SET"]

