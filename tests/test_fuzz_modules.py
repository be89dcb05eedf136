"""Differential fuzzing of programs split across modules: pyrego against OPA v1.20.2.

Hypothesis generates well-formed Rego v1 programs of 2-4 files over 1-3
packages (``package fz.a`` ...). The definitions of each rule (complete rules,
defaults, ``else`` chains, partial sets and objects, ref heads, functions,
boolean rules) are scattered over the files of their package, and bodies refer
to other rules by short name (wherever defined), through ``import data.fz.b``,
``import data.fz.b as alias``, ``import data.fz.b.rule`` or full ``data`` refs,
and use ``some``/``every``/``not``, comprehensions, builtins and ``with``
(on ``input``, on rules and on functions, across files). Import bindings are
drawn from the rule names on purpose, so that an import often shadows a rule
of the importing package: OPA's rule is that the import wins, in that module
only.

A rule refers only to rules generated before it, so programs are free of
recursion; multiple definitions mostly have disjoint guards, so conflicts are
rare but possible (then the error codes must agree). Arithmetic stays on
integers with ``+ - *``.

Each program is evaluated in OPA (``tests/opa_oracle.py``; skipped when it
cannot be had) and in pyrego in its three execution forms (closures, compact
and fast generated code), with ``x := data.fz`` and one query per rule; the
results must agree (multisets of bindings, or error codes).

The number of examples is ``PYREGO_FUZZ_EXAMPLES`` (default 80 here); the runs
are derandomized unless ``PYREGO_FUZZ_RANDOM`` is set, as in test_fuzz_engine.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyrego
from conftest import EXECUTION_FORMS, in_form
from opa_oracle import Oracle, OracleResult
from test_differential import _multiset, _show

EXAMPLES = int(os.environ.get("PYREGO_FUZZ_EXAMPLES", "80"))

FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,  # each example makes dozens of OPA calls; their time varies with the machine
    derandomize=not os.environ.get("PYREGO_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
    database=None,
)

NUM, STR, BOOL = "num", "str", "bool"
# Collections: sets and arrays of one element type; objects map strings to numbers.
COLLS = ["set:num", "set:str", "arr:num", "arr:str", "obj:num"]
TYPES = [NUM, NUM, STR, BOOL, *COLLS]
PACKAGES = ["a", "b", "c"]
RULE_NAMES = ["p", "q", "r", "s", "t", "u", "v", "w"]
FUNC_NAMES = ["f", "g", "h"]
TREE_NAMES = ["cfg", "tree"]
# Aliases come mostly from the rule names, so that imports shadow rules.
ALIASES = ["lib", "ext", *RULE_NAMES, *FUNC_NAMES, *TREE_NAMES]
KINDS = ["const", "complete", "complete", "else", "bool", "bool", "set", "set", "obj", "tree", "func", "func"]
INPUT_FIELDS = {NUM: ["input.n", "input.m"], STR: ["input.s"], BOOL: ["input.flag"],
                "arr:num": ["input.xs"], "arr:str": ["input.tags"], "obj:num": ["input.obj"]}
STRINGS = ["a", "b", "k", "x y", ""]
# Kinds of body expressions (see Gen.conditions), and the odds (of 20) that an
# input field holds a value of another type: both may be narrowed to study one
# kind of disagreement at a time.
CONDITIONS = ["test", "test", "not", "some", "assign", "every", "with"]
WRONG_TYPE_ODDS = 1


@st.composite
def inputs(draw: st.DrawFn) -> dict[str, Any]:
    """Input documents with the fields bodies read; fields are sometimes missing, rarely of another type."""
    fields: dict[str, st.SearchStrategy[Any]] = {
        "n": st.integers(-3, 9), "m": st.integers(-3, 9), "s": st.sampled_from(STRINGS), "flag": st.booleans(),
        "xs": st.lists(st.integers(-3, 9), max_size=4), "tags": st.lists(st.sampled_from(STRINGS[:4]), max_size=3),
        "obj": st.dictionaries(st.sampled_from(["a", "b", "k"]), st.integers(-3, 9), max_size=3),
    }
    out: dict[str, Any] = {}
    for name, strategy in fields.items():
        roll = draw(st.integers(0, 19))
        if roll < WRONG_TYPE_ODDS:
            out[name] = draw(st.sampled_from(["1", 2, None, [], {}]))
        elif roll > 3:  # else missing
            out[name] = draw(strategy)
    return out


@dataclass
class Group:
    """All definitions of one rule name in one package, wherever they are written."""

    pkg: str
    name: str
    kind: str
    type: str  # the document's type; a function's result type
    args: list[str] = field(default_factory=list)  # a function's argument types
    leaves: dict[str, str] = field(default_factory=dict)  # a ref-head rule: path under the name -> type


@dataclass
class Module:
    pkg: str
    path: str
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # binding -> (package, rule)
    import_lines: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)

    def text(self) -> str:
        head = f"package fz.{self.pkg}\n\n" + "".join(f"{line}\n" for line in self.import_lines)
        return head + "\n" + "\n".join(self.rules) + "\n"


@dataclass
class Program:
    modules: dict[str, str]
    queries: list[str]

    def __repr__(self) -> str:  # how hypothesis shows a failing example: the files as they are
        files = "".join(f"\n--- {name}\n{text}" for name, text in self.modules.items())
        return f"Program(queries={self.queries!r}){files}"


class Gen:
    """Writes expressions and bodies for one definition in one module, seeing only earlier rules."""

    def __init__(self, draw: st.DrawFn, mod: Module, before: list[Group], counter: list[int]) -> None:
        self.draw = draw
        self.mod = mod
        self.before = before
        self.counter = counter
        self.locals: dict[str, str] = {}

    def pick(self, xs: list[Any]) -> Any:
        return self.draw(st.sampled_from(xs))

    def chance(self, percent: int) -> bool:
        return self.draw(st.integers(0, 99)) < percent

    def fresh(self, typ: str) -> str:
        self.counter[0] += 1
        name = f"x{self.counter[0]}"
        self.locals[name] = typ
        return name

    @contextmanager
    def scope(self, only: dict[str, str] | None = None) -> Iterator[None]:
        """Locals bound inside are forgotten after; ``only`` restricts what is visible inside."""
        saved = self.locals
        self.locals = dict(saved if only is None else only)
        try:
            yield
        finally:
            self.locals = saved

    def ref(self, g: Group) -> str:
        """One of the ways this module can name rule ``g``."""
        options = [f"data.fz.{g.pkg}.{g.name}"]
        if g.pkg == self.mod.pkg and g.name not in self.mod.imports:
            options += [g.name] * 3
        for binding, (pkg, rule) in self.mod.imports.items():
            if pkg == g.pkg and rule is None:
                options += [f"{binding}.{g.name}"] * 2
            elif pkg == g.pkg and rule == g.name:
                options += [binding] * 3
        return str(self.pick(options))

    def docs(self, typ: str) -> list[str]:
        """References to earlier rules (or ref-head leaves) holding a value of type ``typ``."""
        out = []
        for g in self.before:
            if g.kind == "tree":
                out += [f"{self.ref(g)}.{path}" for path, t in g.leaves.items() if t == typ]
            elif g.kind != "func" and g.type == typ:
                out.append(self.ref(g))
        return out

    def literal(self, typ: str) -> str:
        if typ == NUM:
            return str(self.draw(st.integers(-3, 9)))
        if typ == STR:
            return json.dumps(self.pick(STRINGS))
        if typ == BOOL:
            return str(self.pick(["true", "false"]))
        kind, elem = typ.split(":")
        items = [self.literal(elem) for _ in range(self.draw(st.integers(0, 3)))]
        if kind == "arr":
            return "[" + ", ".join(items) + "]"
        if kind == "set":
            return "{" + ", ".join(items) + "}" if items else "set()"
        keys = self.draw(st.lists(st.sampled_from(STRINGS), max_size=len(items), unique=True))
        return "{" + ", ".join(f"{json.dumps(k)}: {i}" for k, i in zip(keys, items)) + "}"

    def value(self, typ: str, depth: int = 0) -> str:
        """An expression of type ``typ``."""
        leaves = [self.literal(typ), *INPUT_FIELDS.get(typ, [])]
        leaves += [n for n, t in self.locals.items() if t == typ] * 2 + self.docs(typ) * 2
        if depth >= 2 or self.chance(40):
            return str(self.pick(leaves))
        builders = self.compound(typ, depth + 1)
        return builders[self.draw(st.integers(0, len(builders) - 1))]()

    def compound(self, typ: str, d: int) -> list[Callable[[], str]]:
        v = self.value
        funcs = [g for g in self.before if g.kind == "func" and g.type == typ]
        calls = [lambda: self.call(self.pick(funcs), d)] * 2 if funcs else []
        if typ == NUM:
            return [*calls, lambda: f"({v(NUM, d)} {self.pick(['+', '-', '*'])} {v(NUM, d)})",
                    lambda: f"count({v(self.pick(COLLS), d)})", lambda: f"sum({v(self.pick(['set:num', 'arr:num']), d)})",
                    lambda: f"object.get({v('obj:num', d)}, {v(STR, d)}, 0)", lambda: f"{v('arr:num', d)}[0]"]
        if typ == STR:
            return [*calls, lambda: f"concat(\"-\", {v(self.pick(['set:str', 'arr:str']), d)})",
                    lambda: f"sprintf(\"%v/%v\", [{v(self.pick(TYPES), d)}, {v(self.pick(TYPES), d)}])",
                    lambda: f"upper({v(STR, d)})", lambda: f"sprintf(\"%d\", [{v(NUM, d)}])"]
        if typ == BOOL:
            return [*calls, lambda: f"({v(NUM, d)} {self.pick(['<', '<=', '==', '!=', '>'])} {v(NUM, d)})",
                    lambda: f"({v(STR, d)} == {v(STR, d)})", lambda: self.membership(d)]
        kind, elem = typ.split(":")
        if kind == "set":
            return [*calls, lambda: "{" + self.comprehension(elem, d) + "}",
                    lambda: f"({v(typ, d)} {self.pick(['|', '&', '-'])} {v(typ, d)})"]
        if kind == "arr":
            return [*calls, lambda: "[" + self.comprehension(elem, d) + "]"]
        return [*calls, lambda: self.object_comprehension(d)]

    def use(self, name: str, depth: int) -> str:
        """A test on local ``name``: OPA rejects declared variables that nothing uses."""
        typ = self.locals[name]
        if typ == NUM:
            return f"{name} {self.pick(['<', '<=', '>', '>=', '!=', '=='])} {self.value(NUM, depth + 1)}"
        if typ == STR:
            return f"{name} {self.pick(['!=', '=='])} {self.value(STR, depth + 1)}"
        return f"{name} == {self.value(typ, depth + 1)}"

    def call(self, g: Group, depth: int) -> str:
        return f"{self.ref(g)}(" + ", ".join(self.value(t, depth) for t in g.args) + ")"

    def membership(self, depth: int) -> str:
        coll = self.pick([c for c in COLLS if c != "obj:num"])
        return f"({self.value(coll.split(':')[1], depth)} in {self.value(coll, depth)})"

    def comprehension(self, elem: str, depth: int) -> str:
        source = self.pick([c for c in COLLS if c.endswith(elem)])
        coll = self.value(source, depth)
        with self.scope():
            x = self.fresh(elem)
            body = [f"some {x} in {coll}", self.use(x, depth), *self.conditions(depth, self.draw(st.integers(0, 1)))]
            return f"{self.value(elem, depth)} | " + "; ".join(body)

    def object_comprehension(self, depth: int) -> str:
        coll = self.value("obj:num", depth)
        with self.scope():
            k, x = self.fresh(STR), self.fresh(NUM)
            body = [f"some {k}, {x} in {coll}", self.use(x, depth), *self.conditions(depth, self.draw(st.integers(0, 1)))]
            return f"{{{k}: {self.value(NUM, depth)} | " + "; ".join(body) + "}"

    def test(self, depth: int) -> str:
        """A one-line condition that binds nothing (usable under ``not``)."""
        bools = [g for g in self.before if g.kind == "bool"]
        options = [lambda: self.value(BOOL, depth + 1), lambda: self.membership(depth + 1)]
        if bools:
            options.append(lambda: self.ref(self.pick(bools)))
        return bare(options[self.draw(st.integers(0, len(options) - 1))]())

    def conditions(self, depth: int = 0, n: int = 1) -> list[str]:
        """``n`` body expressions; iterations and assignments bind locals for the ones after."""
        out: list[str] = []
        for _ in range(n):
            kind = self.pick(CONDITIONS if depth < 2 else [c for c in CONDITIONS if c in ("test", "not")])
            if kind == "test":
                out.append(self.test(depth))
            elif kind == "not":
                test = self.test(depth)
                # OPA takes `p := [1 | true] if { not true }` for defined, a quirk of its own
                out.append("not " + (self.membership(depth + 1) if test in ("true", "false") else test))
            elif kind == "some":
                coll = self.pick(COLLS)
                src = self.value(coll, depth + 1)
                shape, elem = coll.split(":")
                # the key: an object's, an array's index, or a set's element itself
                key = {"obj": STR, "arr": NUM, "set": elem}[shape]
                names = [self.fresh(key)] if shape == "obj" or self.chance(20) else []
                names.append(self.fresh(elem))
                out.append(f"some {', '.join(names)} in {src}")
                out += [self.use(name, depth) for name in names]
            elif kind == "assign":
                typ = self.pick(TYPES)
                rhs = self.value(typ, depth + 1)
                out.append(f"{self.fresh(typ)} := {rhs}")
            elif kind == "every":
                coll = self.pick(COLLS)
                src = self.value(coll, depth + 1)
                with self.scope():
                    x = self.fresh(coll.split(":")[1])
                    inner = [self.use(x, depth), *self.conditions(depth + 1, self.draw(st.integers(0, 1)))]
                out.append(f"every {x} in {src} {{ " + "; ".join(inner) + " }")
            else:
                out.append(self.with_expr(depth))
        return out

    def with_expr(self, depth: int) -> str:
        """An assignment evaluated with ``input``, a rule or a function replaced."""
        targets: list[tuple[str, str]] = [("input", json.dumps(self.draw(inputs())))]
        for g in self.before:
            if g.kind == "tree":
                targets += [(f"{self.ref(g)}.{p}", self.literal(t)) for p, t in g.leaves.items()]
            elif g.kind == "func":
                same = [h for h in self.before if h.kind == "func" and h.args == g.args and h.type == g.type]
                targets.append((self.ref(g), self.ref(self.pick(same)) if self.chance(70) else self.literal(g.type)))
            else:
                targets.append((self.ref(g), self.literal(g.type)))
        target, replacement = self.pick(targets)
        typ = self.pick(TYPES)
        rhs = self.value(typ, depth + 1)
        return f"{self.fresh(typ)} := {rhs} with {target} as {replacement}"


def bare(expr: str) -> str:
    """``expr`` without parentheses around the whole of it."""
    if not expr.startswith("("):
        return expr
    depth = 0
    for i, ch in enumerate(expr):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return expr[1:-1] if i == len(expr) - 1 else expr
    return expr


def body(lines: list[str]) -> str:
    # A line that starts with a minus would continue the line before it (`x := 1` `-2 in xs`).
    text = "".join(f";\n    {line}" if line.startswith("-") else f"\n    {line}" for line in lines)
    return " if {" + text + "\n}" if lines else ""


def gen_group(draw: st.DrawFn, g: Group, mods: list[Module], before: list[Group], counter: list[int]) -> None:
    """Writes the definitions of ``g`` into random modules of its package."""

    def gen() -> Gen:
        return Gen(draw, draw(st.sampled_from(mods)), before, counter)

    def write(gn: Gen, text: str) -> None:
        gn.mod.rules.append(text)

    t = g.type
    if g.kind == "const":
        gn = gen()
        write(gn, f"{g.name} := {gn.value(t, 1) if gn.chance(50) else gn.literal(t)}")
    elif g.kind in ("complete", "bool"):
        n = draw(st.integers(1, 3 if g.kind == "bool" else 2))
        cut = draw(st.integers(-2, 6))
        disjoint = draw(st.integers(0, 9)) > 0  # otherwise two definitions may conflict
        for i in range(n):
            gn = gen()
            lines = [f"input.n {'<' if i == 0 else '>='} {cut}"] if n > 1 and disjoint and g.kind == "complete" else []
            lines += gn.conditions(0, draw(st.integers(0 if lines else 1, 3)))
            if g.kind == "bool":
                write(gn, f"{g.name}{body(lines)}")
            else:
                with gn.scope(None if gn.chance(20) else {}):  # a head on body locals may take several values
                    head = gn.value(t)
                write(gn, f"{g.name} := {head}{body(lines)}")
        if draw(st.booleans()):
            gn = gen()
            write(gn, f"default {g.name} := {gn.literal(t)}")
    elif g.kind == "else":
        gn = gen()
        parts = []
        for i in range(draw(st.integers(2, 3))):
            with gn.scope():  # each branch has its own body
                lines = gn.conditions(0, draw(st.integers(1, 2)))
            with gn.scope({}):
                head = gn.value(t)
            parts.append(f"{g.name if i == 0 else 'else'} := {head}{body(lines)}")
        if draw(st.booleans()):
            parts.append(f"else := {gn.literal(t)}")
        write(gn, " ".join(parts))
    elif g.kind == "set":
        for _ in range(draw(st.integers(1, 3))):
            gn = gen()
            lines = gn.conditions(0, draw(st.integers(0, 3)))
            write(gn, f"{g.name} contains {gn.value(t.split(':')[1])}{body(lines)}")
    elif g.kind == "obj":
        for i in range(draw(st.integers(1, 2))):
            gn = gen()
            if i == 0:
                src = gn.value("obj:num", 1)  # before the iteration's names exist
                k, x = gn.fresh(STR), gn.fresh(NUM)
                lines = [f"some {k}, {x} in {src}", gn.use(x, 1)]
                key, keyed = k, {k: STR, x: NUM}
            else:
                src = gn.value(gn.pick(["arr:str", "set:str"]), 1)
                k = gn.fresh(STR)
                lines = [f"some {k} in {src}"]
                # a prefix keeps these keys apart from the first definition's, mostly
                key = f"concat(\"\", [\"t_\", {k}])" if gn.chance(85) else k
                keyed = {k: STR}
            lines += gn.conditions(0, draw(st.integers(0, 2)))
            with gn.scope(keyed):  # the value depends on the key's iteration only: no conflicting keys
                val = gn.value(NUM)
            write(gn, f"{g.name}[{key}] := {val}{body(lines)}")
    elif g.kind == "tree":
        for path, typ in g.leaves.items():
            gn = gen()
            if typ == "obj:num":
                src = gn.value("arr:str", 1)
                k = gn.fresh(STR)
                lines = [f"some {k} in {src}", *gn.conditions(0, draw(st.integers(0, 1)))]
                with gn.scope({k: STR}):
                    write(gn, f"{g.name}.{path}[{k}] := {gn.value(NUM)}{body(lines)}")
            else:
                lines = gn.conditions(0, draw(st.integers(0, 2)))
                with gn.scope({}):
                    write(gn, f"{g.name}.{path} := {gn.value(typ)}{body(lines)}")
    else:  # func
        n = draw(st.integers(1, 2))
        cut = draw(st.integers(-2, 6))
        for i in range(n):
            gn = gen()
            params = [gn.fresh(a) for a in g.args]
            # The body and head see copies: OPA's type checker rejects collections
            # built from a bare argument (`[x | true][0]`), which it cannot type.
            gn.locals = {}
            copies = {gn.fresh(a): a for a in g.args}
            lines = [f"{c} := {p}" for c, p in zip(copies, params)]
            if n > 1 and draw(st.integers(0, 9)) > 0:  # disjoint definitions, mostly
                if g.args[0] == NUM:
                    lines.append(f"{params[0]} {'<' if i == 0 else '>='} {cut}")
                else:
                    lines.append(f"{params[0]} {'==' if i == 0 else '!='} \"a\"")
            lines += gn.conditions(0, draw(st.integers(0, 2)))
            with gn.scope(None if gn.chance(15) else copies):
                head = gn.value(t)
            write(gn, f"{g.name}({', '.join(params)}) := {head}{body(lines)}")


def gen_imports(draw: st.DrawFn, mod: Module, pkgs: list[str], groups: list[Group]) -> None:
    for _ in range(draw(st.integers(0, 3))):
        pkg = draw(st.sampled_from(pkgs))
        rules = [g.name for g in groups if g.pkg == pkg]
        form = draw(st.sampled_from(["pkg", "alias", "alias", "rule", "rule-alias"]))
        rule = draw(st.sampled_from(rules)) if rules and form.startswith("rule") else None
        if form.startswith("rule") and rule is None:
            continue
        if form in ("alias", "rule-alias"):
            binding = draw(st.sampled_from(ALIASES))
        else:
            binding = rule or pkg
        if binding in mod.imports or (form == "pkg" and pkg == mod.pkg):
            continue
        path = f"data.fz.{pkg}" + (f".{rule}" if rule else "")
        mod.imports[binding] = (pkg, rule)
        mod.import_lines.append(f"import {path}" + (f" as {binding}" if form.endswith("alias") else ""))


@st.composite
def programs(draw: st.DrawFn) -> Program:
    """A program over 1-3 packages in 2-4 files, with the queries to compare it by."""
    pkgs = PACKAGES[: draw(st.integers(1, 3))]
    files = [*pkgs, *draw(st.lists(st.sampled_from(pkgs), min_size=max(0, 2 - len(pkgs)), max_size=4 - len(pkgs)))]
    mods = [Module(pkg, f"{pkg}/f{i + 1}.rego") for i, pkg in enumerate(files)]
    groups: list[Group] = []
    for _ in range(draw(st.integers(3, 8))):
        pkg = draw(st.sampled_from(pkgs))
        kind = draw(st.sampled_from(KINDS))
        pool = FUNC_NAMES if kind == "func" else TREE_NAMES if kind == "tree" else RULE_NAMES
        free = [n for n in pool if all(g.name != n or g.pkg != pkg for g in groups)]
        if not free:
            continue
        g = Group(pkg, draw(st.sampled_from(free)), kind, BOOL if kind == "bool" else draw(st.sampled_from(TYPES)))
        if kind == "set":
            g.type = draw(st.sampled_from(["set:num", "set:str"]))
        elif kind == "obj":
            g.type = "obj:num"
        elif kind == "func":
            g.type = draw(st.sampled_from([NUM, NUM, STR]))
            g.args = draw(st.lists(st.sampled_from([NUM, NUM, STR]), min_size=1, max_size=2))
        elif kind == "tree":
            paths = draw(st.lists(st.sampled_from(["x.k", "x.m", "y.k", "dyn"]), min_size=1, max_size=3, unique=True))
            g.leaves = {p: "obj:num" if p == "dyn" else draw(st.sampled_from([NUM, STR])) for p in paths}
        groups.append(g)
    for mod in mods:
        gen_imports(draw, mod, pkgs, groups)
    counter = [0]
    for i, g in enumerate(groups):
        gen_group(draw, g, [m for m in mods if m.pkg == g.pkg], groups[:i], counter)
    queries = ["x := data.fz"]
    for g in groups:
        if g.kind == "func":
            args = ", ".join(Gen(draw, mods[0], [], counter).literal(t) for t in g.args)
            queries.append(f"x := data.fz.{g.pkg}.{g.name}({args})")
        else:
            queries.append(f"x := data.fz.{g.pkg}.{g.name}")
    return Program({m.path: m.text() for m in mods}, queries)


def pyrego_answers(
    prog: Program, inp: dict[str, Any], order: Sequence[str] | None = None, input_at: int = 0
) -> list[tuple[list[dict[str, Any]] | None, str | None, str]]:
    """(bindings, error code, error message) for each query, from one engine (OPA runs with strict builtin errors).

    The files are added all at once, or with ``order`` (their paths) one by one
    in that order, the input set after the first ``input_at`` of them: the
    program is compiled as a whole at the first evaluation either way."""
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    try:
        if order is None:
            engine.add_policies(prog.modules)
            engine.set_input(inp)
        else:
            for i, path in enumerate(order):
                if i == input_at:
                    engine.set_input(inp)
                engine.add_policy(path, prog.modules[path])
            if input_at >= len(order):
                engine.set_input(inp)
    except pyrego.RegoError as exc:
        return [(None, exc.code, str(exc))] * len(prog.queries)
    out: list[tuple[list[dict[str, Any]] | None, str | None, str]] = []
    for query in prog.queries:
        try:
            res = engine.eval_query(query)
        except pyrego.RegoError as exc:
            out.append((None, exc.code, str(exc)))
            continue
        out.append(([dict(r.get("bindings") or {}) for r in res.get("result") or []], None, ""))
    return out


def difference(want: OracleResult, got: list[dict[str, Any]] | None, code: str | None, message: str) -> str | None:
    """How pyrego's answer differs from OPA's (as in test_differential), or None."""
    if want.is_error:
        opa = f"OPA raised {want.error_code} ({' '.join((want.error_message or '').split())[:300]})"
        if code is None:
            return f"{opa} but pyrego returned {_show(got)}"
        return None if code == want.error_code else f"{opa} but pyrego raised {code} ({' '.join(message.split())[:300]})"
    if code is not None:
        return f"OPA returned {_show(want.bindings)} but pyrego raised {code}: {' '.join(message.split())[:300]}"
    if _multiset(got or []) != _multiset(want.bindings):
        return f"OPA {_show(want.bindings)} != pyrego {_show(got)}"
    return None


def mismatches(oracle: Oracle, prog: Program, inp: dict[str, Any]) -> list[str]:
    """Every (form, query) on which pyrego and OPA disagree, described."""
    wants = [oracle.evaluate(prog.modules, query, input=inp) for query in prog.queries]
    out = []
    for form in EXECUTION_FORMS:
        with in_form(form):
            answers = pyrego_answers(prog, inp)
        for query, want, got in zip(prog.queries, wants, answers):
            problem = difference(want, *got)
            if problem is not None:
                out.append(f"[{form}] {query}: {problem}")
    return out


@FUZZ_SETTINGS
@given(prog=programs(), inp=inputs())
def test_modules_agree_with_opa(oracle: Oracle, prog: Program, inp: dict[str, Any]) -> None:
    problems = mismatches(oracle, prog, inp)
    assert not problems, "\n".join(problems) + f"\ninput: {json.dumps(inp)}"
