"""What partial evaluation computes with the engine's normal, compiled code.

Rules that do not depend on the unknowns have one value whatever the
unknowns turn out to be: it is computed by the engine's generated code (the
very functions ``Engine.eval_rule`` runs), so known parts of a policy are
evaluated exactly as in a normal evaluation, errors included. The same goes
for functions called with known arguments and for builtins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyrego.compile.base import FUNCTION, RuleNode, key_value
from pyrego.errors import Location
from pyrego.runtime.helpers import rt_call_builtin
from pyrego.runtime.values import UNDEF, freeze

if TYPE_CHECKING:
    from pyrego.engine_support import CompiledProgram


class KnownDocuments:
    """Known rule documents, base data, function and builtin calls, for one partial evaluation."""

    def __init__(self, compiled: CompiledProgram, input: Any) -> None:
        self.compiled = compiled
        self.program = compiled.code
        self.tree = self.program.tree
        # One evaluation context for the whole partial evaluation: rule values
        # are memoised in it as in one normal evaluation.
        self.ctx = compiled.context(input)
        self._docs: dict[tuple[Any, ...], Any] = {}

    def with_input(self, input: Any) -> KnownDocuments:
        """The same, for another input (``with input... as``)."""
        return KnownDocuments(self.compiled, input)

    def document(self, path: tuple[Any, ...]) -> Any:
        """The value of ``data.<path>`` (rules and base data merged), or UNDEF."""
        got = self._docs.get(path, None)
        if got is None:
            got = self._docs[path] = self._document(path)
        return got

    def _document(self, path: tuple[Any, ...]) -> Any:
        node = self.tree.nodes.get(path) if all(isinstance(p, str) for p in path) else None
        if node is not None and node.has_rules():
            if node.kind == FUNCTION:
                return UNDEF
            name = self.program.rule_functions.get(path)  # type: ignore[arg-type]
            if name is not None:
                return self.program.function(name)(self.ctx)
        base = self.base(path)
        if node is None or not node.children:
            return base
        out: dict[Any, Any] = dict(base) if type(base) is dict else {}
        for key, child in node.children.items():
            if not _has_documents(child):
                continue
            value = self.document(path + (key,))
            if value is not UNDEF:
                out[key_value(key)] = value
        if not out and base is UNDEF and not node.is_package and not _has_documents(node):
            return UNDEF
        return out

    def base(self, path: tuple[Any, ...]) -> Any:
        """Base data at ``path`` (no rules), or UNDEF."""
        cur = self.ctx.data
        for p in path:
            if type(cur) is dict:
                cur = cur.get(freeze(p), UNDEF)
            elif type(cur) in (list, tuple) and type(p) is int and 0 <= p < len(cur):
                cur = cur[p]
            else:
                return UNDEF
            if cur is UNDEF:
                return UNDEF
        return cur

    def call_function(self, node: RuleNode, args: list[Any]) -> Any:
        """The value of the user function at ``node`` for known ``args``, or UNDEF."""
        fn = self.program.function(f"F{node.id}")
        return fn(self.ctx, *args)

    def call_builtin(self, name: str, args: list[Any], location: Location | None) -> Any:
        """The builtin's value for known ``args`` (UNDEF on an error unless strict)."""
        b = self.tree.builtin(name)
        assert b is not None
        if b.needs_context:
            return rt_call_builtin(self.ctx, b.fn, name, location, self.ctx, *args)
        return rt_call_builtin(self.ctx, b.fn, name, location, *args)


def _has_documents(node: RuleNode) -> bool:
    # (a node above a function's is a document, {} where nothing else is in it, as in OPA)
    return node.kind != FUNCTION and any(n.has_rules() for n in node.walk())
