"""A compiled policy set as the engine holds it: :class:`Program`, the
namespace of generated functions, the rule tree it came from and the queries
compiled for it."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from pyrego.codegen.bounded import BoundedDict

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen
    from pyrego.compile.base import CompiledTree

#: Compiled queries a program keeps for the engines that share it.
QUERIES_KEPT = 256

#: Rule paths a program keeps the entries of (see Program.paths).
PATHS_KEPT = 256

#: Held while a program's code is compiled or promoted to its fast form
#: (re-entrant: promotion loads functions), and while an entry is read from it.
LOAD_LOCK = threading.RLock()


@dataclass
class Program:
    """A compiled policy set: the namespace of generated functions and its index."""

    namespace: dict[str, Any]
    tree: CompiledTree
    rule_functions: dict[tuple[str, ...], str] = field(default_factory=dict)
    mockable: frozenset[str] = frozenset()
    gen: ModuleGen | None = None
    # Compiled queries, by (query text, v0 flag), the ones used last.
    queries: BoundedDict[Any, Any] = field(default_factory=lambda: BoundedDict(QUERIES_KEPT))
    # Entries worked out once the code is final (see entry): every fresh
    # engine on a cached program asks for the same ones.
    entries: dict[str, Any] = field(default_factory=dict)
    # The same by rule path as engines give it (``data.authz.allow``), for at
    # most PATHS_KEPT paths: a fresh engine on a cached program takes its
    # entry from here in one step. (Without the program: an entry holding it
    # would make a reference cycle.)
    paths: dict[str, tuple[Callable[..., Any], tuple[Callable[..., Any], ...], Any]] = field(default_factory=dict)
    # Read by every fresh engine on the program, so found once: whether a
    # rule is at the root of data (clashing with any data, even none), and
    # whether any rule calls print (an engine then needs a print hook).
    rules_at_root: bool = field(init=False)
    calls_print: bool = field(init=False)

    def __post_init__(self) -> None:
        root = self.tree.nodes.get(())
        self.rules_at_root = root is not None and root.has_rules()
        self.calls_print = self.tree.calls_print

    def __del__(self) -> None:
        # The generated functions and their globals (this namespace) refer to each
        # other. Clearing the namespace when the last holder of the program lets it
        # go frees them at once, instead of leaving a cycle for the cyclic collector
        # (whose full collections then cost more than compiling the policy did).
        self.namespace.clear()

    @property
    def source(self) -> str:
        """The generated source (for inspection; written out on demand)."""
        return self.gen.source() if self.gen is not None else ""

    def entry(self, name: str) -> tuple[Callable[..., Any], tuple[Callable[..., Any], ...], Any] | None:
        """What an evaluation that starts at the rule function ``name`` calls,
        once the code has its final form: ``(fn, more, default)``: ``fn(ctx)``,
        then while the value is undefined each of ``more``, then ``default``
        (UNDEF: none). None while the code may still be recompiled in the
        fast form (see codegen_tiers), which replaces the functions.

        A complete rule starts from its memo-less form (``E<id>``: its memo is
        empty at the start of an evaluation and never read after); one whose
        definitions can only agree (their first defined value is the rule's)
        and whose default is a constant, from its definitions themselves:
        ``E<id>`` would only call them in turn and then put the default in."""
        known = self.entries.get(name)
        if known is not None:
            return known  # type: ignore[no-any-return]
        from pyrego.codegen.tiers import RuleWrapper
        from pyrego.runtime.values import UNDEF

        gen = self.gen
        if gen is None:
            return self.namespace[name], (), UNDEF
        # Under the lock that promotion holds while it recompiles.
        with LOAD_LOCK:
            if not gen.hot:
                return None
            fn = self.function(name)
            wrapper = gen.wrappers.get(name)
            entry: tuple[Callable[..., Any], tuple[Callable[..., Any], ...], Any]
            if type(wrapper) is not RuleWrapper or wrapper.kind != "complete":
                entry = fn, (), UNDEF
            elif wrapper.constant is None and wrapper.conflict is None and wrapper.default_fn is None and wrapper.defs:
                defs = [self.function(d) for d in wrapper.defs]
                entry = defs[0], tuple(defs[1:]), wrapper.default_value
            else:
                entry = self.namespace.get(wrapper.entry_name, fn), (), UNDEF
            self.entries[name] = entry
            return entry

    def function(self, name: str) -> Callable[..., Any]:
        """The generated function ``name`` (compiled now if it was not yet)."""
        if self.gen is not None:
            return self.gen.load(name)
        return self.namespace[name]  # type: ignore[no-any-return]
