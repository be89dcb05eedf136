"""Two forms of the same generated code: compact at first, fast once hot.

Python's :func:`compile` takes time in proportion to the source it is given,
and a policy evaluated once (a fresh engine, a one-off scan) pays that time in
full. So a rule's code is first compiled in a compact form, where literal-key
lookups and builtin calls go through helper functions
(``rt_dget(x, 'k')``, ``rt_call_builtin(ctx, B1, 'op', L2, ...)``), loops
call ``rt_check_deadline(ctx)`` unconditionally, and the function that
memoises a document (``R<id>``, ``F<id>``) is a closure made by a factory here
(``R2 = rt_rule(2, TICK, (D2_0, ), None, None, None, False)``) instead of
a ``def`` of its own. Once a program's rules have been computed
:data:`PROMOTE_AFTER` times, the code compiled so far is compiled again in the
fast form, which inlines those helpers (a dict lookup behind a type test; a
``try`` around the builtin call; a ``def`` for each wrapper) and code loaded
after that is compiled in the fast form straight away.

Both forms perform the same operations in the same order; they differ only in
Python call overhead. The fast form is derived from the compact one line by
line: the code generator writes each compact statement on a line of its own,
in exactly the shapes matched below, and user text only ever appears inside
``repr`` literals, so it cannot start a line or take part in a match (the one
literal a wrapper line holds, a default value, is its last argument and is
copied, never matched).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .runtime.helpers import MISS, rt_conflict
from .runtime.values import UNDEF, equal

#: Rule computations (cache misses of rule functions) before a program's code
#: is recompiled in the fast form.
PROMOTE_AFTER = 32

#: The statement the compact form of a ``def`` rule function runs on each computation.
TICK_LINE = "    TICK()"

_DGET = re.compile(r"( *)(\w+) = rt_dget\((\w+), (.+)\)")
_BUILTIN_CALL = re.compile(r"( *)(\w+) = rt_call_builtin\((\w+), (\w+), ('[\w.]+'), (\w+)((?:, .+)?)\)")
_DEADLINE = re.compile(r"( *)rt_check_deadline\((\w+)\)")
_DEFS = r"\(((?:D\d+_\d+, )*)\)"
_RULE = re.compile(rf"R(\d+) = rt_rule\((\d+), TICK, {_DEFS}, (K\d+|None), (L\d+|None), (DF\d+|None), (.+)\)")
_PARTIAL = re.compile(rf"R(\d+) = rt_partial_rule\((\d+), TICK, {_DEFS}, (set|dict)\)")
_FUNCTION = re.compile(rf"F(\d+) = rt_function_rule\((\d+), TICK, {_DEFS}, (K\d+), (L\d+), (DF\d+|None)\)")


# -- compact wrappers: the lines the code generator writes ------------------------------


def _defs(defs: list[str]) -> str:
    return "(" + "".join(d + ", " for d in defs) + ")"


def rule_line(node_id: int, defs: list[str], conflict: str | None, where: str | None, default_fn: str | None, default: str) -> str:
    """``R<id>`` of a complete rule: the first defined definition wins
    (``conflict`` None: they can only agree), or all are computed and must
    agree (``conflict``: the message's constant, ``where``: its location);
    then the default: ``default_fn`` called, or the ``default`` literal
    (``UNDEF``: none)."""
    return f"R{node_id} = rt_rule({node_id}, TICK, {_defs(defs)}, {conflict}, {where}, {default_fn}, {default})"


def partial_rule_line(node_id: int, defs: list[str], collection: str) -> str:
    """``R<id>`` of a partial set (``collection`` "set") or object ("dict") rule."""
    return f"R{node_id} = rt_partial_rule({node_id}, TICK, {_defs(defs)}, {collection})"


def function_line(node_id: int, arity: int, defs: list[str], conflict: str, where: str, default_fn: str | None) -> str:
    """``F<id>`` of a function: every definition computed, all must agree."""
    return f"F{node_id} = rt_function_rule({arity}, TICK, {_defs(defs)}, {conflict}, {where}, {default_fn})"


# -- compact wrappers at run time ---------------------------------------------------------


def rt_rule(
    key: int,
    tick: Callable[[], None],
    defs: tuple[Callable[..., Any], ...],
    conflict: str | None,
    where: Any,
    default_fn: Callable[..., Any] | None,
    default: Any,
) -> Callable[[Any], Any]:
    """The compact ``R<id>`` of a complete rule (its fast form: :func:`_rule_def`)."""

    def rule(ctx: Any) -> Any:
        c = ctx.cache
        r = c.get(key, MISS)
        if r is not MISS:
            return r
        tick()
        r = UNDEF
        if conflict is None:
            for d in defs:
                r = d(ctx)
                if r is not UNDEF:
                    break
        else:
            for d in defs:
                x = d(ctx)
                if x is not UNDEF:
                    if r is UNDEF:
                        r = x
                    elif not equal(r, x):
                        rt_conflict(conflict, where)
        if r is UNDEF:
            r = default_fn(ctx) if default_fn is not None else default
        c[key] = r
        return r

    return rule


def rt_partial_rule(key: int, tick: Callable[[], None], defs: tuple[Callable[..., Any], ...], collection: type) -> Callable[[Any], Any]:
    """The compact ``R<id>`` of a partial set or object rule."""

    def rule(ctx: Any) -> Any:
        c = ctx.cache
        r = c.get(key, MISS)
        if r is not MISS:
            return r
        tick()
        acc = collection()
        for d in defs:
            d(ctx, acc)
        c[key] = acc
        return acc

    return rule


def rt_function_rule(
    arity: int, tick: Callable[[], None], defs: tuple[Callable[..., Any], ...], conflict: str, where: Any, default_fn: Callable[..., Any] | None
) -> Callable[..., Any]:
    """The compact ``F<id>`` of a function."""

    def function(ctx: Any, *args: Any) -> Any:
        tick()
        r = UNDEF
        for d in defs:
            x = d(ctx, *args)
            if x is not UNDEF:
                if r is UNDEF:
                    r = x
                elif not equal(r, x):
                    rt_conflict(conflict, where)
        if r is UNDEF and default_fn is not None:
            r = default_fn(ctx, *args)
        return r

    return function


#: What the compact form's wrapper lines call.
COMPACT_HELPERS: dict[str, Any] = {"rt_rule": rt_rule, "rt_partial_rule": rt_partial_rule, "rt_function_rule": rt_function_rule}


# -- the fast form ---------------------------------------------------------------------------


def _rule_def(m: re.Match[str]) -> list[str]:
    name, key, defs, conflict, where, default_fn, default = m.groups()
    calls = [f"{d}(ctx)" for d in defs.split(", ")[:-1]]
    out = [f"def R{name}(ctx):", "    c = ctx.cache", f"    r = c.get({key}, MISS)", "    if r is not MISS: return r"]
    out.append(f"    r = {calls[0]}" if calls else "    r = UNDEF")
    for call in calls[1:]:
        if conflict == "None":
            out.append(f"    if r is UNDEF: r = {call}")
        else:
            out.append(f"    x = {call}")
            out.append("    if x is not UNDEF:")
            out.append("        if r is UNDEF: r = x")
            out.append(f"        elif not rt_eq(r, x): rt_conflict({conflict}, {where})")
    if default_fn != "None":
        out.append(f"    if r is UNDEF: r = {default_fn}(ctx)")
    elif default != "UNDEF":
        out.append(f"    if r is UNDEF: r = {default}")
    out += [f"    c[{key}] = r", "    return r"]
    return out


def _partial_def(m: re.Match[str]) -> list[str]:
    name, key, defs, collection = m.groups()
    out = [f"def R{name}(ctx):", "    c = ctx.cache", f"    r = c.get({key}, MISS)", "    if r is not MISS: return r"]
    out.append("    acc = set()" if collection == "set" else "    acc = {}")
    out += [f"    {d}(ctx, acc)" for d in defs.split(", ")[:-1]]
    out += [f"    c[{key}] = acc", "    return acc"]
    return out


def _function_def(m: re.Match[str]) -> list[str]:
    name, arity, defs, conflict, where, default_fn = m.groups()
    args = "".join(f", a{i}" for i in range(int(arity)))
    calls = [f"{d}(ctx{args})" for d in defs.split(", ")[:-1]]
    out = [f"def F{name}(ctx{args}):", f"    r = {calls[0]}" if calls else "    r = UNDEF"]
    for call in calls[1:]:
        out.append(f"    x = {call}")
        out.append("    if x is not UNDEF:")
        out.append("        if r is UNDEF: r = x")
        out.append(f"        elif not rt_eq(r, x): rt_conflict({conflict}, {where})")
    if default_fn != "None":
        out.append("    if r is UNDEF:")
        out.append(f"        r = {default_fn}(ctx{args})")
    out.append("    return r")
    return out


_WRAPPERS: dict[str, tuple[re.Pattern[str], Callable[[re.Match[str]], list[str]]]] = {
    "R": (_RULE, _rule_def),
    "F": (_FUNCTION, _function_def),
}


def fast_lines(lines: list[str]) -> list[str]:
    """The fast form of compact generated ``lines``."""
    out: list[str] = []
    for line in lines:
        if line == TICK_LINE:
            continue
        if "rt_dget(" in line:
            m = _DGET.fullmatch(line)
            if m is not None:
                indent, res, cur, key = m.groups()
                out.append(f"{indent}{res} = {cur}.get({key}, UNDEF) if type({cur}) is dict else rt_get({cur}, {key})")
                continue
        elif "rt_call_builtin(" in line:
            m = _BUILTIN_CALL.fullmatch(line)
            if m is not None:
                indent, res, ctx, fn, op, where, args = m.groups()
                out.append(f"{indent}try:")
                out.append(f"{indent}    {res} = {fn}({args[2:]})")
                out.append(f"{indent}except (BuiltinError, BuiltinHalt) as exc:")
                out.append(f"{indent}    {res} = rt_builtin_error({ctx}, exc, {op}, {where})")
                continue
        elif "rt_check_deadline(" in line:
            m = _DEADLINE.fullmatch(line)
            if m is not None:
                indent, ctx = m.groups()
                out.append(f"{indent}if {ctx}.deadline is not None: rt_check_deadline({ctx})")
                continue
        elif line[:1] in _WRAPPERS:
            # Wrapper lines sit at the top level: a line that starts with a
            # letter is one of the generator's own statements.
            pattern, expand = _WRAPPERS[line[0]]
            m = pattern.fullmatch(line)
            if m is None and line[0] == "R":
                pattern, expand = _PARTIAL, _partial_def
                m = pattern.fullmatch(line)
            if m is not None:
                out += expand(m)
                continue
        out.append(line)
    return out


def make_tick(promote: Callable[[], None]) -> Callable[[], None]:
    """The ``TICK`` of compact code: counts computations, promotes when hot."""
    count = 0

    def tick() -> None:
        nonlocal count
        count += 1
        if count >= PROMOTE_AFTER:
            promote()  # returns at once when already promoted

    return tick


__all__ = [
    "COMPACT_HELPERS",
    "PROMOTE_AFTER",
    "TICK_LINE",
    "fast_lines",
    "function_line",
    "make_tick",
    "partial_rule_line",
    "rule_line",
]
