"""Runtime support for ``with`` modifiers.

``expr with input.x as v with data.a.b as w with f as g`` evaluates ``expr``
in a derived context: input and base data are patched copy-on-write (the
caller's objects are never mutated), rule documents under a replaced data path
are pre-seeded in the new context's memo cache (so the rules see the
replacement), and replaced functions are looked up by calls that the compiler
marked as mockable.

Replaced rule documents stay in force in every context derived from the one
that replaced them (a nested ``with``, the body of a function replacement),
as in OPA: a derived context starts its memo cache from them (see
:func:`derive`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from pyrego.errors import Location, RegoError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.docs import own_key, rt_path
from pyrego.runtime.values import UNDEF, freeze

if TYPE_CHECKING:
    from pyrego.compile.base import CompiledTree



def rt_node_child(ctx: EvalContext, children: dict[str, Callable[..., Any]], key: Any, base_path: tuple[str, ...]) -> Any:
    """``data.<node>[key]`` for a computed key: only the named child document is evaluated."""
    if type(key) is str:
        fn = children.get(key)
        if fn is not None:
            return fn(ctx)
    else:
        # (a function's other constant key, a[1].x: its node's document)
        fn = children.get(freeze(key)) if type(key) in (int, float, bool) or key is None else None
        if fn is not None:
            return fn(ctx)
        if type(key) is int:
            key = str(key)
    base = rt_path(ctx.data, base_path)
    if type(base) is dict:
        return base.get(key if type(key) is str else freeze(key), UNDEF)
    return UNDEF


def patch(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with ``new`` at ``path`` (objects created as needed)."""
    if not path:
        return new
    base = dict(value) if type(value) is dict else {}
    key = path[0] if type(path[0]) is str else freeze(path[0])
    base[key] = patch(base.get(key, UNDEF), path[1:], new)
    return base


def rt_const_fn(value: Any) -> Callable[..., Any]:
    """A function replacement that returns ``value`` whatever the arguments."""

    def const(ctx: Any, *args: Any) -> Any:
        return value

    return const


# The key in a context's memo cache of the rule documents replaced by ``with``
# (rule id -> value). Rule ids are ints, so a string key never collides.
REPLACED = "with"


def derive(ctx: EvalContext) -> EvalContext:
    """A context for a ``with`` expression or a function replacement: a fresh
    memo cache, holding the rule documents replaced in ``ctx``."""
    new = ctx.derive()
    replaced = ctx.cache.get(REPLACED)
    if replaced is not None:
        new.cache.update(replaced)
        new.cache[REPLACED] = replaced
    return new


def make_call_mock() -> Callable[..., Any]:
    def call_mock(ctx: EvalContext, name: str, default: Callable[..., Any], args: tuple[Any, ...], location: Location | None = None) -> Any:
        funcs = ctx.functions
        if funcs:
            replacement = funcs.get(name)
            if replacement is not None:
                # A replacement runs with no function mocks in force: inside
                # it, the replaced function (and any other) is the original,
                # as in OPA; replaced input, data and rules still hold.
                plain = derive(ctx)
                plain.functions = None
                try:
                    return replacement(plain, *args)
                except RegoError as exc:
                    if exc.location is not None or location is None:
                        raise
                    # (a builtin in the function's place: its error is the call's, as in OPA)
                    raise type(exc)(exc.message, location, code=exc.code) from None
        return default(ctx, *args)

    return call_mock


def make_with(tree: CompiledTree) -> Callable[..., EvalContext]:
    """The ``WITH(ctx, entries)`` helper for one compiled program."""
    rule_nodes: list[tuple[tuple[str, ...], int]] | None = None  # listed on first use: most programs never use ``with``

    def with_(ctx: EvalContext, entries: tuple[tuple[str, Any, Any], ...]) -> EvalContext:
        nonlocal rule_nodes
        if rule_nodes is None:
            rule_nodes = [(n.path, n.id) for n in tree.nodes.values() if n.has_rules() and n.kind != "function"]
        new = derive(ctx)
        replaced: dict[Any, Any] | None = None
        for kind, path, value in entries:
            if kind == "input":
                new.input = patch(new.input, path, value)
            elif kind == "func":
                funcs = dict(new.functions or {})
                funcs[path] = value
                new.functions = funcs
            else:
                new.data = patch(new.data, path, value)
                if replaced is None:
                    # Copied: the context this one derives from keeps its own.
                    replaced = dict(new.cache.get(REPLACED) or ())
                n = len(path)
                # A path inside a rule's document is refused at compile time
                # (with_checks): only documents at or below the path change.
                for node_path, nid in rule_nodes:
                    if node_path[:n] == path:
                        doc = rt_path(value, node_path[n:]) if type(value) is dict or n == len(node_path) else UNDEF
                        new.cache[nid] = replaced[nid] = doc
                        new.cache[own_key(nid)] = replaced[own_key(nid)] = doc  # (its rules' own part too)
        if replaced is not None:
            new.cache[REPLACED] = replaced
        return new

    return with_
