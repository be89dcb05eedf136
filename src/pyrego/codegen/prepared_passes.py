"""Passes over the syntax tree of a prepared rule's functions (see
:mod:`pyrego.codegen.prepared`), each exact for any policy: a type test asked
once, a copy of the input read as the input, a called rule's definition
folded into its memoising function, the memo looked in before a call, a
called rule that one call reaches written at that call, the leading steps
consecutive definitions share taken once. (Loops: codegen/prepared_loops.py.)"""

from __future__ import annotations

import ast as pyast
import copy
import re
from collections import Counter
from typing import Any

#: A definition function (``D4_0``).
DEFINITION = re.compile(r"D(\d+)_\d+")
#: The program's rule functions, which take the context first (``R4(ctx)``, ``D4_0(ctx, acc)``).
RULE_FUNCTION = re.compile(r"[RDE](\d+)(?:_\d+)?")
#: The memo's name in the rewritten functions.
MEMO = "m"


def load_name(name: str) -> pyast.Name:
    """A read of the variable ``name``."""
    return pyast.Name(id=name, ctx=pyast.Load())


def type_of(name: str) -> pyast.Call:
    """``type(<name>)``."""
    return pyast.Call(func=load_name("type"), args=[load_name(name)], keywords=[])


def type_tests_once(function: pyast.FunctionDef) -> None:
    """``type(t) is dict``, asked again and again of one local assigned once at
    the top of ``function`` (each literal-key lookup in it asks), or of an
    argument never assigned, asked once: ``t_dict = type(t) is dict`` after
    the assignment (first of all for an argument), then that local."""
    stores = Counter(n.id for n in pyast.walk(function) if isinstance(n, pyast.Name) and isinstance(n.ctx, pyast.Store))
    tests = Counter(name for name in map(_dict_test_of, pyast.walk(function)) if name is not None)
    top = {s.targets[0].id for s in function.body if isinstance(s, pyast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], pyast.Name)}
    arguments = {a.arg for a in function.args.args}
    flags = {
        name: f"{name}_dict"
        for name, count in tests.items()
        if count >= 2 and ((stores[name] == 1 and name in top) or (stores[name] == 0 and name in arguments))
    }
    if not flags:
        return
    _DictTests(flags).visit(function)
    body: list[pyast.stmt] = []
    def flag(name: str, where: pyast.stmt) -> pyast.stmt:
        test = pyast.Compare(
            left=type_of(name),
            ops=[pyast.Is()],
            comparators=[load_name("dict")],
        )
        return pyast.copy_location(pyast.Assign(targets=[pyast.Name(id=flags[name], ctx=pyast.Store())], value=test), where)

    # (Trees built here, never parsed: parsing holds the ast lock, see codegen/python_ast.py.)
    body += [flag(name, function.body[0]) for name in sorted(flags.keys() & arguments)]  # (an argument's test first of all)
    for statement in function.body:
        body.append(statement)
        if isinstance(statement, pyast.Assign) and isinstance(statement.targets[0], pyast.Name):
            name = statement.targets[0].id
            if name in flags:
                body.append(flag(name, statement))
    function.body = body


def _dict_test_of(node: pyast.AST) -> str | None:
    """The local ``t`` when ``node`` is ``type(t) is dict``."""
    if (
        isinstance(node, pyast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], pyast.Is)
        and isinstance(node.comparators[0], pyast.Name)
        and node.comparators[0].id == "dict"
        and isinstance(node.left, pyast.Call)
        and isinstance(node.left.func, pyast.Name)
        and node.left.func.id == "type"
        and len(node.left.args) == 1
        and isinstance(node.left.args[0], pyast.Name)
    ):
        return node.left.args[0].id
    return None


class _DictTests(pyast.NodeTransformer):
    """``type(t) is dict`` as the local ``flags[t]``."""

    def __init__(self, flags: dict[str, str]) -> None:
        self.flags = flags

    def visit_Compare(self, node: pyast.Compare) -> pyast.AST:
        flag = self.flags.get(_dict_test_of(node) or "")
        if flag is not None:
            return pyast.copy_location(load_name(flag), node)
        return self.generic_visit(node)


def fold_definitions(functions: list[pyast.FunctionDef]) -> None:
    """A called rule's memoising function (``R4``) that calls one definition
    function (``D4_0(input, m)``, once, at its top level) takes that
    function's body in place of the call: each ``return X`` there becomes
    ``r = X`` (the call's target, if any) followed by what the memoising
    function does after the call (put the value in the memo, return it). One
    Python call per rule rather than two. The definition function stays (the
    memo-less ``E4`` calls it)."""
    by_name = {f.name: f for f in functions}
    for wrapper in functions:
        if not re.fullmatch(r"R\d+", wrapper.name):
            continue
        calls = [n for n in pyast.walk(wrapper) if isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) and RULE_FUNCTION.fullmatch(n.func.id)]
        if len(calls) != 1 or calls[0].keywords:
            continue
        call = calls[0]
        definition = by_name.get(call.func.id)  # type: ignore[attr-defined]
        if definition is None or definition is wrapper or not DEFINITION.fullmatch(definition.name):
            continue
        at = [i for i, s in enumerate(wrapper.body) if _calls_at_top(s, call)]
        params = definition.args
        names = [a.id if isinstance(a, pyast.Name) else None for a in call.args]
        if len(at) != 1 or params.vararg or params.kwarg or params.kwonlyargs or params.defaults or params.posonlyargs or names != [a.arg for a in params.args]:
            continue
        i = at[0]
        statement = wrapper.body[i]
        wrapper_locals = {n.id for n in pyast.walk(wrapper) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}
        definition_names = {n.id for n in pyast.walk(definition) if isinstance(n, pyast.Name)} | {n.name for n in pyast.walk(definition) if isinstance(n, pyast.ExceptHandler) and n.name}
        if any(isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) and n.func.id == definition.name for n in pyast.walk(definition)):
            continue
        # The memoising function's own locals the definition also names (``r``) take other names.
        renames = {name: f"{name}_{wrapper.name}" for name in (wrapper_locals - set(names)) & definition_names}
        if set(renames.values()) & (definition_names | wrapper_locals):
            continue
        for n in pyast.walk(wrapper):
            if isinstance(n, pyast.Name) and n.id in renames:
                n.id = renames[n.id]
        target = statement.targets[0].id if isinstance(statement, pyast.Assign) else None  # type: ignore[attr-defined]
        rest = wrapper.body[i + 1 :]
        body = _ReturnsContinue(target, rest).visit(pyast.Module(body=copy.deepcopy(definition.body), type_ignores=[])).body
        end = [pyast.Assign(targets=[pyast.Name(id=target, ctx=pyast.Store())], value=pyast.Constant(value=None))] if target is not None else []
        wrapper.body = [*wrapper.body[:i], *body, *end, *rest]


def _calls_at_top(statement: pyast.stmt, call: pyast.Call) -> bool:
    """Whether ``statement`` is ``call`` as a statement, or ``name = call``."""
    if isinstance(statement, pyast.Expr):
        return statement.value is call
    return (
        isinstance(statement, pyast.Assign)
        and statement.value is call
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], pyast.Name)
    )


class _ReturnsContinue(pyast.NodeTransformer):
    """A definition's ``return X`` as ``target = X`` (or ``X``, evaluated for
    nothing, where there is no target) then the statements ``rest`` of the
    memoising function (see fold_definitions); ``return None`` after them if
    they do not return."""

    def __init__(self, target: str | None, rest: list[pyast.stmt]) -> None:
        self.target = target
        self.rest = rest

    def visit_Return(self, node: pyast.Return) -> Any:
        value = node.value if node.value is not None else pyast.Constant(value=None)
        out: list[pyast.stmt] = []
        if self.target is not None:
            out.append(pyast.Assign(targets=[pyast.Name(id=self.target, ctx=pyast.Store())], value=value))
        elif not isinstance(value, (pyast.Name, pyast.Constant)):
            out.append(pyast.Expr(value=value))
        out += copy.deepcopy(self.rest)
        if not out or not isinstance(out[-1], pyast.Return):
            out.append(pyast.Return(value=pyast.Constant(value=None)))
        return [pyast.copy_location(s, node) for s in out]


class MemoProbes(pyast.NodeTransformer):
    """A call of a called rule's memoising function (``R4(input, m)``) whose
    first step is ``if 4 in m: return m[4]`` (through ``c = m``) as
    ``m[4] if 4 in m else R4(input, m)``: no call where the memo holds it."""

    def __init__(self, functions: list[pyast.FunctionDef]) -> None:
        self.keys = {f.name: key for f in functions if re.fullmatch(r"R\d+", f.name) and (key := _memo_key(f)) is not None}

    def visit_Call(self, node: pyast.Call) -> pyast.AST:
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, pyast.Name) and func.id in self.keys and len(node.args) == 2 and all(isinstance(a, pyast.Name) for a in node.args)):
            return node
        if node.args[0].id != "input" or node.args[1].id != MEMO:  # type: ignore[attr-defined]
            return node
        key = self.keys[func.id]
        probe = pyast.IfExp(
            test=pyast.Compare(left=pyast.Constant(value=key), ops=[pyast.In()], comparators=[load_name(MEMO)]),
            body=pyast.Subscript(value=load_name(MEMO), slice=pyast.Constant(value=key), ctx=pyast.Load()),
            orelse=node,
        )
        return pyast.copy_location(probe, node)


def _memo_key(function: pyast.FunctionDef) -> int | None:
    """``K`` where ``function`` (of ``input, m``) starts ``c = m`` then ``if K in c: return c[K]``."""
    args = [a.arg for a in function.args.args]
    if args != ["input", MEMO] or len(function.body) < 2:
        return None
    first, second = function.body[0], function.body[1]
    if not (
        isinstance(first, pyast.Assign)
        and len(first.targets) == 1
        and isinstance(first.targets[0], pyast.Name)
        and isinstance(first.value, pyast.Name)
        and first.value.id == MEMO
    ):
        return None
    alias = first.targets[0].id
    if not (
        isinstance(second, pyast.If)
        and not second.orelse
        and len(second.body) == 1
        and isinstance(second.test, pyast.Compare)
        and len(second.test.ops) == 1
        and isinstance(second.test.ops[0], pyast.In)
        and isinstance(second.test.left, pyast.Constant)
        and type(second.test.left.value) is int
        and isinstance(second.test.comparators[0], pyast.Name)
        and second.test.comparators[0].id == alias
    ):
        return None
    key = second.test.left.value
    ret = second.body[0]
    if not (
        isinstance(ret, pyast.Return)
        and isinstance(ret.value, pyast.Subscript)
        and isinstance(ret.value.value, pyast.Name)
        and ret.value.value.id == alias
        and isinstance(ret.value.slice, pyast.Constant)
        and ret.value.slice.value == key
        and type(ret.value.slice.value) is int
    ):
        return None
    # (The alias must still be the memo when the test runs: nothing between.)
    return key


def share_prefixes(blocks: list[list[pyast.stmt]], depth: int = 4) -> list[pyast.stmt]:
    """Definitions written in turn into one function (each a block that a
    ``break`` leaves for the next: ``while True: <block> break``), where
    consecutive blocks begin with the same steps, with those steps taken once:
    ``while True: <shared steps> (while True: <rest of block> break)... break``.

    A shared step is a lookup or a test (``t2 = t1.get('k', UNDEF) if ...``,
    ``if t2 != 'x': break``) of values that do not change: taken again in a
    later block it would compute what the first block computed (and raise
    what it raised, ending the evaluation first). A test that leaves the first
    block would leave every one of them, so it leaves them all. The steps
    must assign locals that no block's rest assigns again. ``depth``: how
    many levels of such blocks at most (Python allows 20 nested blocks)."""
    if depth == 0:
        return [_loop(block) for block in blocks]
    out: list[pyast.stmt] = []
    i = 0
    while i < len(blocks):
        # The next block and those after it that begin with a step it begins with, as far as all do.
        shared = _shareable(blocks[i])
        j = i + 1
        while j < len(blocks) and (k := _common(shared, blocks[j])) > 0:
            shared = shared[:k]
            j += 1
        group = blocks[i:j]
        k = _unassigned_after(shared, group)
        if len(group) < 2 or k == 0:
            out.append(_loop(blocks[i]))
            i += 1
            continue
        # (The rests may share more among themselves.)
        out.append(_loop([*shared[:k], *share_prefixes([block[k:] for block in group], depth - 1)]))
        i = j
    return out


def _loop(body: list[pyast.stmt]) -> pyast.While:
    return pyast.While(test=pyast.Constant(value=True), body=[*body, pyast.Break()], orelse=[])


def _common(shared: list[pyast.stmt], block: list[pyast.stmt]) -> int:
    k = 0
    while k < len(shared) and k < len(block) and pyast.dump(shared[k]) == pyast.dump(block[k]):
        k += 1
    return k


def _unassigned_after(shared: list[pyast.stmt], group: list[list[pyast.stmt]]) -> int:
    """How many of the ``shared`` steps can be shared: as many as assign only
    locals that no block of ``group`` assigns after them."""
    k = len(shared)
    while k > 0:
        names = {n.id for s in shared[:k] for n in pyast.walk(s) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}
        later = {n.id for block in group for s in block[k:] for n in pyast.walk(s) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}
        if not names & later:
            return k
        k -= 1
    return 0


def _shareable(block: list[pyast.stmt]) -> list[pyast.stmt]:
    """The leading steps of ``block`` that may be shared (see share_prefixes)."""
    out: list[pyast.stmt] = []
    for statement in block:
        if isinstance(statement, pyast.Pass):
            pass
        elif isinstance(statement, pyast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], pyast.Name):
            if not _steady(statement.value):
                break
        elif isinstance(statement, pyast.If) and not statement.orelse and len(statement.body) == 1 and isinstance(statement.body[0], pyast.Break):
            if not _steady(statement.test):
                break
        else:
            break
        out.append(statement)
    return out


# Functions whose value depends only on their operands (a lookup, a type, Rego's equality or membership).
_STEADY_CALLS = frozenset(("type", "rt_get", "rt_member", "rt_eq", "len"))
_STEADY_NODES = (
    pyast.Name, pyast.Constant, pyast.Compare, pyast.BoolOp, pyast.UnaryOp, pyast.IfExp, pyast.Load,
    pyast.And, pyast.Or, pyast.Not, pyast.cmpop, pyast.Subscript,
)


def _steady(node: pyast.expr) -> bool:
    """Whether ``node`` computes the same each time from the same locals: no
    assignment, and calls only of the functions above or ``x.get``, and of a
    called rule's memoising function (``R4(input, m)``: its value is in the
    memo after the first call)."""
    for n in pyast.walk(node):
        if isinstance(n, pyast.Call):
            func = n.func
            if n.keywords or not (
                (isinstance(func, pyast.Name) and (func.id in _STEADY_CALLS or re.fullmatch(r"R\d+", func.id)))
                or (isinstance(func, pyast.Attribute) and func.attr == "get" and isinstance(func.value, pyast.Name))
            ):
                return False
        elif isinstance(n, pyast.Attribute):
            if not (n.attr == "get" and isinstance(n.ctx, pyast.Load)):
                return False
        elif not isinstance(n, _STEADY_NODES):
            return False
    return True


def input_copies(function: pyast.FunctionDef) -> None:
    """A local that only ever takes the input (``t1 = input``) read as
    ``input`` itself, the copy gone (``input`` is never assigned)."""
    stores: dict[str, list[pyast.AST]] = {}
    for n in pyast.walk(function):
        if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load):
            stores.setdefault(n.id, []).append(n)
    if "input" in stores or not any(a.arg == "input" for a in function.args.args):
        return
    copies = {
        s.targets[0].id
        for s in pyast.walk(function)
        if isinstance(s, pyast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], pyast.Name)
        and isinstance(s.value, pyast.Name)
        and s.value.id == "input"
    }
    # Every assignment of such a local must be such a copy.
    copy_stores = {
        id(s.targets[0])
        for s in pyast.walk(function)
        if isinstance(s, pyast.Assign) and len(s.targets) == 1 and isinstance(s.value, pyast.Name) and s.value.id == "input"
    }
    copies = {name for name in copies if all(id(n) in copy_stores for n in stores[name])}
    if copies:
        _InputCopies(copies).visit(function)


class _InputCopies(pyast.NodeTransformer):
    """See input_copies."""

    def __init__(self, copies: set[str]) -> None:
        self.copies = copies

    def visit_Assign(self, node: pyast.Assign) -> Any:
        if len(node.targets) == 1 and isinstance(node.targets[0], pyast.Name) and node.targets[0].id in self.copies:
            return pyast.copy_location(pyast.Pass(), node)
        return self.generic_visit(node)

    def visit_Name(self, node: pyast.Name) -> Any:
        if node.id in self.copies and isinstance(node.ctx, pyast.Load):
            return pyast.copy_location(load_name("input"), node)
        return node


def inline_single_calls(entries: list[pyast.FunctionDef], functions: list[pyast.FunctionDef]) -> None:
    """A called rule's memoising function (``R5``, see MemoProbes) that
    evaluation reaches from one call only (``t1 = m[5] if 5 in m else
    R5(input, m)``, a statement), written at that call:
    ``if 5 in m: t1 = m[5]`` ``else: while True: <its body>``, its locals
    renamed, each ``return X`` as ``t1 = X; break``. Only where no return
    of its body is inside a loop (a ``break`` there would leave that loop)."""
    by_name = {f.name: f for f in functions}
    reachable: list[pyast.FunctionDef] = []
    seen: set[str] = set()
    pending = list(entries)
    while pending:
        function = pending.pop()
        reachable.append(function)
        for n in pyast.walk(function):
            if isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) and n.func.id in by_name and n.func.id not in seen:
                seen.add(n.func.id)
                pending.append(by_name[n.func.id])
    sites: dict[str, list[tuple[pyast.FunctionDef, pyast.Assign]]] = {}
    calls: Counter[str] = Counter()
    for function in reachable:
        for n in pyast.walk(function):
            if isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name):
                calls[n.func.id] += 1
            site = _probe_site(n)
            if site is not None:
                sites.setdefault(site, []).append((function, n))  # type: ignore[arg-type]
    for name, found in sites.items():
        callee = by_name[name]
        key = _memo_key(callee)
        if len(found) != 1 or calls[name] != 1 or key is None or found[0][0] is callee or _returns_in_loop(callee.body[2:]):
            continue
        function, statement = found[0]
        target = statement.targets[0].id  # type: ignore[attr-defined]
        body = copy.deepcopy(callee.body[2:])
        local = {n.id for s in body for n in pyast.walk(s) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}
        local |= {n.name for s in body for n in pyast.walk(s) if isinstance(n, pyast.ExceptHandler) and n.name}
        local |= {n.id for n in pyast.walk(callee.body[0]) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}
        local -= {"input", MEMO}
        renames = {v: f"{v}_{name}" for v in local}
        everywhere = {n.id for n in pyast.walk(function) if isinstance(n, pyast.Name)}
        if set(renames.values()) & everywhere:
            continue
        alias = callee.body[0]
        prelude = [copy.deepcopy(alias)]
        module = pyast.Module(body=[*prelude, *body], type_ignores=[])
        for n in pyast.walk(module):
            if isinstance(n, pyast.Name) and n.id in renames:
                n.id = renames[n.id]
            elif isinstance(n, pyast.ExceptHandler) and n.name in renames:
                n.name = renames[n.name]
        inlined = _ReturnsLeave(target).visit(module).body
        # (Falling off the end: None.)
        end = [pyast.Assign(targets=[pyast.Name(id=target, ctx=pyast.Store())], value=pyast.Constant(value=None)), pyast.Break()]
        probe = statement.value
        assert isinstance(probe, pyast.IfExp)
        replacement = pyast.If(
            test=probe.test,
            body=[pyast.Assign(targets=[pyast.Name(id=target, ctx=pyast.Store())], value=probe.body)],
            orelse=[pyast.While(test=pyast.Constant(value=True), body=[*inlined, *end], orelse=[])],
        )
        _replace_statement(function, statement, pyast.copy_location(replacement, statement))


def _probe_site(node: pyast.AST) -> str | None:
    """``R5`` where ``node`` is the statement ``t = m[K] if K in m else R5(input, m)``."""
    if not (isinstance(node, pyast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], pyast.Name)):
        return None
    value = node.value
    if not (isinstance(value, pyast.IfExp) and isinstance(value.orelse, pyast.Call) and isinstance(value.orelse.func, pyast.Name)):
        return None
    call = value.orelse
    if not re.fullmatch(r"R\d+", call.func.id) or [a.id if isinstance(a, pyast.Name) else None for a in call.args] != ["input", MEMO]:  # type: ignore[attr-defined]
        return None
    return call.func.id  # type: ignore[attr-defined]


def _returns_in_loop(body: list[pyast.stmt]) -> bool:
    stack: list[tuple[pyast.AST, bool]] = [(s, False) for s in body]
    while stack:
        node, in_loop = stack.pop()
        if in_loop and isinstance(node, pyast.Return):
            return True
        inner = in_loop or isinstance(node, (pyast.For, pyast.While))
        stack.extend((child, inner) for child in pyast.iter_child_nodes(node))
    return False


class _ReturnsLeave(pyast.NodeTransformer):
    """``return X`` as ``target = X; break`` (see inline_single_calls)."""

    def __init__(self, target: str) -> None:
        self.target = target

    def visit_Return(self, node: pyast.Return) -> Any:
        value = node.value if node.value is not None else pyast.Constant(value=None)
        assign = pyast.Assign(targets=[pyast.Name(id=self.target, ctx=pyast.Store())], value=value)
        return [pyast.copy_location(assign, node), pyast.copy_location(pyast.Break(), node)]


def _replace_statement(function: pyast.FunctionDef, old: pyast.stmt, new: pyast.stmt) -> None:
    for n in pyast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(n, field, None)
            if isinstance(statements, list) and any(s is old for s in statements):
                statements[[id(s) for s in statements].index(id(old))] = new
                return
    raise AssertionError("statement not found")
