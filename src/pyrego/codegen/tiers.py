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

import ast as _py_ast
import re
from collections.abc import Container
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from pyrego.codegen.python_ast import literal_eval, python_ast_lock
from pyrego.runtime.definitions import rt_all_defs_early, rt_def_conflict, rt_first_found
from pyrego.runtime.helpers import MISS, VALUES
from pyrego.runtime.values import UNDEF, equal, freeze

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
    # Whether the builtin is pyrego's own (not an extension in its place):
    # the fast form may then run its common case inline (see _INLINE_BUILTINS).
    standard: bool = False


@dataclass(slots=True)
class RuleWrapper:
    """The function that memoises a document (``R<id>``) or runs a function
    (``F<id>``), kept as data: the compact form builds it as a closure, with
    nothing to compile; the fast form writes it as a ``def``.

    ``defs`` are its definitions' functions (``D<id>_<n>``). A complete rule
    takes the first defined one (``conflict`` None: they can only agree) or
    computes them all, which must agree (``conflict``, ``where``: the
    constants holding the error message and each definition's location, the
    error's location being that of the definition whose value differs, as in
    OPA); then its default:
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
    # A function whose definitions have one constant value: the first defined
    # one is its value, the rest are not run (as OPA's early exit).
    first_only: bool = False
    # A complete rule computing all its definitions, where OPA's index can
    # still make it stop at the first value (see rt_all_defs_early): the
    # name of the test of an evaluation's context that says so.
    early_exit: str | None = None
    # A function that prints: its defined values are kept per arguments for
    # the evaluation, as OPA keeps every function's (a second call with the
    # same arguments runs nothing, so prints nothing).
    memo: bool = False

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
        early = namespace[self.early_exit] if self.early_exit is not None else None
        if self.kind == "function":
            assert conflict is not None
            fn = _function_closure(tick, defs, conflict, where, default_fn, self.first_only, early)
            return _memo_closure(self.node_id, fn) if self.memo else fn
        if self.kind != "complete":
            return _partial_closure(self.node_id, tick, defs, set if self.kind == "set" else dict)
        if self.constant is not None:
            return _constant_closure(self.node_id, tick, self.constant_value)
        return _rule_closure(self.node_id, tick, defs, conflict, where, default_fn, self.default_value, early)

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
        if self.early_exit is not None:  # (OPA's index decides which definitions run, in which order)
            defs = f"({', '.join(self.defs)},)"
            run = f"rt_first_found(ctx, {defs}, {self.early_exit})" if self.conflict is None else f"rt_all_defs_early(ctx, {defs}, {self.conflict}, {self.where}, {self.early_exit})"
            body.append(f"    r = {run}")
            calls = []
        elif self.constant is not None:
            body.append(f"    r = {self.constant}")
        else:
            body.append(f"    r = {calls[0]}" if calls else "    r = UNDEF")
        for i, call in enumerate(calls[1:], 1):
            if self.conflict is None:
                body.append(f"    if r is UNDEF: r = {call}")
            else:
                body += self._conflict_check(call, i, "()")
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
        out = [f"def F{self.node_id}(ctx{args}):"]
        if self.memo:
            key = ", ".join([f"'F', {self.node_id}", *(f"freeze(a{i})" for i in range(self.arity))])
            out += ["    c = ctx.cache", f"    k = ({key})", "    r = c.get(k, MISS)", "    if r is not MISS: return r"]
        packed = "".join(f"a{i}, " for i in range(self.arity))
        if self.early_exit is not None and self.first_only:
            out.append(f"    r = rt_first_found(ctx, ({', '.join(self.defs)},), {self.early_exit}, ({packed}))")
            calls = []
        elif self.early_exit is not None:
            out.append(f"    r = rt_all_defs_early(ctx, ({', '.join(self.defs)},), {self.conflict}, {self.where}, {self.early_exit}, ({packed}))")
            calls = []
        else:
            out.append(f"    r = {calls[0]}" if calls else "    r = UNDEF")
        for i, call in enumerate(calls[1:], 1):
            out += [f"    if r is UNDEF: r = {call}"] if self.first_only else self._conflict_check(call, i, f"({packed})")
        if self.default_fn is not None:
            out += ["    if r is UNDEF:", f"        r = {self.default_fn}(ctx{args})"]
        if self.memo:
            out.append("    if r is not UNDEF: c[k] = r")
        return out + ["    return r"]

    def _conflict_check(self, call: str, i: int, args: str) -> list[str]:
        return [
            f"    x = {call}",
            "    if x is not UNDEF:",
            "        if r is UNDEF: r = x",
            f"        elif not rt_eq(r, x): rt_def_conflict(ctx, {self.conflict}, {self.where}[{i}], {args})",
        ]

    def describe(self) -> str:
        """A comment line for :attr:`Program.source` saying what the wrapper does."""
        what = [f"{self.kind} {'function' if self.kind == 'function' else 'rule'}"]
        if self.defs:
            every = self.conflict and not self.first_only
            what.append(f"{'all of' if every else 'first defined of'} {', '.join(self.defs)}")
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
    early: Callable[..., tuple[tuple[int, ...], bool]] | None = None,
) -> Callable[[Any], Any]:
    def rule(ctx: Any) -> Any:
        c = ctx.cache
        if key in c:
            return c[key]
        tick()
        r = UNDEF
        if early is not None:
            r = rt_all_defs_early(ctx, defs, conflict, where, early) if conflict is not None else rt_first_found(ctx, defs, early)
        elif conflict is None:
            for d in defs:
                r = d(ctx)
                if r is not UNDEF:
                    break
        else:
            for i, d in enumerate(defs):
                x = d(ctx)
                if x is not UNDEF:
                    if r is UNDEF:
                        r = x
                    elif not equal(r, x):
                        rt_def_conflict(ctx, conflict, where[i])
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
    tick: Callable[[], None],
    defs: tuple[Callable[..., Any], ...],
    conflict: str,
    where: Any,
    default_fn: Callable[..., Any] | None,
    first_only: bool = False,
    early: Callable[..., tuple[tuple[int, ...], bool]] | None = None,
) -> Callable[..., Any]:
    def function(ctx: Any, *args: Any) -> Any:
        tick()
        r = UNDEF
        if early is not None:
            r = rt_first_found(ctx, defs, early, args) if first_only else rt_all_defs_early(ctx, defs, conflict, where, early, args)
        else:
            for i, d in enumerate(defs):
                x = d(ctx, *args)
                if x is not UNDEF:
                    if r is UNDEF:
                        r = x
                        if first_only:
                            break
                    elif not equal(r, x):
                        rt_def_conflict(ctx, conflict, where[i], args)
        if r is UNDEF and default_fn is not None:
            r = default_fn(ctx, *args)
        return r

    return function


def _memo_closure(node_id: int, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with its defined values kept in the evaluation's memo, by arguments."""

    def function(ctx: Any, *args: Any) -> Any:
        c = ctx.cache
        k = ("F", node_id, *[freeze(a) for a in args])
        r = c.get(k, MISS)
        if r is not MISS:
            return r
        r = fn(ctx, *args)
        if r is not UNDEF:
            c[k] = r
        return r

    return function


# -- the fast form ---------------------------------------------------------------------------


#: The longest run of literal-key lookups the fast form writes out inline.
_LONGEST_INLINE_RUN = 32


def _inline_lookup(indent: str, res: str, cur: str, key: str) -> str:
    # (A lookup in an undefined value, the next step after a missing key, is undefined without a call.)
    return f"{indent}{res} = {cur}.get({key}, UNDEF) if type({cur}) is dict else UNDEF if {cur} is UNDEF else rt_get({cur}, {key})"


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


#: Builtins whose common case the fast form runs inline, by name: its number of
#: operands, the type each must have (None: any) and the expression that is
#: then the builtin's value, exactly what the builtin's own code returns for
#: operands of those types (it raises no error for them). Other operands go
#: to the builtin itself, with its errors.
_INLINE_BUILTINS: dict[str, tuple[tuple[str | None, ...], str]] = {
    "startswith": (("str", "str"), "{0}.startswith({1})"),
    "endswith": (("str", "str"), "{0}.endswith({1})"),
    "contains": (("str", "str"), "{1} in {0}"),
    "count": (("SIZED",), "len({0})"),
    "plus": (("int", "int"), "{0} + {1}"),
    "minus": (("int", "int"), "{0} - {1}"),
    "object.get": (("dict", "str", None), "{0}.get({1}, {2})"),
    "time.now_ns": ((), "{ctx}.now_ns"),
}


def _operands(args: str) -> list[tuple[str, str | None]] | None:
    """The operands of a call's argument text (``, a, 'k'``): each one's text and,
    for a literal, its type's name; None unless each is a name or a literal."""
    try:
        with python_ast_lock:
            call = _py_ast.parse(f"f({args.removeprefix(', ')})", mode="eval").body
    except SyntaxError:
        return None
    out: list[tuple[str, str | None]] = []
    for arg in call.args:  # type: ignore[attr-defined]
        if type(arg) is _py_ast.Name:
            out.append((arg.id, None))
        elif type(arg) is _py_ast.Constant and (type(arg.value) in (str, int, bool) or arg.value is None):
            out.append((repr(arg.value), type(arg.value).__name__))
        else:
            return None
    return out


def _inline_guard(site: BuiltinSite, args: str, ctx: str) -> tuple[str, str] | None:
    """``(test, value)``: the test of operand types under which the builtin of
    ``site`` is the expression ``value`` (see _INLINE_BUILTINS); None: not inline."""
    if not site.standard:
        return None
    rule = _INLINE_BUILTINS.get(literal_eval(site.name))
    operands = _operands(args)
    if rule is None or operands is None or len(operands) != len(rule[0]):
        return None
    types, value = rule
    tests = []
    for (text, known), want in zip(operands, types):
        if want is None or known == want:
            continue
        if known is not None:
            return None  # a literal the common case never takes
        tests.append(f"type({text}) in SIZED_TYPES" if want == "SIZED" else f"type({text}) is {want}")
    return " and ".join(tests), value.format(*(text for text, _ in operands), ctx=ctx)


def _expand_builtin_call(indent: str, res: str, site: BuiltinSite, ctx: str, args: str) -> list[str]:
    inline = _inline_guard(site, args, ctx)
    if site.needs_context:
        args = f"{ctx}{args}"
    call = [
        f"{indent}try:",
        f"{indent}    {res} = {site.fn}({args.removeprefix(', ')})",
        f"{indent}except (BuiltinError, BuiltinHalt) as exc:",
        f"{indent}    {res} = rt_builtin_error({ctx}, exc, {site.name}, {site.where})",
    ]
    if inline is None:
        return call
    test, value = inline
    if not test:
        return [f"{indent}{res} = {value}"]
    return [f"{indent}if {test}: {res} = {value}", f"{indent}else:", *("    " + line for line in call)]


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


_ASSIGN = re.compile(r" *(\w+(?:, \w+)*) = ")
_FOR = re.compile(r"( *)for (\w+(?:, \w+)*) in (.+):")
_WALRUS = re.compile(r"\((\w+) := ")
_AUGMENTED = re.compile(r" *(\w+) (?:\+|-|\*|/|//|%|\||&|\^|<<|>>|\*\*|@)= ")
_DEF = re.compile(r"def \w+\((.*)\):")
_LOOKUP_BASE = {"rt_dget(": _DGET, "rt_dpath(": _DPATH, "rt_dinput(": _DPATH}


def hoist_lookups(lines: list[str], constants: Container[str] = frozenset()) -> list[str]:
    """``lines`` (canonical, one function or more) with the literal-key lookups
    that a loop repeats unchanged done once before it.

    A lookup (``rt_dget``, ``rt_dpath``, ``rt_dinput``) reads a value and
    raises nothing, so doing it earlier (even when the loop then never
    reaches it) changes nothing but the time taken; the tests stay where
    they were, in their order. A lookup moves out of the outermost loop
    (not a ``for _ in ONCE`` block) inside which its operand is assigned
    nowhere: an operand that a statement of an enclosing block assigns
    before the loop (each name of the function assigned once, the function's
    own parameters never), or that an earlier moved lookup did. So does the
    read of a constant document (``t = R3(ctx)``, ``R3`` in ``constants``):
    its value, or the one ``with`` put in the memo before the function ran."""
    out: list[str] = []
    start = 0
    for i in range(1, len(lines) + 1):
        if i == len(lines) or lines[i].startswith("def "):
            out += _hoisted_function(lines[start:i], constants)
            start = i
    return out


def _hoisted_function(lines: list[str], constants: Container[str]) -> list[str]:
    if not lines or not (m := _DEF.fullmatch(lines[0])) or not any("for " in line for line in lines):
        return lines
    params = {p.strip() for p in m.group(1).split(",")}
    assigned: dict[str, int] = {}
    for line in lines[1:]:
        stripped = line.lstrip()
        if stripped.startswith(("def ", "lambda", "class ", "while ", "with ", "global ", "nonlocal ")):
            return lines  # scopes and statements this pass does not follow
        names: list[str] = []
        if (a := _ASSIGN.match(line)) is not None:
            names += a.group(1).split(", ")
        if (f := _FOR.fullmatch(line)) is not None:
            names += f.group(2).split(", ")
        names += _WALRUS.findall(line)
        if (g := _AUGMENTED.match(line)) is not None:
            names.append(g.group(1))
        if stripped.startswith("except ") and " as " in stripped:
            names.append(stripped.rpartition(" as ")[2].rstrip(":"))
        for n in names:
            assigned[n] = assigned.get(n, 0) + 1
    if any(p in assigned for p in params):
        return lines
    # Names readable here, with the indentation of the block that assigned them.
    visible: dict[str, int] = {p: 4 for p in params}
    loops: list[tuple[int, int, bool]] = []  # open loops: indentation, index of the ``for`` in out, is ONCE
    out = [lines[0]]
    for line in lines[1:]:
        indent = len(line) - len(line.lstrip(" "))
        while loops and loops[-1][0] >= indent:
            loops.pop()
        for n in [n for n, at in visible.items() if at > indent]:
            del visible[n]
        moved = False
        if loops:
            for helper, shape in _LOOKUP_BASE.items():
                if helper in line and (m := shape.fullmatch(line)) is not None:
                    moved = _hoist(line, m, helper, loops, visible, assigned, out)
                    break
            else:
                if constants and " = R" in line and (m := _RULE_CALL.fullmatch(line)) is not None and m.group(3) in constants:
                    moved = _hoist(line, m, "R", loops, visible, assigned, out)
        if moved:
            continue
        f = _FOR.fullmatch(line)
        if f is not None:
            loops.append((indent, len(out), f.group(2) == "_" and f.group(3) == "ONCE"))
            for n in f.group(2).split(", "):
                visible[n] = indent + 4
        elif (a := _ASSIGN.match(line)) is not None and not line.lstrip().startswith(("if ", "elif ")):
            for n in a.group(1).split(", "):
                visible[n] = indent
        out.append(line)
    return out


def _hoist(
    line: str,
    m: re.Match[str],
    helper: str,
    loops: list[tuple[int, int, bool]],
    visible: dict[str, int],
    assigned: dict[str, int],
    out: list[str],
) -> bool:
    """Move the lookup ``line`` (``m``: its match) before the outermost loop it
    does not depend on, if any (see hoist_lookups); whether it moved."""
    if helper == "rt_dget(":
        targets, base = [m.group(2)], m.group(3)
    elif helper == "R":
        targets, base = [m.group(2)], m.group(4)
    else:
        targets, base = m.group(2).split(", "), m.group(4)
    at = visible.get(base)
    if at is None or any(assigned.get(t) != 1 for t in targets):
        return False
    if base in assigned and assigned[base] != 1:
        return False
    k = next((k for k, (loop_indent, _, once) in enumerate(loops) if loop_indent >= at and not once), None)
    if k is None:
        return False
    loop_indent, index, _ = loops[k]
    new = " " * loop_indent + line.lstrip(" ")
    out.insert(index, new)
    # The loops at and inside the target now start one line later.
    loops[k:] = [(i, j + 1, o) for i, j, o in loops[k:]]
    for t in targets:
        visible[t] = loop_indent
    return True


def _expand_values_loop(m: re.Match[str]) -> list[str]:
    """``for x in rt_values(v):``: over ``v`` itself when it is a list (what ``rt_values`` iterates then)."""
    indent, names, iterable = m.groups()
    inner = iterable[len("rt_values(") : -1]
    if not iterable.startswith("rt_values(") or not inner.isidentifier():
        return [m.group(0)]
    return [f"{indent}for {names} in ({inner} if type({inner}) is list else rt_values({inner})):"]


class _ConstantRules:
    """The names of the rule wrappers in ``wrappers`` that stand for one
    constant document, as a container (asked by name, never listed)."""

    __slots__ = ("wrappers",)

    def __init__(self, wrappers: dict[str, Any]) -> None:
        self.wrappers = wrappers

    def __bool__(self) -> bool:
        return bool(self.wrappers)

    def __contains__(self, name: object) -> bool:
        w = self.wrappers.get(name)  # type: ignore[call-overload]
        return type(w) is RuleWrapper and w.kind == "complete" and w.constant is not None


def fast_lines(lines: list[str], sites: dict[str, BuiltinSite], wrappers: dict[str, Any] | None = None) -> list[str]:
    """The fast form of compact generated ``lines`` (``sites``: their builtin call sites;
    ``wrappers``: the program's rule wrappers, by name)."""
    out: list[str] = []
    # (Asked per rule called: a set of the program's constant rules, made
    # here, would cost the size of the program for each function made.)
    constants = _ConstantRules(wrappers or {})
    for line in hoist_lookups(lines, constants):
        if line.lstrip().startswith("for ") and "in rt_values(" in line:
            m = _FOR.fullmatch(line)
            if m is not None:
                out += _expand_values_loop(m)
                continue
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


__all__ = ["PROMOTE_AFTER", "TICK_LINE", "BuiltinSite", "RuleWrapper", "fast_lines", "hoist_lookups", "make_tick"]
