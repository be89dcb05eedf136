"""Runtime support for ``with`` modifiers.

``expr with input.x as v with data.a.b as w with f as g`` evaluates ``expr``
in a derived context: input and base data are patched copy-on-write (the
caller's objects are never mutated), rule documents under a replaced data path
are pre-seeded in the new context's memo cache (so the rules see the
replacement), and replaced functions are looked up by calls that the compiler
marked as mockable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .runtime.context import EvalContext
from .runtime.values import UNDEF, freeze

if TYPE_CHECKING:
    from .compiler import CompiledTree


def rt_path(value: Any, path: tuple[str, ...]) -> Any:
    """``value.p1.p2...`` or UNDEF."""
    for p in path:
        if type(value) is not dict:
            return UNDEF
        value = value.get(p, UNDEF)
        if value is UNDEF:
            return UNDEF
    return value


def rt_node_child(ctx: EvalContext, children: dict[str, Callable[..., Any]], key: Any, base_path: tuple[str, ...]) -> Any:
    """``data.<node>[key]`` for a computed key: only the named child document is evaluated."""
    if type(key) is str:
        fn = children.get(key)
        if fn is not None:
            return fn(ctx)
    elif type(key) is int:
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


def make_call_mock() -> Callable[..., Any]:
    def call_mock(ctx: EvalContext, name: str, default: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        funcs = ctx.functions
        if funcs:
            replacement = funcs.get(name)
            if replacement is not None:
                # A replacement runs with no mocks in force: inside it, the
                # replaced function (and any other) is the original, as in OPA.
                plain = ctx.derive()
                plain.functions = None
                return replacement(plain, *args)
        return default(ctx, *args)

    return call_mock


def make_with(tree: CompiledTree, namespace: dict[str, Any]) -> Callable[..., EvalContext]:
    """The ``WITH(ctx, entries)`` helper for one compiled program."""
    rule_nodes: list[tuple[tuple[str, ...], int]] | None = None  # listed on first use: most programs never use ``with``

    def with_(ctx: EvalContext, entries: tuple[tuple[str, Any, Any], ...]) -> EvalContext:
        nonlocal rule_nodes
        if rule_nodes is None:
            rule_nodes = [(n.path, n.id) for n in tree.nodes.values() if n.has_rules() and n.kind != "function"]
        new = ctx.derive()
        for kind, path, value in entries:
            if kind == "input":
                new.input = patch(new.input, path, value)
            elif kind == "func":
                funcs = dict(new.functions or {})
                funcs[path] = value
                new.functions = funcs
            else:
                new.data = patch(new.data, path, value)
                n = len(path)
                for node_path, nid in rule_nodes:
                    if node_path[:n] == path:
                        new.cache[nid] = rt_path(value, node_path[n:]) if type(value) is dict or n == len(node_path) else UNDEF
                    elif path[: len(node_path)] == node_path:
                        current = namespace[f"R{nid}"](new)
                        new.cache[nid] = patch(current if current is not UNDEF else {}, path[len(node_path) :], value)
                # Documents built from replaced parts must be rebuilt.
                for key in [k for k in new.cache if type(k) is int and k < 0]:
                    del new.cache[key]
        return new

    return with_
