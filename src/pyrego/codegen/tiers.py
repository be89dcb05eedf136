"""Two forms of the same generated code: compact at first, fast once hot.

Python's :func:`compile` takes time in proportion to the source it is given,
and a policy evaluated once (a fresh engine, a one-off scan) pays that time in
full. So a rule's code is first compiled in a compact form, where literal-key
lookups and builtin calls go through helper functions
(``rt_dget(x, 'k')``; ``C3(ctx, ...)``, a caller bound to one call site's
builtin, name and location: a :class:`BuiltinSite`) and loops
call ``rt_check_deadline(ctx)`` unconditionally; the functions that memoise
documents (``R<id>``) and run functions (``F<id>``) are closures built from a
:class:`RuleWrapper`, with no source at all. Once a program's rules have been
computed :data:`PROMOTE_AFTER` times, the code compiled so far is compiled
again in the fast form, which inlines those helpers (a dict lookup behind a
type test; a ``try`` around the builtin call; a ``def`` for each wrapper), and
code loaded after that is compiled in the fast form straight away.

Both forms perform the same operations in the same order; they differ only in
Python call overhead. The compact form also has fewer statements: a test
takes in the assignment and the tests before it (see codegen_lines). The
fast form is derived from the rule's code written again in the canonical
shapes, one statement a line, line by line: the code generator writes each
compact statement on a line of its own, in exactly the shapes matched below,
and user text only ever appears inside ``repr`` literals, so it cannot start
a line or take part in a match. A wrapper's ``def`` is written from its
fields: generated names, numbers, and literals the code generator made.
"""

from __future__ import annotations

import re
from ast import literal_eval
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from pyrego.runtime.helpers import VALUES, rt_conflict
from pyrego.runtime.values import UNDEF, equal

#: Rule computations (cache misses of rule functions) before a program's code
#: is recompiled in the fast form.
PROMOTE_AFTER = 32

#: The statement the compact form of a ``def`` rule function runs on each computation.
TICK_LINE = "    TICK()"

_DGET = re.compile(r"( *)(\w+) = rt_dget\((\w+), (.+)\)")
_SITE_CALL = re.compile(r"( *)(\w+) = (C\d+)\((\w+)((?:, .+)?)\)")
_DEADLINE = re.compile(r"( *)rt_check_deadline\((\w+), (\w+)\)")
_DPATH = re.compile(r"( *)(\w+(?:, \w+)+) = (rt_dpath|rt_dinput)\((\w+), (.+)\)")
_RULE_CALL = re.compile(r"( *)(\w+) = (R\d+)\((\w+)\)")
_COMPARE_ENDINGS = (": return UNDEF", ": continue", ": break")
_NUMBER_COMPARE = re.compile(r"( *)if not rt_(gt|ge|lt|le)\((\w+), (-?\d+)\): (return UNDEF|continue|break)")
_COMPARE_OPS = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}


class BuiltinSite(NamedTuple):
    """One builtin call site (``C<n>``): the names of the builtin's function
    (``B<n>``) and location (``L<n>``), and its name as a literal."""

    fn: str
    name: str
    where: str
    needs_context: bool


@dataclass(slots=True)
class RuleWrapper:
    """The function that memoises a document (``R<id>``) or runs a function
    (``F<id>``), kept as data: the compact form builds it as a closure, with
    nothing to compile; the fast form writes it as a ``def``.

    ``defs`` are its definitions' functions (``D<id>_<n>``). A complete rule
    takes the first defined one (``conflict`` None: they can only agree) or
    computes them all, which must agree (``conflict``, ``where``: the
    constants holding the error message and its location); then its default:
    ``default_fn`` called, or the ``default`` literal (``UNDEF``: none; its
    value ``default_value``). A rule that is one constant (``constant``: its
    literal, of value ``constant_value``) has no definition function at all.
    """

    kind: str  # "complete", "set", "object" or "function"
    node_id: int
    defs: tuple[str, ...] = ()
    arity: int = 0
    conflict: str | None = None
    where: str | None = None
    default_fn: str | None = None
    default: str = "UNDEF"
    default_value: Any = UNDEF
    constant: str | None = None
    constant_value: Any = UNDEF

    @property
    def name(self) -> str:
        return f"F{self.node_id}" if self.kind == "function" else f"R{self.node_id}"

    def compact(self, namespace: dict[str, Any]) -> Callable[..., Any]:
        """The closure that stands for this wrapper (its definitions are in ``namespace``)."""
        tick = namespace["TICK"]
        defs = tuple(namespace[d] for d in self.defs)
        conflict = namespace[self.conflict] if self.conflict is not None else None
        where = namespace[self.where] if self.where is not None else None
        default_fn = namespace[self.default_fn] if self.default_fn is not None else None
        if self.kind == "function":
            assert conflict is not None
            return _function_closure(tick, defs, conflict, where, default_fn)
        if self.kind != "complete":
            return _partial_closure(self.node_id, tick, defs, set if self.kind == "set" else dict)
        if self.constant is not None:
            return _constant_closure(self.node_id, tick, self.constant_value)
        return _rule_closure(self.node_id, tick, defs, conflict, where, default_fn, self.default_value)

    def fast_lines(self) -> list[str]:
        """The ``def`` of the fast form."""
        if self.kind == "function":
            return self._function_def()
        key = self.node_id
        # ``in`` then a subscript costs less than ``dict.get`` with a marker,
        # on a miss (most documents are read once per evaluation) and on a hit.
        out = [f"def R{key}(ctx):", "    c = ctx.cache", f"    if {key} in c: return c[{key}]"]
        if self.kind != "complete":
            out.append("    acc = set()" if self.kind == "set" else "    acc = {}")
            out += [f"    {d}(ctx, acc)" for d in self.defs]
            if self.kind == "object":
                out.append("    acc.pop(VALUES, None)")
            return out + [f"    c[{key}] = acc", "    return acc"]
        calls = [f"{d}(ctx)" for d in self.defs]
        body: list[str] = []
        if self.constant is not None:
            body.append(f"    r = {self.constant}")
        else:
            body.append(f"    r = {calls[0]}" if calls else "    r = UNDEF")
        for call in calls[1:]:
            if self.conflict is None:
                body.append(f"    if r is UNDEF: r = {call}")
            else:
                body += self._conflict_check(call)
        if self.default_fn is not None:
            body.append(f"    if r is UNDEF: r = {self.default_fn}(ctx)")
        elif self.default != "UNDEF":
            body.append(f"    if r is UNDEF: r = {self.default}")
        # ``E<id>``: the same computation for the rule an evaluation starts
        # from (Engine.eval_rule), whose memo is empty then and never read
        # after: no lookup and no store.
        entry = [f"def {self.entry_name}(ctx):", *body, "    return r"]
        return out + body + [f"    c[{key}] = r", "    return r", *entry]

    @property
    def entry_name(self) -> str:
        """``E<id>``: the rule computed without its memo (complete rules), for the start of an evaluation."""
        return f"E{self.node_id}"

    def _function_def(self) -> list[str]:
        args = "".join(f", a{i}" for i in range(self.arity))
        calls = [f"{d}(ctx{args})" for d in self.defs]
        out = [f"def F{self.node_id}(ctx{args}):", f"    r = {calls[0]}" if calls else "    r = UNDEF"]
        for call in calls[1:]:
            out += self._conflict_check(call)
        if self.default_fn is not None:
            out += ["    if r is UNDEF:", f"        r = {self.default_fn}(ctx{args})"]
        return out + ["    return r"]

    def _conflict_check(self, call: str) -> list[str]:
        return [
            f"    x = {call}",
            "    if x is not UNDEF:",
            "        if r is UNDEF: r = x",
            f"        elif not rt_eq(r, x): rt_conflict({self.conflict}, {self.where})",
        ]

    def describe(self) -> str:
        """A comment line for :attr:`Program.source` saying what the wrapper does."""
        what = [f"{self.kind} {'function' if self.kind == 'function' else 'rule'}"]
        if self.defs:
            what.append(f"{'all of' if self.conflict else 'first defined of'} {', '.join(self.defs)}")
        if self.constant is not None:
            what.append(f"constant {self.constant}")
        if self.default_fn is not None:
            what.append(f"default {self.default_fn}")
        elif self.default != "UNDEF":
            what.append(f"default {self.default}")
        return f"# {self.name}: {'; '.join(what)}"


# -- the compact form's wrappers at run time: the same steps as the fast form's defs --------


def _rule_closure(
    key: int,
    tick: Callable[[], None],
    defs: tuple[Callable[..., Any], ...],
    conflict: str | None,
    where: Any,
    default_fn: Callable[..., Any] | None,
    default: Any,
) -> Callable[[Any], Any]:
    def rule(ctx: Any) -> Any:
        c = ctx.cache
        if key in c:
            return c[key]
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


def _constant_closure(key: int, tick: Callable[[], None], value: Any) -> Callable[[Any], Any]:
    def rule(ctx: Any) -> Any:
        c = ctx.cache
        if key in c:
            return c[key]
        tick()
        c[key] = value
        return value

    return rule


def _partial_closure(key: int, tick: Callable[[], None], defs: tuple[Callable[..., Any], ...], collection: type) -> Callable[[Any], Any]:
    def rule(ctx: Any) -> Any:
        c = ctx.cache
        if key in c:
            return c[key]
        tick()
        acc = collection()
        for d in defs:
            d(ctx, acc)
        if collection is dict:
            acc.pop(VALUES, None)
        c[key] = acc
        return acc

    return rule


def _function_closure(
    tick: Callable[[], None], defs: tuple[Callable[..., Any], ...], conflict: str, where: Any, default_fn: Callable[..., Any] | None
) -> Callable[..., Any]:
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


# -- the fast form ---------------------------------------------------------------------------


#: The longest run of literal-key lookups the fast form writes out inline.
_LONGEST_INLINE_RUN = 32


def _inline_lookup(indent: str, res: str, cur: str, key: str) -> str:
    return f"{indent}{res} = {cur}.get({key}, UNDEF) if type({cur}) is dict else rt_get({cur}, {key})"


def _expand_lookup(m: re.Match[str]) -> list[str]:
    return [_inline_lookup(*m.groups())]


def _expand_lookups(m: re.Match[str]) -> list[str]:
    """``a, b = rt_dpath(x, 'k1', 'k2')``, ``x, a = rt_dinput(ctx, 'k')``: one lookup a line.

    The keys are ``repr`` literals of strings: read back as literals (never
    as code) and written again with ``repr``."""
    indent, targets, helper, base, keys_source = m.groups()
    names = targets.split(", ")
    if len(names) > _LONGEST_INLINE_RUN:
        # A long run stays one helper call: a line per lookup would cost
        # Python's compile() more than the lookups ever save.
        return [m.group(0)]
    keys = literal_eval(f"({keys_source},)")
    out = []
    if helper == "rt_dinput":
        out.append(f"{indent}{names[0]} = {base}.input")
        base = names.pop(0)
    if len(keys) != len(names) or not all(type(k) is str for k in keys):
        raise ValueError(f"not a compact lookup: {targets} = {helper}(...)")
    for name, key in zip(names, keys):
        out.append(_inline_lookup(indent, name, base, repr(key)))
        base = name
    return out


def _expand_builtin_call(indent: str, res: str, site: BuiltinSite, ctx: str, args: str) -> list[str]:
    if site.needs_context:
        args = f"{ctx}{args}"
    return [
        f"{indent}try:",
        f"{indent}    {res} = {site.fn}({args.removeprefix(', ')})",
        f"{indent}except (BuiltinError, BuiltinHalt) as exc:",
        f"{indent}    {res} = rt_builtin_error({ctx}, exc, {site.name}, {site.where})",
    ]


def _expand_deadline(m: re.Match[str]) -> list[str]:
    indent, ctx, where = m.groups()
    return [f"{indent}if {ctx}.deadline is not None: rt_check_deadline({ctx}, {where})"]


#: The compact statements: the helper each one calls, its shape, its fast form.
_EXPANSIONS: list[tuple[str, re.Pattern[str], Callable[[re.Match[str]], list[str]]]] = [
    ("rt_dget(", _DGET, _expand_lookup),
    ("rt_dpath(", _DPATH, _expand_lookups),
    ("rt_dinput(", _DPATH, _expand_lookups),
    ("rt_check_deadline(", _DEADLINE, _expand_deadline),
]


def _expand_number_compare(m: re.Match[str]) -> list[str]:
    """``if not rt_gt(x, 0): ...`` with an integer literal: Python's comparison when ``x`` is an int
    (what ``rt_gt`` does then), the helper for every other type."""
    indent, op, x, literal, then = m.groups()
    return [f"{indent}if not ({x} {_COMPARE_OPS[op]} {literal} if type({x}) is int else rt_{op}({x}, {literal})): {then}"]


def fast_lines(lines: list[str], sites: dict[str, BuiltinSite], wrappers: dict[str, Any] | None = None) -> list[str]:
    """The fast form of compact generated ``lines`` (``sites``: their builtin call sites;
    ``wrappers``: the program's rule wrappers, by name)."""
    out: list[str] = []
    for line in lines:
        if line == TICK_LINE:
            continue
        if " = C" in line:
            m = _SITE_CALL.fullmatch(line)
            if m is not None:
                indent, res, name, ctx, args = m.groups()
                out += _expand_builtin_call(indent, res, sites[name], ctx, args)
                continue
        if wrappers and " = R" in line:
            m = _RULE_CALL.fullmatch(line)
            if m is not None:
                indent, res, name, ctx = m.groups()
                w = wrappers.get(name)
                # (Only this module's wrappers: the instrumented program's record what they compute.)
                if type(w) is RuleWrapper and w.kind == "complete" and w.constant is not None:
                    # A constant document: its value unless ``with`` put another in
                    # the memo (the wrapper's own result, without the call).
                    out.append(f"{indent}{res} = {ctx}.cache.get({w.node_id}, {w.constant})")
                    continue
        if line.endswith(_COMPARE_ENDINGS) and "if not rt_" in line:
            m = _NUMBER_COMPARE.fullmatch(line)
            if m is not None:
                out += _expand_number_compare(m)
                continue
        if "rt_" in line:
            # A literal holding a helper's name only makes the line fail to
            # match some shape below, never match one.
            for helper, shape, expand in _EXPANSIONS:
                if helper in line:
                    m = shape.fullmatch(line)
                    if m is not None:
                        out += expand(m)
                        break
            else:
                out.append(line)
        else:
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


__all__ = ["PROMOTE_AFTER", "TICK_LINE", "BuiltinSite", "RuleWrapper", "fast_lines", "make_tick"]
