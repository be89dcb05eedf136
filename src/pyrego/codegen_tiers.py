"""Two forms of the same generated code: compact at first, fast once hot.

Python's :func:`compile` takes time in proportion to the source it is given,
and a policy evaluated once (a fresh engine, a one-off scan) pays that time in
full. So a rule's code is first compiled in a compact form, where literal-key
lookups and builtin calls go through helper functions
(``rt_dget(x, 'k')``, ``rt_call_builtin(ctx, B1, 'op', L2, ...)``). Once a
program's rules have been computed :data:`PROMOTE_AFTER` times, the code
compiled so far is compiled again in the fast form, which inlines those
helpers (a dict lookup behind a type test; a ``try`` around the builtin call),
and code loaded after that is compiled in the fast form straight away.

Both forms perform the same operations in the same order; they differ only in
Python call overhead. The fast form is derived from the compact one line by
line: the code generator writes each compact statement on a line of its own,
in exactly the shapes matched below, and user text only ever appears inside
``repr`` literals, so it cannot start a line or take part in a match.
"""

from __future__ import annotations

import re
from typing import Callable

#: Rule computations (cache misses of rule functions) before a program's code
#: is recompiled in the fast form.
PROMOTE_AFTER = 32

#: The statement the compact form of a rule function runs on each computation.
TICK_LINE = "    TICK()"

_DGET = re.compile(r"( *)(\w+) = rt_dget\((\w+), (.+)\)")
_BUILTIN_CALL = re.compile(r"( *)(\w+) = rt_call_builtin\((\w+), (\w+), ('[\w.]+'), (\w+)((?:, .+)?)\)")


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


__all__ = ["PROMOTE_AFTER", "TICK_LINE", "fast_lines", "make_tick"]
