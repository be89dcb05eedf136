"""graph.reachable and graph.reachable_paths (OPA's ``reachable.go``).

A graph is an object from node to an array or set of neighbours; nodes may
be any value (object keys and set members are frozen, see ``values``).

Both stop at the evaluation's deadline: a graph can have exponentially many
paths.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from pyrego.builtins.limits import Deadline
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import OperandTypeError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import ArrayKey, freeze


def _vertices(collection: Any) -> list[Any]:
    """The frozen members of an array or set of vertices (anything else: none)."""
    t = type(collection)
    if t is list or t is tuple:
        return [freeze(v) for v in collection]
    if t is set or t is frozenset:
        return list(collection)
    return []


def _operands(graph: Any, initial: Any) -> list[Any]:
    if type(graph) is not dict:
        raise operand_error(1, graph, "object")
    t = type(initial)
    if t is not list and t is not tuple and t is not set and t is not frozenset:
        raise OperandTypeError(f"operand 2 must be {{array, set}} but got {_type(initial)}")
    return _vertices(initial)


def _type(x: Any) -> str:
    from pyrego.runtime.values import type_name

    return type_name(x)


_MISSING = object()


@builtin("graph.reachable", 2, cancellable=True)
def graph_reachable(ctx: EvalContext, graph: Any, initial: Any) -> frozenset[Any]:
    queue = deque(_operands(graph, initial))
    reached: set[Any] = set()
    deadline = Deadline(ctx) if len(graph) > 64 else None
    while queue:
        node = queue.popleft()
        edges = graph.get(node, _MISSING)
        if edges is _MISSING:
            continue  # not in the graph: not reached
        neighbors = _vertices(edges)
        if deadline is not None:
            deadline.tick(len(neighbors) + 1)
        for neighbor in neighbors:
            if neighbor not in reached:
                queue.append(neighbor)
        reached.add(node)
    return frozenset(reached)


@builtin("graph.reachable_paths", 2, cancellable=True)
def graph_reachable_paths(ctx: EvalContext, graph: Any, initial: Any) -> frozenset[Any]:
    roots = _operands(graph, initial)
    paths: set[Any] = set()
    deadline = Deadline(ctx)

    def build(start: Any, first: Any) -> None:
        # depth-first over (node, path so far, nodes on the path), without recursion
        stack: list[tuple[Any, tuple[Any, ...], frozenset[Any]]] = [(start, (first,), frozenset([first]))]
        while stack:
            root, path, reached = stack.pop()
            deadline.tick(len(path) + 1)
            edges = graph.get(root, _MISSING)
            if edges is _MISSING:
                paths.add(ArrayKey(path))  # a node outside the graph ends the path before it
                continue
            path = (*path, root)
            neighbors = _vertices(edges)
            if not neighbors:
                paths.add(ArrayKey(path))
                continue
            reached = reached | {root}
            for n in neighbors:
                if n in reached:
                    paths.add(ArrayKey(path))  # a cycle ends the path
                else:
                    stack.append((n, path, reached))

    for node in roots:
        edges = graph.get(node, _MISSING)
        if edges is _MISSING:
            continue
        neighbors = _vertices(edges)
        if neighbors:
            for n in neighbors:
                build(n, node)
        else:
            paths.add(ArrayKey((node,)))
    return frozenset(paths)
