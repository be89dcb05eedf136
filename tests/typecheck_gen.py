"""Random Rego programs for differential tests of the type checker.

:func:`program` writes one module (``package p``) from a seed: constant rules
of many types, partial sets and objects, ref-head rules, functions, and test
rules whose bodies assign, compare, unify, call builtins, index into values,
iterate with ``some``/``every`` and build comprehensions. Operands are drawn
from values of every type, so that a good share of the programs are ill-typed
in the ways OPA's type checker refuses: wrong argument types (``count(1)``),
unification of different types (``x := 1; x == "a"``), refs into values that
do not have the key (``{"a": 1}.b``, ``[1].a``, ``1[0]``), wrong arities,
calls of functions with arguments of the wrong type. :func:`query` writes a
query over such a module.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field

# A value's kind: what the generator knows of it (its Rego type, roughly).
KINDS = ["num", "str", "bool", "null", "arr_num", "arr_str", "arr_mix", "set_num", "set_str", "obj", "obj_num", "any"]
COLLS = ["arr_num", "arr_str", "arr_mix", "set_num", "set_str", "obj", "obj_num"]
KEYS = ["a", "b", "c"]

# Builtins: name, the kinds each argument should have (one of), the result's kind.
BUILTINS: list[tuple[str, list[list[str]], str]] = [
    ("count", [COLLS + ["str"]], "num"),
    ("sum", [["arr_num", "set_num"]], "num"),
    ("max", [["arr_num", "set_num"]], "num"),
    ("upper", [["str"]], "str"),
    ("lower", [["str"]], "str"),
    ("concat", [["str"], ["arr_str", "set_str"]], "str"),
    ("startswith", [["str"], ["str"]], "bool"),
    ("contains", [["str"], ["str"]], "bool"),
    ("split", [["str"], ["str"]], "arr_str"),
    ("sprintf", [["str"], ["arr_num", "arr_str", "arr_mix"]], "str"),
    ("object.get", [["obj", "obj_num"], ["str"], KINDS], "any"),
    ("array.concat", [["arr_num", "arr_str"], ["arr_num", "arr_str"]], "arr_mix"),
    ("to_number", [["num", "str", "bool", "null"]], "num"),
    ("abs", [["num"]], "num"),
    ("sort", [["arr_num", "set_num"]], "arr_num"),
    ("json.marshal", [KINDS], "str"),
    ("is_string", [KINDS], "bool"),
    ("format_int", [["num"], ["num"]], "str"),
    ("trim", [["str"], ["str"]], "str"),
    ("replace", [["str"], ["str"], ["str"]], "str"),
    ("substring", [["str"], ["num"], ["num"]], "str"),
    ("indexof", [["str"], ["str"]], "num"),
    ("object.keys", [["obj", "obj_num"]], "set_str"),
    ("array.slice", [["arr_num", "arr_str"], ["num"], ["num"]], "arr_mix"),
    ("numbers.range", [["num"], ["num"]], "arr_num"),
    ("union", [["set_str"]], "any"),
    ("type_name", [KINDS], "str"),
]
OPERATORS = {"+": "num", "-": "num", "*": "num", "/": "num", "%": "num"}
COMPARISONS = ["==", "!=", "<", "<=", ">", ">="]


@dataclass
class Rule:
    name: str
    kind: str  # the kind of the document it makes
    function_args: list[str] | None = None


@dataclass
class Gen:
    rng: random.Random
    rules: list[Rule] = field(default_factory=list)
    locals: dict[str, str] = field(default_factory=dict)
    counter: int = 0

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent

    def pick(self, xs: list):  # type: ignore[no-untyped-def, type-arg]
        return self.rng.choice(xs)

    def fresh(self, kind: str) -> str:
        self.counter += 1
        name = f"v{self.counter}"
        self.locals[name] = kind
        return name

    # -- values -------------------------------------------------------------------

    def literal(self, kind: str, depth: int = 0) -> str:
        r = self.rng
        if kind == "num":
            return self.pick(["0", "1", "2", "-3", "1.5", "10"])
        if kind == "str":
            return json.dumps(self.pick(["a", "b", "x y", "", "1"]))
        if kind == "bool":
            return self.pick(["true", "false"])
        if kind == "null":
            return "null"
        if kind == "any":
            return self.pick(["input.a", "input.b.c", "input.xs[0]", "input.n"])
        if kind.startswith("arr"):
            elems = {"arr_num": ["num"], "arr_str": ["str"], "arr_mix": ["num", "str", "bool"]}[kind]
            return "[" + ", ".join(self.literal(self.pick(elems)) for _ in range(r.randrange(0 if depth else 1, 4))) + "]"
        if kind.startswith("set"):
            elem = "num" if kind == "set_num" else "str"
            items = [self.literal(elem) for _ in range(r.randrange(1, 4))]
            return "{" + ", ".join(items) + "}"
        if kind == "obj_num":
            keys = r.sample(KEYS, r.randrange(1, 4))
            return "{" + ", ".join(f'"{k}": {self.literal("num")}' for k in keys) + "}"
        keys = r.sample(KEYS, r.randrange(1, 4))
        return "{" + ", ".join(f'"{k}": {self.literal(self.pick(["num", "str", "bool"]))}' for k in keys) + "}"

    def value(self, kind: str, depth: int = 0) -> str:
        """An expression of (about) ``kind``: a literal, a local, a rule, or something built."""
        options: list[str] = [self.literal(kind, depth)]
        options += [n for n, k in self.locals.items() if k == kind] * 2
        options += [r.name for r in self.rules if r.kind == kind and r.function_args is None]
        if depth < 2 and self.chance(35):
            built = self.built(kind, depth + 1)
            if built:
                options.append(built)
        return str(self.pick(options))

    def any_value(self, depth: int = 0) -> str:
        return self.value(self.pick(KINDS), depth)

    def built(self, kind: str, depth: int) -> str | None:
        if kind == "num":
            op = self.pick(list(OPERATORS))
            return f"({self.operand(depth)} {op} {self.operand(depth)})"
        if kind == "bool":
            return f"({self.any_value(depth)} {self.pick(COMPARISONS)} {self.any_value(depth)})"
        fitting = [b for b in BUILTINS if b[2] == kind]
        if fitting and self.chance(60):
            return self.call(self.pick(fitting), depth)
        if kind in ("arr_num", "arr_str", "arr_mix", "set_num", "set_str"):
            return self.comprehension(kind, depth)
        if kind in ("obj", "obj_num"):
            return self.object_comprehension(depth)
        return None

    def operand(self, depth: int) -> str:
        """Mostly numbers, sometimes not (``1 + "a"``)."""
        return self.value("num" if self.chance(80) else self.pick(KINDS), depth)

    def call(self, b: tuple[str, list[list[str]], str], depth: int) -> str:
        name, args, _ = b
        out = []
        for kinds in args:
            out.append(self.value(self.pick(kinds) if self.chance(80) else self.pick(KINDS), depth))
        if self.chance(4):
            out.append(self.any_value(depth))  # one argument too many
        elif self.chance(3) and out:
            out.pop()
        return f"{name}({', '.join(out)})"

    def comprehension(self, kind: str, depth: int) -> str:
        src = self.value(self.pick(COLLS), depth)
        saved = dict(self.locals)
        x = self.fresh(self.pick(KINDS))
        cond = self.condition(depth + 1)
        term = self.pick([x, self.value(self.pick(KINDS), depth + 1)])
        self.locals = saved
        if kind.startswith("set"):
            return f"{{{term} | some {x} in {src}; {cond}}}"
        return f"[{term} | some {x} in {src}; {cond}]"

    def object_comprehension(self, depth: int) -> str:
        src = self.value(self.pick(["obj", "obj_num", "arr_num"]), depth)
        saved = dict(self.locals)
        k, v = self.fresh("str"), self.fresh("num")
        self.locals = saved
        return f"{{{k}: {v} | some {k}, {v} in {src}}}"

    def index(self, depth: int) -> str:
        """A ref into a value: by a key it may or may not have."""
        base = self.pick([n for n in self.locals] + [r.name for r in self.rules if r.function_args is None] or [self.literal("obj")])
        key = self.pick(['.a', '.b', '.z', '[0]', '[1]', '[_]', '["a"]', '[true]', ".a.b", "[0].a"])
        return f"{base}{key}"

    # -- bodies --------------------------------------------------------------------

    def condition(self, depth: int = 0) -> str:
        """An expression that binds nothing new (usable in comprehensions and under not)."""
        choice = self.rng.randrange(6)
        if choice == 0:
            return f"{self.any_value(depth)} {self.pick(COMPARISONS)} {self.any_value(depth)}"
        if choice == 1:
            return self.index(depth)
        if choice == 2:
            return self.call(self.pick(BUILTINS), depth)
        if choice == 3:
            return f"{self.any_value(depth)} == {self.any_value(depth)}"
        if choice == 4:
            return f"{self.any_value(depth)} in {self.value(self.pick(COLLS), depth)}"
        return self.pick(["true", self.value("bool", depth)])

    def statement(self) -> list[str]:
        choice = self.rng.randrange(11)
        if choice <= 2:
            kind = self.pick(KINDS)
            rhs = self.value(kind)
            name = self.fresh(kind)
            return [f"{name} := {rhs}", self.use(name)]
        if choice == 3:
            coll = self.pick(COLLS)
            src = self.value(coll)
            elem = {"arr_num": "num", "arr_str": "str", "set_num": "num", "set_str": "str", "obj_num": "num"}.get(coll, "any")
            if self.chance(40):
                k, v = self.fresh("any"), self.fresh(elem)
                return [f"some {k}, {v} in {src}", self.use(v), self.use(k)]
            v = self.fresh(elem)
            return [f"some {v} in {src}", self.use(v)]
        if choice == 4:
            src = self.value(self.pick(COLLS))
            saved = dict(self.locals)
            x = self.fresh("any")
            cond = self.condition(1)
            self.locals = saved
            return [f"every {x} in {src} {{ {x}; {cond} }}"]
        if choice == 5:
            return ["not " + self.condition()]
        if choice == 6:
            funcs = [r for r in self.rules if r.function_args is not None]
            if funcs:
                f = self.pick(funcs)
                args = [self.value(k if self.chance(70) else self.pick(KINDS)) for k in f.function_args or []]
                if self.chance(8):
                    args.append(self.any_value())
                call = f"{f.name}({', '.join(args)})"
                if self.chance(50):
                    name = self.fresh(f.kind)
                    return [f"{name} := {call}", self.use(name)]
                return [call]
        if choice == 7:
            a = self.fresh(self.pick(KINDS))
            return [f"{a} = {self.any_value()}", f"{a} = {self.any_value()}"]
        return [self.condition()]

    def use(self, name: str) -> str:
        kind = self.locals.get(name, "any")
        choice = self.rng.randrange(4)
        if choice == 0:
            return f"{name} == {self.value(kind if self.chance(60) else self.pick(KINDS))}"
        if choice == 1:
            return name + self.pick([".a", "[0]", "[_]", ".a.b", '["b"]'])
        if choice == 2:
            return f"{name} != {self.any_value()}"
        return name

    def body(self, n: int) -> str:
        saved = dict(self.locals)
        lines: list[str] = []
        for _ in range(n):
            lines += self.statement()
        self.locals = saved
        return "\n\t".join(lines)


def program(seed: int) -> str:
    """One module: a few rules of known kinds, then rules that use them."""
    g = Gen(random.Random(seed))
    out = ["package p", ""]
    for i in range(g.rng.randrange(1, 4)):
        kind = g.pick([k for k in KINDS if k != "any"])
        out.append(f"c{i} := {g.literal(kind)}")
        g.rules.append(Rule(f"c{i}", kind))
    if g.chance(50):
        coll = g.pick(["arr_num", "arr_str", "set_num"])
        elem = "num" if coll != "arr_str" else "str"
        out.append(f"s contains x if {{\n\tsome x in {g.value(coll)}\n}}")
        g.rules.append(Rule("s", "set_num" if elem == "num" else "set_str"))
    if g.chance(40):
        out.append(f'o[k] := v if {{\n\tsome k, v in {g.literal("obj_num")}\n}}')
        g.rules.append(Rule("o", "obj_num"))
    if g.chance(30):
        out.append(f"t.a.b := {g.literal('num')}")
        g.rules.append(Rule("t", "obj"))
    if g.chance(50):
        fn = g.pick([("x + 1", ["num"], "num"), ("upper(x)", ["str"], "str"), ("count(x)", ["arr_mix"], "num"),
                     ("concat(\",\", x)", ["arr_str"], "str"), ("x", ["any"], "any"), ("[x, y]", ["num", "str"], "arr_mix")])
        body, args, kind = fn
        params = ["x", "y"][: len(args)]
        out.append(f"f({', '.join(params)}) := {body}")
        g.rules.append(Rule("f", kind, args))
    for i in range(g.rng.randrange(1, 4)):
        name = f"r{i}"
        if g.chance(70):
            out.append(f"{name} if {{\n\t{g.body(g.rng.randrange(1, 4))}\n}}")
            g.rules.append(Rule(name, "bool"))
        else:
            kind = g.pick(KINDS)
            body = g.body(g.rng.randrange(1, 3))
            out.append(f"{name} := {g.value(kind)} if {{\n\t{body}\n}}")
            g.rules.append(Rule(name, kind))
    return "\n".join(out) + "\n"


def program_documents(seed: int) -> dict[str, str]:
    """Two modules whose rules build documents in many shapes: defaults, else
    chains, several definitions of one rule (their types merge), ref heads with
    constant and variable keys, partial sets and objects, functions with several
    definitions and array patterns, imports; the rules of ``package q`` read
    them through short names, imports, ``data`` refs (whole packages too),
    ``with`` and template strings, rightly or wrongly."""
    g = Gen(random.Random(seed))
    p = ["package p", ""]
    shapes: list[tuple[str, str]] = []  # how package q can read what p defines, and the kind
    for i in range(g.rng.randrange(2, 5)):
        shape = g.rng.randrange(9)
        name = f"d{i}"
        kind = g.pick([k for k in KINDS if k != "any"])
        if shape == 0:
            other = g.pick([k for k in KINDS if k != "any"])
            p += [f"default {name} := {g.literal(kind)}", f"{name} := {g.literal(other)} if input.x"]
            shapes.append((name, "any"))
        elif shape == 1:
            p.append(f"{name} := {g.literal(kind)} if input.a else := {g.literal(g.pick(KINDS[:4]))}")
            shapes.append((name, "any"))
        elif shape == 2:
            p += [f"{name}.a.b := {g.literal(kind)}", f"{name}.a.c := {g.literal('str')}"]
            shapes += [(f"{name}.a.b", kind), (f"{name}.a", "obj"), (name, "obj")]
        elif shape == 3:
            p.append(f"{name}[k] := {g.literal(kind)} if some k in [\"a\", \"b\"]")
            shapes += [(f"{name}.a", kind), (name, "obj")]
        elif shape == 4:
            p.append(f"{name}.x[k].y := {g.literal(kind)} if some k in {g.literal('arr_str')}")
            shapes += [(f"{name}.x", "obj"), (name, "obj")]
        elif shape == 5:
            p += [f"{name} contains {g.literal('num')}", f"{name} contains {g.literal(g.pick(['num', 'str']))} if input.y"]
            shapes.append((name, "set_num"))
        elif shape == 6:
            p += [f"{name}(x) := x + 1", f"{name}(x) := upper(x) if is_string(x)"]
            shapes.append((f"{name}(1)", "any"))
        elif shape == 7:
            p.append(f"{name}([a, b]) := a + b")
            shapes.append((f"{name}([1, 2])", "num"))
        else:
            p.append(f"{name} := {g.literal(kind)}")
            shapes.append((name, kind))
    q = ["package q", "", "import data.p", f"import data.p.{shapes[0][0].split('.')[0].split('(')[0]} as first", ""]
    for i in range(g.rng.randrange(1, 4)):
        lines: list[str] = []
        for _ in range(g.rng.randrange(1, 4)):
            target, kind = g.pick(shapes)
            via = g.pick([f"p.{target}", f"data.p.{target}", "data.p", f"data.p[{json.dumps(g.pick(['d0', 'd1', 'zz']))}]"])
            choice = g.rng.randrange(7)
            if choice == 0:
                lines.append(f"{via} == {g.value(g.pick(KINDS))}")
            elif choice == 1:
                lines.append(f"{via}{g.pick(['.a', '[0]', '.a.b', '[_]', '.x.y', '.zz'])}")
            elif choice == 2:
                b = g.pick(BUILTINS)
                lines.append(f"{b[0]}({', '.join([via] + [g.value(g.pick(ks)) for ks in b[1][1:]])})")
            elif choice == 3:
                lines.append(f"x{i}_{len(lines)} := {via}")
                lines.append(f"x{i}_{len(lines) - 1}" + g.pick(["", ".a", "[0]", " == 1", ' == "s"']))
            elif choice == 4:
                lines.append(f"first{g.pick(['', '.a', '[0]', ' == 1'])}")
            elif choice == 5:
                lines.append(f"{via} with input as {g.literal('obj')}")
            else:
                lines.append(f'x{i}_{len(lines)} := $"v={{{via}}}"')
                lines.append(f"upper(x{i}_{len(lines) - 1})")
        q.append(f"r{i} if {{\n\t" + "\n\t".join(lines) + "\n}")
    return {"p.rego": "\n".join(p) + "\n", "q.rego": "\n".join(q) + "\n"}


def query(seed: int) -> str:
    """A query over the module of the same seed's kinds (rules referred to by data.p...)."""
    g = Gen(random.Random(seed * 7919 + 1))
    g.rules = [Rule("data.p.c0", "any")]
    lines = g.statement() + ([g.condition()] if g.chance(50) else [])
    return "; ".join(lines)


def split_module(text: str, files: int, rng: random.Random) -> list[str]:
    """``text`` (one module) dealt into ``files`` modules of the same package.

    A rule is a line that starts in the first column (not ``package`` or
    ``import``) with the indented and closing lines after it; each rule goes
    to a random file, keeping their order within a file. Every file gets the
    module's ``package`` and ``import`` lines; no file is left without a rule
    (there are fewer files when there are fewer rules)."""
    header: list[str] = []
    rules: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith(("package ", "import ")):
            header.append(line)
        elif not line.strip():
            continue
        elif line[0] in "\t }" and rules:
            rules[-1].append(line)
        else:
            rules.append([line])
    files = max(1, min(files, len(rules)))
    slots = list(range(files)) + [rng.randrange(files) for _ in range(max(0, len(rules) - files))]
    rng.shuffle(slots)
    bodies: list[list[str]] = [[] for _ in range(files)]
    for slot, rule in zip(slots, rules):
        bodies[slot] += rule
    return ["\n".join([*header, "", *body]) + "\n" for body in bodies]


def program_files(seed: int) -> dict[str, str]:
    """The module of :func:`program` for ``seed`` dealt into 2-4 files (``p/1.rego`` ...)
    of ``package p``, the files in a random order: rules defined in one file are
    used in others, and a file may come before the files that define what it uses."""
    rng = random.Random(f"split-{seed}")
    texts = split_module(program(seed), rng.randint(2, 4), rng)
    names = [f"p/{i}.rego" for i in range(len(texts))]
    order = list(range(len(texts)))
    rng.shuffle(order)
    return {names[i]: texts[i] for i in order}


def program_documents_files(seed: int) -> dict[str, str]:
    """The two packages of :func:`program_documents` for ``seed``, each dealt into
    1-3 files, all in a random order (so ``q``'s files, which read ``p``'s rules,
    often come first)."""
    rng = random.Random(f"split-documents-{seed}")
    files: dict[str, str] = {}
    for name, text in program_documents(seed).items():
        pkg = name.removesuffix(".rego")
        for i, part in enumerate(split_module(text, rng.randint(1, 3), rng)):
            files[f"{pkg}/{i}.rego"] = part
    names = list(files)
    rng.shuffle(names)
    return {n: files[n] for n in names}
