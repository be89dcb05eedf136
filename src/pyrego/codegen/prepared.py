"""A rule's evaluation as one function of the input, for prepared rules.

A prepared rule (``Engine.prepare_rule``) evaluates from the rule's entry:
its definition functions ``D<id>_<n>(ctx)`` in turn, then its default. Each
call then sets up an evaluation context (the input, an empty memo, fresh
query state) that most small rules only read the input from. For a rule
whose definitions need nothing else of the context, :func:`input_function`
writes their fast form again as functions of the input alone, and the
prepared rule calls that, with no context at all:

- ``t = ctx.input`` reads the argument;
- ``t = ctx.cache.get(<id>, K<n>)``, a constant document, is its constant
  (at the start of an evaluation the memo is empty and no ``with`` is in
  force, so the memo would hold nothing else);
- ``t = ctx.now_ns`` reads the clock once per call (one definition at most
  may read it: every read of one evaluation must agree);
- a builtin's error path (``rt_builtin_error(ctx, ...)``) makes a context
  for the settings then (strict errors, or the record of errors);
- a loop's deadline check goes: there is none with no time limit, and a
  rule under a time limit gets no such function (walks over values find the
  deadline from a context on the stack);
- nothing else may name the context: a rule or function call, a ``with``, a
  builtin that takes the context, print.

Each function's values must be ones that need no conversion (booleans,
``null``, integers, undefined). Where any of this does not hold, there is no
such function and the prepared rule evaluates with a context.
"""

from __future__ import annotations

import ast as pyast
import builtins
import re
import time
from typing import Any, Callable

from pyrego.codegen.program import Program
from pyrego.codegen.python_ast import python_ast_lock
from pyrego.runtime.values import UNDEF

_DEF = re.compile(r"def (D\d+_\d+)\(ctx\):")
_INPUT = re.compile(r"( *)(\w+) = ctx\.input")
_CONSTANT = re.compile(r"( *)(\w+) = ctx\.cache\.get\(\d+, (K\d+)\)")
_NOW = re.compile(r"( *)(\w+) = ctx\.now_ns")
_DEADLINE = re.compile(r"( *)if ctx\.deadline is not None: rt_check_deadline\(ctx, L\d+\)")
_BUILTIN_ERROR = "rt_builtin_error(ctx, "
_PLAIN_TYPES = (bool, int, type(None))


def _function_lines(program: Program, name: str) -> list[str] | None:
    """The fast form's lines of definition function ``name`` (``D<id>_<n>``)."""
    gen = program.gen
    m = re.fullmatch(r"D(\d+)_\d+", name)
    if gen is None or m is None or not gen.hot:
        return None
    lines = gen.fast_chunk(f"R{m.group(1)}")
    start = next((i for i, line in enumerate(lines) if line == f"def {name}(ctx):"), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
    return lines[start:end]


def _rewrite(lines: list[str], fname: str) -> tuple[list[str], bool] | None:
    """``lines`` (``def D..(ctx):``) as ``def <fname>(input):``, and whether it reads the clock."""
    out = [f"def {fname}(input):"]
    reads_clock = False
    for line in lines[1:]:
        if (m := _INPUT.fullmatch(line)) is not None:
            out.append(f"{m.group(1)}{m.group(2)} = input")
        elif (m := _CONSTANT.fullmatch(line)) is not None:
            out.append(f"{m.group(1)}{m.group(2)} = {m.group(3)}")
        elif (m := _DEADLINE.fullmatch(line)) is not None:
            out.append(f"{m.group(1)}pass")  # (no time limit: see input_function)
        elif (m := _NOW.fullmatch(line)) is not None:
            reads_clock = True
            out += [f"{m.group(1)}if now_ is None: now_ = time_ns()", f"{m.group(1)}{m.group(2)} = now_"]
        else:
            out.append(line.replace(_BUILTIN_ERROR, "rt_builtin_error(NEW_CONTEXT(), "))
    if reads_clock:
        out.insert(1, "    now_ = None")
    return out, reads_clock


def _checked(tree: pyast.Module, namespace: dict[str, Any]) -> bool:
    """Whether the rewritten function names no context, returns only plain
    constants (or undefined) and reads only names it or the program defines."""
    stored = {n.id for n in pyast.walk(tree) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}
    stored |= {n.name for n in pyast.walk(tree) if isinstance(n, (pyast.FunctionDef, pyast.ExceptHandler)) and n.name}
    stored |= {a.arg for n in pyast.walk(tree) if isinstance(n, pyast.FunctionDef) for a in n.args.args}
    for node in pyast.walk(tree):
        if isinstance(node, (pyast.Yield, pyast.YieldFrom, pyast.Lambda, pyast.Global, pyast.Nonlocal, pyast.With)):
            return False
        if isinstance(node, pyast.FunctionDef) and node is not tree.body[0]:
            return False
        if isinstance(node, pyast.Name):
            if node.id == "ctx":
                return False
            if isinstance(node.ctx, pyast.Load) and node.id not in stored and node.id not in namespace and not hasattr(builtins, node.id):
                return False
        if isinstance(node, pyast.Return):
            value = node.value
            if value is None:
                return False
            if not (
                (isinstance(value, pyast.Constant) and type(value.value) in _PLAIN_TYPES)
                or (isinstance(value, pyast.Name) and value.id == "UNDEF")
            ):
                return False
    return True


def input_function(
    program: Program, fns: tuple[Callable[..., Any], ...], default: Any, new_context: Callable[[], Any]
) -> Callable[[Any], Any] | None:
    """The evaluation from entry functions ``fns`` (each ``D<id>_<n>(ctx)``,
    taken in turn while undefined) and then ``default``, as one function of
    the input; None where the rule needs a context (see the module's text).
    ``new_context()``: a context for a builtin's error, with the settings to use."""
    if type(default) not in _PLAIN_TYPES and default is not UNDEF:
        return None
    namespace = dict(program.namespace)
    namespace.update(NEW_CONTEXT=new_context, time_ns=time.time_ns, DEFAULT_=default)
    sources = []
    clocks = 0
    for i, fn in enumerate(fns):
        name = getattr(fn, "__name__", "")
        lines = _function_lines(program, name) if _DEF.fullmatch(f"def {name}(ctx):") else None
        rewritten = _rewrite(lines, f"P{i}") if lines is not None else None
        if rewritten is None:
            return None
        clocks += rewritten[1]
        sources.append("\n".join(rewritten[0]))
    if clocks > 1 or not sources:
        return None
    with python_ast_lock:
        return _compiled(sources, namespace)


def _compiled(sources: list[str], namespace: dict[str, Any]) -> Callable[[Any], Any] | None:
    """The rewritten definitions ``sources`` checked and compiled in ``namespace`` (see input_function)."""
    trees = []
    for source in sources:
        try:
            tree = pyast.parse(source)
        except SyntaxError:
            return None
        if not _checked(tree, namespace):
            return None
        trees.append(tree)
    if len(trees) == 1:
        # One definition: its undefined is the default, with no call between.
        for node in pyast.walk(trees[0]):
            if isinstance(node, pyast.Return) and isinstance(node.value, pyast.Name) and node.value.id == "UNDEF":
                node.value.id = "DEFAULT_"
    calls = [f"    r = P{i}(input)" if i == 0 else f"    if r is UNDEF: r = P{i}(input)" for i in range(len(trees))]
    chain = pyast.parse("\n".join(["def P(input):", *calls, "    if r is UNDEF: r = DEFAULT_", "    return r"]))
    module = pyast.Module(body=[t.body[0] for t in trees] + chain.body, type_ignores=[])
    try:
        exec(compile(module, "<pyrego prepared rule>", "exec"), namespace)  # noqa: S102 - the program's own generated code, rewritten
    except (SyntaxError, RecursionError, MemoryError, ValueError):
        return None
    if len(trees) == 1:
        return namespace["P0"]  # type: ignore[no-any-return]
    return namespace["P"]  # type: ignore[no-any-return]


__all__ = ["input_function"]
