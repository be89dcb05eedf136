"""Loops over constant arrays in a prepared rule's functions (see
:mod:`pyrego.codegen.prepared`): iterated directly, their members' type
known, and skipped at once where a test of values the loop does not change
would skip every iteration."""

from __future__ import annotations

import ast as pyast
import copy
import re
from collections import Counter
from typing import Any

from pyrego.codegen.prepared_passes import load_name


def constant_loops(function: pyast.FunctionDef, namespace: dict[str, Any]) -> None:
    """Loops over a constant array (``t1 = K7`` assigned once, ``K7`` a list):
    the test that it is undefined goes (it never is), the loop iterates it
    directly, and where every member is a string (or every one an integer)
    and the loop's variable is assigned nowhere else, the test of its type
    (``type(i2) is str``) is true."""
    stores = Counter(n.id for n in pyast.walk(function) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load))
    lists: dict[str, list[Any]] = {}
    for n in pyast.walk(function):
        if (
            isinstance(n, pyast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], pyast.Name)
            and stores[n.targets[0].id] == 1
            and isinstance(n.value, pyast.Name)
            and re.fullmatch(r"K\d+", n.value.id)
            and type(namespace.get(n.value.id)) is list
        ):
            lists[n.targets[0].id] = namespace[n.value.id]
    if lists:
        loops = _ConstantLoops(lists, stores)
        loops.visit(function)
        if loops.typed:
            _SkippedLoops(loops.typed, function).visit(function)


class _ConstantLoops(pyast.NodeTransformer):
    """See constant_loops."""

    def __init__(self, lists: dict[str, list[Any]], stores: Counter[str]) -> None:
        self.lists = lists
        self.stores = stores
        self.known: dict[str, type] = {}  # loop variables whose type is known, in the loop
        self.typed: dict[int, tuple[str, type]] = {}  # by id of a loop: its variable, of a type known

    def visit_If(self, node: pyast.If) -> Any:
        test = node.test
        if (
            not node.orelse
            and isinstance(test, pyast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], pyast.Is)
            and isinstance(test.left, pyast.Name)
            and test.left.id in self.lists
            and isinstance(test.comparators[0], pyast.Name)
            and test.comparators[0].id == "UNDEF"
        ):
            return pyast.copy_location(pyast.Pass(), node)
        return self.generic_visit(node)

    def visit_For(self, node: pyast.For) -> Any:
        it = node.iter
        if (
            isinstance(it, pyast.IfExp)
            and isinstance(it.body, pyast.Name)
            and it.body.id in self.lists
            and isinstance(it.test, pyast.Compare)
            and _type_is(it.test, it.body.id, "list")
        ):
            name = it.body.id
            node.iter = pyast.copy_location(load_name(name), it)
            members = self.lists[name]
            kinds = {type(v) for v in members}
            target = node.target
            if len(kinds) == 1 and kinds <= {str, int} and isinstance(target, pyast.Name) and self.stores[target.id] == 1:
                self.known[target.id] = kinds.pop()
                self.typed[id(node)] = (target.id, self.known[target.id])
                node.body = [self.visit(s) for s in node.body]
                del self.known[target.id]
                node.orelse = [self.visit(s) for s in node.orelse]
                return node
        return self.generic_visit(node)

    def visit_Compare(self, node: pyast.Compare) -> Any:
        if (
            len(node.ops) == 1
            and isinstance(node.ops[0], pyast.Is)
            and isinstance(node.left, pyast.Call)
            and isinstance(node.left.func, pyast.Name)
            and node.left.func.id == "type"
            and len(node.left.args) == 1
            and isinstance(node.left.args[0], pyast.Name)
            and node.left.args[0].id in self.known
            and isinstance(node.comparators[0], pyast.Name)
            and node.comparators[0].id == self.known[node.left.args[0].id].__name__
        ):
            return pyast.copy_location(pyast.Constant(value=True), node)
        return self.generic_visit(node)

    def visit_BoolOp(self, node: pyast.BoolOp) -> Any:
        self.generic_visit(node)
        if isinstance(node.op, pyast.And):
            values = [v for v in node.values if not (isinstance(v, pyast.Constant) and v.value is True)]
            if not values:
                return pyast.copy_location(pyast.Constant(value=True), node)
            if len(values) == 1:
                return values[0]
            node.values = values
        return node


class _SkippedLoops(pyast.NodeTransformer):
    """A loop over a constant array (see constant_loops) that a test of
    values the loop does not change (``if t9 is not True: continue``) would
    skip in every iteration, with that test made once before it where nothing
    the iteration does before the test can raise, return or have an effect
    (``if not (t9 is not True): for ...``). Where an ``if`` on such values
    (``if type(t6) is str:``) picks between a step that cannot raise and one
    that can, the loop is written twice, for each answer, so that the first
    may take the tests out.

    What cannot raise: ``is`` tests, ``not``, ``and``, ``or``, ``type(x)``,
    ``s.startswith(p)`` and ``s.endswith(p)`` of strings known to be strings
    (by such an ``if``, or as members of a constant array of strings)."""

    def __init__(self, typed: dict[int, tuple[str, type]], function: pyast.FunctionDef) -> None:
        self.typed = typed
        self.function = function

    def visit_For(self, node: pyast.For) -> Any:
        self.generic_visit(node)
        if id(node) not in self.typed or node.orelse:
            return node
        variable, kind = self.typed[id(node)]
        assigned = _assigned(node)
        known = {variable: kind}
        skip = self._usable(node, *_skip_tests(node.body, known, assigned))
        # An ``if`` on unchanged values of the form ``type(x) is str``, before anything that may raise:
        # the loop where it holds, written with its first branch, may take out more tests.
        for i, statement in enumerate(node.body):
            facts = _type_facts(statement.test, assigned) if isinstance(statement, pyast.If) and statement.orelse else None
            if facts is not None and isinstance(statement, pyast.If):
                taken = copy.deepcopy(node)
                taken.body = [*taken.body[:i], *copy.deepcopy(statement.body), *taken.body[i + 1 :]]
                more = self._usable(node, *_skip_tests(taken.body, {**known, **facts}, assigned))
                if len(more) > len(skip):
                    otherwise = _skipped(node, skip) if skip else node
                    return pyast.copy_location(pyast.If(test=statement.test, body=[_skipped(taken, more)], orelse=[otherwise]), node)
                break
            if not _safe_statement(statement, known, assigned, continues=True):
                break
        return _skipped(node, skip) if skip else node

    def _usable(self, loop: pyast.For, tests: list[pyast.expr], written: set[str]) -> list[pyast.expr]:
        """``tests``, if no local that a skipped iteration assigns (``written``,
        and the loop's variable) is read outside the loop (where a loop not
        run leaves it as it was); else none."""
        written = written | _assigned(loop.target)
        inside = {id(n) for n in pyast.walk(loop)}
        for n in pyast.walk(self.function):
            if isinstance(n, pyast.Name) and n.id in written and isinstance(n.ctx, pyast.Load) and id(n) not in inside:
                return []
        return tests


def _skipped(loop: pyast.For, tests: list[pyast.expr]) -> pyast.stmt:
    """``loop`` behind ``if not (<test>) and ...:``."""
    test = pyast.BoolOp(op=pyast.And(), values=[pyast.UnaryOp(op=pyast.Not(), operand=copy.deepcopy(t)) for t in tests])
    return pyast.copy_location(pyast.If(test=test if len(tests) > 1 else test.values[0], body=[loop], orelse=[]), loop)


def _assigned(node: pyast.AST) -> set[str]:
    return {n.id for n in pyast.walk(node) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}


def _skip_tests(body: list[pyast.stmt], known: dict[str, type], assigned: set[str]) -> tuple[list[pyast.expr], set[str]]:
    """The tests ``T`` of the loop body's ``if T: continue`` steps on values the
    loop does not change, up to the first step that may raise or have an
    effect; and the locals the steps before the last such test assign."""
    tests: list[pyast.expr] = []
    written: set[str] = set()
    before: set[str] = set()
    for statement in body:
        if (
            isinstance(statement, pyast.If)
            and not statement.orelse
            and len(statement.body) == 1
            and isinstance(statement.body[0], pyast.Continue)
            and _safe(statement.test, known)
            and not ({n.id for n in pyast.walk(statement.test) if isinstance(n, pyast.Name)} & assigned)
        ):
            tests.append(statement.test)
            written |= before
            continue
        if not _safe_statement(statement, known, assigned, continues=True):
            break
        before |= _assigned(statement)
    return tests, written


def _safe_statement(statement: pyast.stmt, known: dict[str, type], assigned: set[str], continues: bool) -> bool:
    """Whether ``statement`` cannot raise, return, leave the loop (but by
    ``continue``) or change anything but the loop's locals."""
    if isinstance(statement, pyast.Pass) or (continues and isinstance(statement, pyast.Continue)):
        return True
    if isinstance(statement, pyast.Assign):
        return all(isinstance(t, pyast.Name) for t in statement.targets) and _safe(statement.value, known)
    if isinstance(statement, pyast.If):
        return _safe(statement.test, known) and all(_safe_statement(s, known, assigned, continues) for s in (*statement.body, *statement.orelse))
    return False


def _safe(node: pyast.expr, known: dict[str, type]) -> bool:
    """Whether ``node`` cannot raise nor have an effect (see _SkippedLoops)."""
    for n in pyast.walk(node):
        if isinstance(n, pyast.Compare):
            if not all(isinstance(op, (pyast.Is, pyast.IsNot)) for op in n.ops):
                return False
        elif isinstance(n, pyast.Call):
            func = n.func
            if n.keywords:
                return False
            if isinstance(func, pyast.Name) and func.id == "type" and len(n.args) == 1:
                continue
            if not (
                isinstance(func, pyast.Attribute)
                and func.attr in ("startswith", "endswith")
                and len(n.args) == 1
                and _known_str(func.value, known)
                and _known_str(n.args[0], known)
            ):
                return False
        elif isinstance(n, pyast.Attribute):
            if n.attr not in ("startswith", "endswith"):
                return False
        elif not isinstance(n, (pyast.Name, pyast.Constant, pyast.BoolOp, pyast.UnaryOp, pyast.Load, pyast.And, pyast.Or, pyast.Not, pyast.cmpop)):
            return False
    return True


def _known_str(node: pyast.expr, known: dict[str, type]) -> bool:
    return (isinstance(node, pyast.Name) and known.get(node.id) is str) or (isinstance(node, pyast.Constant) and type(node.value) is str)


def _type_facts(test: pyast.expr, assigned: set[str]) -> dict[str, type] | None:
    """``{x: str}`` for ``type(x) is str`` (``and`` of such), of locals the loop does not assign."""
    parts = test.values if isinstance(test, pyast.BoolOp) and isinstance(test.op, pyast.And) else [test]
    facts: dict[str, type] = {}
    for part in parts:
        left = getattr(part, "left", None)
        argument = left.args[0] if isinstance(left, pyast.Call) and left.args else None
        if not isinstance(argument, pyast.Name) or argument.id in assigned or not _type_is(part, argument.id, "str"):
            return None
        facts[argument.id] = str
    return facts


def _type_is(node: pyast.expr, name: str, kind: str) -> bool:
    """Whether ``node`` is ``type(<name>) is <kind>``."""
    return (
        isinstance(node, pyast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], pyast.Is)
        and isinstance(node.left, pyast.Call)
        and isinstance(node.left.func, pyast.Name)
        and node.left.func.id == "type"
        and len(node.left.args) == 1
        and not node.left.keywords
        and isinstance(node.left.args[0], pyast.Name)
        and node.left.args[0].id == name
        and isinstance(node.comparators[0], pyast.Name)
        and node.comparators[0].id == kind
    )
