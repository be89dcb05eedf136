"""A compiled policy set as the engine holds it: :class:`Program`, the
namespace of generated functions, the rule tree it came from and the queries
compiled for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from pyrego.bounded import BoundedDict
from pyrego.compile.compiler import CompiledTree

if TYPE_CHECKING:
    from pyrego.codegen.generator import ModuleGen

#: Compiled queries a program keeps for the engines that share it.
QUERIES_KEPT = 256


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

    def function(self, name: str) -> Callable[..., Any]:
        """The generated function ``name`` (compiled now if it was not yet)."""
        if self.gen is not None:
            return self.gen.load(name)
        return self.namespace[name]  # type: ignore[no-any-return]
