"""What each rule reads: OPA's dependency graph of the rule tree, and its cycles.

:func:`dependency_graph` gives, per rule node, the nodes its rules read (a
call of a function of the policies; a ``data`` ref reads what OPA's
GetRulesDynamic says it may); :func:`first_cycle` finds a rule that reads
itself (OPA's CheckRecursion). The type checker orders rules by the graph.
"""

from __future__ import annotations

from typing import Any

from pyrego.ast.nodes import Scalar
from pyrego.compile.base import CompiledTree, RuleNode, Uses
from pyrego.errors import RegoRecursionError

__all__ = ["dependency_graph", "first_cycle", "node_dependencies", "rules_read"]


def node_dependencies(tree: CompiledTree, uses: Uses, memo: dict[tuple[Any, ...], list[int]] | None = None) -> set[int]:
    """Ids of the rule nodes that a node's rules read, given what they use.

    A ref reads what OPA's dependency graph says it may (GetRulesDynamic): the
    rules along its path, every child where a key is not a constant
    (``data.p[x]``, ``data[_]``), and every rule below where it ends
    (``data.p`` reads the package's rules, ``object.get(data, ...)`` all of
    them). ``memo`` keeps the answer per ref shape across calls."""
    deps: set[int] = set()
    functions = tree.functions
    for call in uses.calls:
        function = functions.get(call.op)
        if function is not None:
            deps.add(function.id)
        else:
            # (``f()`` of a document: OPA's graph has the ref, so the
            # document is typed before the call is checked)
            called = tree.called_document(call.op)
            if called is not None:
                deps.add(called.id)
    root = tree.root
    for ref in uses.data_refs:
        path = ref.path
        if _ground_strings(path):
            # The usual ref, with string keys only: walked directly.
            cur: RuleNode | None = root
            for p in path:
                cur = cur.children.get(p.value)  # type: ignore[union-attr,arg-type]
                if cur is None:
                    break
                if cur.rules or cur.default is not None:  # (RuleNode.has_rules, inline)
                    deps.add(cur.id)
            else:
                if cur is not None and cur.children:
                    deps.update(n.id for n in cur.walk()[1:] if n.has_rules())
            continue
        shape = tuple([p.value if type(p) is Scalar else None for p in path])
        found = memo.get(shape) if memo is not None else None
        if found is None:
            found = rules_read(root, path)
            if memo is not None:
                memo[shape] = found
        deps.update(found)
    return deps


def _ground_strings(path: tuple[Any, ...]) -> bool:
    for p in path:
        if type(p) is not Scalar or type(p.value) is not str:
            return False
    return True


def rules_read(root: RuleNode, path: tuple[Any, ...]) -> list[int]:
    """Ids of the rule nodes a ref ``data<path>`` may read (see :func:`node_dependencies`)."""
    out: list[int] = []
    stack: list[tuple[RuleNode, int]] = [(root, 0)]
    while stack:
        node, i = stack.pop()
        if i >= len(path):
            out.extend([n.id for n in node.walk()[1:] if n.has_rules()])
            continue
        p = path[i]
        if type(p) is Scalar:
            child = node.children.get(p.value) if type(p.value) is str else None
            children = [child] if child is not None else []
        else:
            children = list(node.children.values())
        for child in children:
            if child.has_rules():
                out.append(child.id)
            stack.append((child, i + 1))
    return out


def dependency_graph(tree: CompiledTree, uses: dict[int, Uses]) -> dict[int, set[int]]:
    """What each node reads (by id), given what its rules use."""
    memo: dict[tuple[Any, ...], list[int]] = {}
    return {nid: node_dependencies(tree, node_uses, memo) for nid, node_uses in uses.items()}


def first_cycle(tree: CompiledTree, graph: dict[int, set[int]]) -> RegoRecursionError | None:
    """The error for the first rule that reads itself (in node order), if any."""
    state: dict[int, int] = {}
    for nid in sorted(graph):
        if state.get(nid) is None:
            found = _find_cycle(nid, graph, state, [], tree)
            if found is not None:
                return found
    return None


def _find_cycle(
    start: int, graph: dict[int, set[int]], state: dict[int, int], stack: list[int], tree: CompiledTree
) -> RegoRecursionError | None:
    """Depth-first search from ``start``; the error for a rule that reaches itself.

    A loop with an explicit stack, not recursion: a chain of thousands of
    rules must not run out of Python's stack (and a module-level function,
    not a closure, so that nothing it holds waits for the cyclic collector)."""
    state[start] = 1
    stack.append(start)
    pending = [iter(sorted(graph.get(start, ())))]
    while pending:
        dep = next(pending[-1], None)
        if dep is None:
            pending.pop()
            state[stack.pop()] = 2
            continue
        if state.get(dep) == 1:
            cycle = stack[stack.index(dep) :] + [dep]
            by_id = {n.id: n for n in tree.nodes.values()}
            names = " -> ".join(by_id[i].name for i in cycle)
            first = by_id[dep]
            loc = first.rules[0].location if first.rules else None
            return RegoRecursionError(f"rule {first.name} is recursive: {names}", loc)
        if state.get(dep) is None:
            state[dep] = 1
            stack.append(dep)
            pending.append(iter(sorted(graph.get(dep, ()))))
    return None
