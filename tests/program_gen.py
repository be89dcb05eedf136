"""Random whole Rego programs for differential testing against OPA.

:func:`gen_program` builds, from a ``random.Random``, a program of one to three
packages over one to four files: complete rules (several definitions, defaults,
``else`` chains), partial sets and objects, ref-head rules (``a.b[x] contains
y``, ``p.q[k] := v``, ``r.s.t := v``), functions with several definitions,
imports (plain and aliased), ``not``, ``every``, ``some ... in``,
comprehensions, ``with`` on input, data and functions, unification, ``:=``,
arithmetic and comparisons on mixed values, builtins and ``print``; random JSON
inputs and base data go with it. Rules only use rules defined before them (no
recursion), so most programs compile; some are meant to fail (conflicts, type
errors).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

PACKAGES = ["gen.a", "gen.b", "gen.a.c"]
STRINGS = ["", "a", "b", "ab", "1", "true", "A", "é", "a,b"]
CMP = ["==", "!=", "<", "<=", ">", ">="]
ARITH = ["+", "-", "*", "/", "%"]
SEPS = ['","', '"."', '""']
FORMATS = ['"%d"', '"%s-%v"', '"%.2f"', '"%x"']
REGEXES = ['"^a"', '"b$"', '"[a-c]+"']


@dataclass
class Rule:
    pkg: str
    name: str
    kind: str  # complete | set | object | refset | refobj | refconst | func
    arity: int = 0
    texts: list[str] = field(default_factory=list)


@dataclass
class Program:
    modules: dict[str, str]
    data: Any
    inputs: list[Any]
    queries: list[tuple[str, str | None]]  # (query, rule path for eval_rule or None)


def json_value(r: random.Random, depth: int = 0) -> Any:
    k = r.randrange(9 if depth < 2 else 6)
    if k == 0:
        return None
    if k == 1:
        return r.choice([True, False])
    if k == 2:
        return r.choice([0, 1, 2, -1, 3, 10, 2**65])
    if k == 3:
        return r.choice([0.5, 1.0, -2.5, 2.25, 1e-3])
    if k in (4, 5):
        return r.choice(STRINGS)
    if k in (6, 7):
        return [json_value(r, depth + 1) for _ in range(r.randint(0, 4))]
    return {r.choice(["a", "b", "c", "1", "x"]): json_value(r, depth + 1) for _ in range(r.randint(0, 3))}


def gen_input(r: random.Random) -> Any:
    if r.random() < 0.05:
        v = json_value(r)  # (not an object; not null, which the oracle takes for no input)
        return v if v is not None else [v]
    inp: dict[str, Any] = {}
    for key in ("a", "b", "n", "s"):
        if r.random() < 0.85:
            v = json_value(r, 2)
            if key == "n" and r.random() < 0.7:
                v = r.choice([0, 1, 2, 3, -1, 1.5, 2.0])
            if key == "s" and r.random() < 0.7:
                v = r.choice(STRINGS)
            inp[key] = v
    if r.random() < 0.9:
        inp["xs"] = [json_value(r, 2) if r.random() < 0.5 else r.choice([1, 2, 3, "a", "b", 2.0]) for _ in range(r.randint(0, 5))]
    if r.random() < 0.9:
        inp["m"] = {r.choice(["a", "b", "c", "x", "1"]): json_value(r, 2) for _ in range(r.randint(0, 4))}
    return inp


def gen_data(r: random.Random) -> Any:
    return {
        "d": {
            "x": json_value(r, 1),
            "n": r.choice([1, 2, 2.5, -3]),
            "list": [r.choice([1, 2, "a", None, True, 1.0, [1]]) for _ in range(r.randint(0, 4))],
            "obj": {r.choice(["a", "b", "c"]): json_value(r, 2) for _ in range(r.randint(0, 3))},
        }
    }


class Gen:
    def __init__(self, r: random.Random, ext: bool = False) -> None:
        self.r = r
        self.ext = ext  # (the constructs of program_gen_ext.ExtGen's ext_term, ext_lit, ext_rule too)
        self.pkgs = PACKAGES[: r.randint(1, 3)]
        self.rules: list[Rule] = []
        self.imports: dict[str, dict[str, str]] = {p: {} for p in self.pkgs}  # pkg -> alias -> target package
        self.nvar = 0
        self.cur_pkg = self.pkgs[0]
        self.visible: list[Rule] = []
        self.funcs: list[Rule] = []
        self.declared: list[str] = []

    # ------------------------------------------------------------ names and refs

    def fresh(self) -> str:
        self.nvar += 1
        return f"v{self.nvar}"

    def ref(self, rule: Rule) -> str:
        """A reference to ``rule`` from the current package."""
        r = self.r
        if rule.pkg == self.cur_pkg and r.random() < 0.7:
            return rule.name
        for alias, target in self.imports[self.cur_pkg].items():
            if target == rule.pkg and r.random() < 0.7:
                return f"{alias}.{rule.name}"
        return f"data.{rule.pkg}.{rule.name}"

    def pick(self, kinds: tuple[str, ...]) -> Rule | None:
        cands = [x for x in self.visible if x.kind in kinds]
        return self.r.choice(cands) if cands else None

    # ------------------------------------------------------------ terms

    def scalar(self) -> str:
        r = self.r
        k = r.randrange(8)
        if k == 0:
            return "null"
        if k == 1:
            return r.choice(["true", "false"])
        if k == 2:
            return str(r.choice([0, 1, 2, 3, -1, 10]))
        if k == 3:
            return r.choice(["0.5", "1.0", "-2.5", "2.25", "1e2", "3.0"])
        if k == 4:
            return str(r.choice([2**64, -(2**70) + 1, 12345678901234567890]))
        return json.dumps(r.choice(STRINGS), ensure_ascii=False)

    def input_ref(self) -> str:
        r = self.r
        return r.choice(["input.a", "input.b", "input.n", "input.s", "input.xs", "input.m", "input.xs[0]", "input.xs[1]", "input.m.a", "input.m.x", "input.m[input.s]", "input.xs[input.n]", "input"])

    def data_ref(self) -> str:
        if self.r.random() < 0.05:
            return self.r.choice([f"data.{p}" for p in self.pkgs if p != self.cur_pkg] or ["data.d"])  # (a whole package)
        return self.r.choice(["data.d.x", "data.d.n", "data.d.list", "data.d.obj", "data.d.obj.a", "data.d.list[0]", "data.d.missing"])

    def coll(self, env: list[str], depth: int = 1) -> str:
        r = self.r
        k = r.randrange(11)
        if k == 0:
            return r.choice(["input.xs", "input.m", "input.a", "input.b"])
        if k == 1:
            return r.choice(["data.d.list", "data.d.obj", "data.d.x"])
        if k == 2:
            rule = self.pick(("set", "object", "refset", "refobj", "refconst"))
            if rule is not None:
                return self.ref(rule)
        if k == 3 and r.random() < 0.3:
            rule = self.pick(("complete",))
            if rule is not None:
                return self.ref(rule)
        if k == 4 and depth < 3:
            v = self.fresh()
            return f"[{v} | some {v} in {self.coll(env, depth + 1)}]"
        if k == 5:
            return f"numbers.range(0, {r.randint(0, 3)})"
        if k == 6 and env:
            return r.choice(env)
        n = r.randint(0, 3)
        items = [self.term(env, depth + 1) for _ in range(n)]
        kind = r.randrange(3)
        if kind == 0:
            return "[" + ", ".join(items) + "]"
        if kind == 1:
            return "{" + ", ".join(items) + "}" if items else "set()"
        return "{" + ", ".join(f"{i}: {self.term(env, depth + 1)}" for i in items) + "}"

    def term(self, env: list[str], depth: int = 0) -> str:
        r = self.r
        if depth >= 3:
            return self.scalar() if not env or r.random() < 0.5 else r.choice(env)
        if self.ext and r.random() < 0.15:
            return self.ext_term(env, depth)
        k = r.randrange(20)
        if k < 3:
            return self.scalar()
        if k < 6 and env:
            return r.choice(env)
        if k < 8:
            return self.input_ref()
        if k == 8:
            return self.data_ref()
        if k in (9, 10):
            rule = self.pick(("complete", "set", "object", "refconst", "refobj", "refset"))
            if rule is not None:
                t = self.ref(rule)
                if rule.kind in ("object", "set") and r.random() < 0.4:
                    t += f"[{r.choice([self.input_ref(), *env])}]"
                return t
        if k == 11:
            return f"({self.num(env, depth + 1)} {r.choice(ARITH)} {self.num(env, depth + 1)})"
        if k == 12:
            return self.call(env, depth + 1)
        if k == 13:
            f = self.pick(("func",))
            if f is not None:
                return f"{self.ref(f)}(" + ", ".join(self.term(env, depth + 1) for _ in range(f.arity)) + ")"
        if k == 14:
            return self.comprehension(env, depth + 1)
        if k == 15:
            return self.coll(env, depth + 1)
        if k == 16:
            return f"{self.term(env, depth + 1)} {r.choice(CMP)} {self.term(env, depth + 1)}" if depth == 0 and r.random() < 0.3 else self.scalar()
        return self.scalar()

    def num(self, env: list[str], depth: int) -> str:
        """A term that is a number, or of a type the checker cannot tell."""
        r = self.r
        k = r.randrange(9)
        if k == 0 and env:
            return r.choice(env)
        if k == 1:
            return r.choice(["input.n", "input.a", "input.xs[0]", "data.d.n", "input.m.a"])
        if k == 2 and depth < 3:
            return f"({self.num(env, depth + 1)} {r.choice(ARITH)} {self.num(env, depth + 1)})"
        if k == 3 and depth < 3:
            return f"count({self.coll(env, depth + 1)})"
        if k == 4 and depth < 3:
            return f"to_number({self.term(env, depth + 1)})"
        if k == 5:
            rule = self.pick(("complete",))
            if rule is not None:
                return self.ref(rule)
        if k == 6:
            return str(r.choice([2**64, -(2**70) + 1, 12345678901234567890]))
        if k == 7:
            return r.choice(["0.5", "1.0", "-2.5", "2.25", "1e2", "3.0", "0.1"])
        return str(r.choice([0, 1, 2, 3, -1, 10]))

    def typed(self, kind: str, env: list[str], depth: int) -> str:
        """A collection of one kind (arr, set, obj; num, str: arrays of those), or of a type the checker cannot tell."""
        r = self.r
        if r.random() < 0.4:
            return r.choice(["input.xs", "input.m", "input.a", "data.d.x", "input"] + env)
        if kind == "num":
            return "[" + ", ".join(self.num(env, depth + 1) for _ in range(r.randint(0, 3))) + "]"
        if kind == "str":
            return "[" + ", ".join(json.dumps(r.choice(STRINGS), ensure_ascii=False) if r.random() < 0.7 else self.input_ref() for _ in range(r.randint(0, 3))) + "]"
        if kind == "arr":
            if r.random() < 0.3:
                v = self.fresh()
                return f"[{v} | some {v} in {self.coll(env, depth + 1)}]"
            return "[" + ", ".join(self.term(env, depth + 1) for _ in range(r.randint(0, 3))) + "]"
        if kind == "set":
            rule = self.pick(("set",))
            if rule is not None and r.random() < 0.4:
                return self.ref(rule)
            if r.random() < 0.3:
                v = self.fresh()
                return f"{{{v} | some {v} in {self.coll(env, depth + 1)}}}"
            items = [self.term(env, depth + 1) for _ in range(r.randint(0, 3))]
            return "{" + ", ".join(items) + "}" if items else "set()"
        rule = self.pick(("object",))
        if rule is not None and r.random() < 0.4:
            return self.ref(rule)
        return "{" + ", ".join(f"{self.term(env, depth + 1)}: {self.term(env, depth + 1)}" for _ in range(r.randint(0, 3))) + "}"

    def call(self, env: list[str], depth: int) -> str:
        r = self.r
        t = lambda: self.term(env, depth + 1)  # noqa: E731
        c = lambda: self.coll(env, depth + 1)  # noqa: E731
        k = r.randrange(16)
        return [
            lambda: f"count({c()})",
            lambda: f"sum({self.typed('num', env, depth + 1)})",
            lambda: f"max({c()})",
            lambda: f"object.get({self.typed('obj', env, depth + 1)}, {t()}, {t()})",
            lambda: f"type_name({t()})",
            lambda: f"to_number({t()})",
            lambda: f"abs({self.num(env, depth + 1)})",
            lambda: f"concat(\",\", {self.typed('str', env, depth + 1)})",
            lambda: f"sort({self.typed('arr', env, depth + 1)})",
            lambda: f"is_number({t()})",
            lambda: f"is_string({t()})",
            lambda: f"sprintf(\"%v\", [{t()}])",
            lambda: f"array.concat({self.typed('arr', env, depth + 1)}, {self.typed('arr', env, depth + 1)})",
            lambda: f"{self.typed('set', env, depth + 1)} {r.choice(['|', '&', '-'])} {self.typed('set', env, depth + 1)}",
            lambda: f"object.keys({self.typed('obj', env, depth + 1)})",
            lambda: f"json.marshal({t()})",
        ][k]()

    def comprehension(self, env: list[str], depth: int) -> str:
        r = self.r
        v = self.fresh()
        inner = [*env, v]
        src = self.coll(env, depth + 1)
        cond = ""
        if r.random() < 0.6:
            cond = "; " + self.cond(inner, depth + 1)
        k = r.randrange(3)
        if k == 0:
            return f"[{v} | some {v} in {src}{cond}]"
        if k == 1:
            return f"{{{v} | some {v} in {src}{cond}}}"
        kk = self.fresh()
        inner.append(kk)
        return f"{{{kk}: {v} | some {kk}, {v} in {src}{cond}}}"

    def negated(self, t: str) -> str:
        """``not t``. Not of a constant: OPA v1.20.2 drops ``not true`` from a
        body whose rule has a ref in its head's key (``r[input.a] := 1 if not
        true`` is defined), which only a policy written to find it has."""
        if t.startswith("not "):
            return t
        if t in ("null", "true", "false") or t[:1] in '"-0123456789':
            t = self.input_ref()
        return f"not {t}"

    def cond(self, env: list[str], depth: int = 1) -> str:
        """A literal that binds nothing."""
        r = self.r
        k = r.randrange(6)
        if k < 3:
            a, b = self.term(env, depth), self.term(env, depth)
            if r.random() < 0.7:
                b = r.choice([self.input_ref(), self.data_ref(), *env, *env])
            return f"{a} {r.choice(CMP)} {b}" if r.random() < 0.5 else f"{b} {r.choice(CMP)} {a}"
        if k == 3:
            return self.negated(self.term(env, depth))
        if k == 4:
            return f"{self.term(env, depth)} in {self.coll(env, depth)}"
        return self.term(env, depth)

    # ------------------------------------------------------------ bodies

    def body(self, env: list[str], n: int | None = None) -> list[str]:
        """Literals; ``env`` grows with the variables they bind."""
        r = self.r
        lits: list[str] = []
        for _ in range(r.randint(0, 3) if n is None else n):
            if self.ext and r.random() < 0.15:
                lits.append(self.ext_lit(env))
                continue
            k = r.randrange(16)
            if k < 2:
                v = self.fresh()
                lits.append(f"{v} := {self.term(env)}")
                env.append(v)
            elif k == 2:
                v = self.fresh()
                lits.append(f"some {v} in {self.coll(env)}")
                env.append(v)
                self.declared.append(v)
            elif k == 3:
                kv, vv = self.fresh(), self.fresh()
                lits.append(f"some {kv}, {vv} in {self.coll(env)}")
                env += [kv, vv]
                self.declared += [kv, vv]
            elif k == 4:
                v = self.fresh()
                if r.random() < 0.5:
                    lits.append(f"{v} = {self.term(env)}")
                    env.append(v)
                else:
                    w = self.fresh()
                    lits.append(f"[{v}, {w}] = {r.choice(['input.xs', 'data.d.list', '[1, 2]', 'input.m.a', '[input.a, 3]'])}")
                    env += [v, w]
            elif k == 5 and env:
                lits.append(f"{r.choice(env)} = {r.choice([self.input_ref(), *env])}")
            elif k == 6:
                v = self.fresh()
                inner = [*env, v]
                use = r.choice([f"{v} {r.choice(CMP)} {self.term(inner)}", f"not {v}", f"{v} in {self.coll(inner)}", f"{self.cond(inner)}; {v}"])
                if r.random() < 0.3:
                    kv = self.fresh()
                    lits.append(f"every {kv}, {v} in {self.coll(env)} {{ {use}; {kv} != \"zz\" }}")
                else:
                    lits.append(f"every {v} in {self.coll(env)} {{ {use} }}")
            elif k == 7:
                lits.append(self.negated(self.cond(env) if r.random() < 0.5 else self.term(env)))
            elif k == 8:
                lits.append(self.with_lit(env))
            elif k == 9:
                lits.append(f"print({self.term(env)})")
            elif k == 10:
                rule = self.pick(("set", "object", "refset", "refobj"))
                if rule is not None:
                    v = self.fresh()
                    lits.append(f"{self.ref(rule)}[{v}]")
                    env.append(v)
                    continue
                lits.append(self.cond(env))
            else:
                lits.append(self.cond(env))
        return lits

    def with_lit(self, env: list[str]) -> str:
        r = self.r
        target_lit = self.cond(env) if r.random() < 0.5 else self.term(env)
        k = r.randrange(5)
        if k == 0:
            w = f"with input as {self.coll([], 2)}" if r.random() < 0.3 else f"with input.{r.choice(['a', 'b', 'n', 'xs', 'm'])} as {self.term([], 2)}"
        elif k == 1:
            rule = self.pick(("complete", "set", "object"))
            path = f"data.{rule.pkg}.{rule.name}" if rule is not None else "data.d.x"
            w = f"with {path} as {self.term([], 2)}"
        elif k == 2:
            f = self.pick(("func",))
            g = [x for x in self.visible if x.kind == "func" and f is not None and x.arity == f.arity]
            if f is not None and g:
                w = f"with data.{f.pkg}.{f.name} as {r.choice(['data.' + x.pkg + '.' + x.name for x in g] + [self.scalar()])}"
            else:
                w = "with data.d.n as 7"
        elif k == 3:
            one = [x for x in self.visible if x.kind == "func" and x.arity == 1]
            repl = r.choice([self.scalar()] + ([f"data.{one[0].pkg}.{one[0].name}"] if one else []))
            w = f"with count as {repl}" if r.random() < 0.5 else f"with to_number as {repl}"
        else:
            w = f"with data.d as {self.coll([], 2)}"
        return f"{target_lit} {w}"

    def body_text(self, lits: list[str]) -> str:
        declared, self.declared = self.declared, []
        text = "\n".join(lits)
        for v in declared:
            if len(re.findall(rf"\b{v}\b", text)) < 2:
                lits.append(f"{v} != \"zz\"")
        if not lits:
            return ""
        if len(lits) == 1 and self.r.random() < 0.5 and "\n" not in lits[0]:
            return " if " + lits[0] if not lits[0].startswith(("some ", "every ")) else " if { " + lits[0] + " }"
        return " if {\n\t" + "\n\t".join(lits) + "\n}"

    # ------------------------------------------------------------ rules

    def new_rule(self, idx: int) -> Rule:
        r = self.r
        pkg = r.choice(self.pkgs)
        self.cur_pkg = pkg
        kind = r.choices(["complete", "set", "object", "refset", "refobj", "refconst", "func"], [5, 2, 2, 1, 1, 1, 2])[0]
        name = f"{kind[0]}{idx}" if kind != "refconst" else f"k{idx}"
        rule = Rule(pkg, name, kind)
        if self.ext and r.random() < 0.3:
            return self.ext_rule(rule)
        ndefs = r.choices([1, 2, 3], [6, 3, 1])[0]
        if kind == "complete":
            if r.random() < 0.3:
                rule.texts.append(f"default {name} := {self.scalar()}")
            if r.random() < 0.2:
                # else chain
                parts = []
                for j in range(r.randint(2, 3)):
                    env: list[str] = []
                    b = self.body(env, r.randint(0, 2))
                    val = self.term(env, 1)
                    head = f"{name} := {val}" if j == 0 else f"else := {val}"
                    if not b and j == 0:
                        b = ["true"]
                    bt = self.body_text(b)
                    if bt and not bt.endswith("}"):
                        bt = " if {\n\t" + bt[4:] + "\n}"
                    parts.append(head + bt)
                    if not bt:
                        break
                rule.texts.append(" ".join(parts))
            else:
                for _ in range(ndefs):
                    env = []
                    b = self.body(env)
                    if r.random() < 0.3:
                        rule.texts.append(f"{name}{self.body_text(b) or ' := true'}")
                    else:
                        rule.texts.append(f"{name} := {self.term(env, 1)}{self.body_text(b)}")
        elif kind == "set":
            for _ in range(ndefs):
                env = []
                b = self.body(env, r.randint(1, 3))
                rule.texts.append(f"{name} contains {self.term(env, 1)}{self.body_text(b)}")
        elif kind == "object":
            for _ in range(ndefs):
                env = []
                b = self.body(env, r.randint(1, 3))
                rule.texts.append(f"{name}[{self.term(env, 2)}] := {self.term(env, 1)}{self.body_text(b)}")
        elif kind == "refset":
            for _ in range(ndefs):
                env = []
                b = self.body(env, r.randint(1, 3))
                key = r.choice(["x", "y"])
                if r.random() < 0.5:
                    rule.texts.append(f"{name}.{key}[{self.term(env, 2)}] contains {self.term(env, 1)}{self.body_text(b)}")
                else:
                    rule.texts.append(f"{name}.{key} contains {self.term(env, 1)}{self.body_text(b)}")
        elif kind == "refobj":
            for _ in range(ndefs):
                env = []
                b = self.body(env, r.randint(1, 3))
                rule.texts.append(f"{name}.{r.choice(['x', 'y'])}[{self.term(env, 2)}] := {self.term(env, 1)}{self.body_text(b)}")
        elif kind == "refconst":
            for j in range(ndefs + 1):
                env = []
                b = self.body(env)
                key = r.choice(["x", "y.z", "y.w", "q"]) if r.random() < 0.8 else f"x{j}"
                rule.texts.append(f"{name}.{key} := {self.term(env, 1)}{self.body_text(b)}")
        else:
            rule.arity = r.choice([1, 1, 2])
            if r.random() < 0.2:
                rule.texts.append(f"default {name}(" + ", ".join("_" for _ in range(rule.arity)) + f") := {self.scalar()}")
            for _ in range(ndefs):
                params = []
                env = []
                for _ in range(rule.arity):
                    if r.random() < 0.2:
                        params.append(self.scalar())
                    else:
                        p = self.fresh()
                        params.append(p)
                        env.append(p)
                param_env = list(env)
                b = self.body(env)
                if r.random() < 0.2 and not b:
                    b = [self.cond(env)]
                text = f"{name}({', '.join(params)}) := {self.term(env, 1)}{self.body_text(b)}"
                if b and r.random() < 0.2:
                    # an else branch (its body braced, as the parser wants before another else)
                    env = param_env
                    eb = self.body(env, 1)
                    ebt = self.body_text(eb)
                    if ebt and not ebt.endswith("}"):
                        ebt = " if {\n\t" + ebt[4:] + "\n}"
                    if not text.endswith("}"):
                        text = text[: text.index(" if ")] + " if {\n\t" + text[text.index(" if ") + 4 :] + "\n}"
                    text += f" else := {self.term(env, 1)}{ebt}"
                rule.texts.append(text)
        return rule

    def build(self) -> Program:
        r = self.r
        for pkg in self.pkgs:
            others = [p for p in self.pkgs if p != pkg]
            for o in others:
                if r.random() < 0.5:
                    alias = o.split(".")[-1] if r.random() < 0.5 else f"m_{o.replace('.', '_')}"
                    if alias not in self.imports[pkg]:
                        self.imports[pkg][alias] = o
        n_rules = r.randint(3, 9)
        for i in range(n_rules):
            rule = self.new_rule(i)
            self.rules.append(rule)
            self.visible.append(rule)
        n_files = r.randint(1, 4)
        file_pkg = [self.pkgs[i] if i < len(self.pkgs) else r.choice(self.pkgs) for i in range(max(n_files, len(self.pkgs)))]
        bodies: list[list[str]] = [[] for _ in file_pkg]
        for rule in self.rules:
            for text in rule.texts:
                bodies[r.choice([i for i, p in enumerate(file_pkg) if p == rule.pkg])].append(text)
        modules = {}
        order = list(range(len(file_pkg)))
        r.shuffle(order)
        for i in order:
            pkg = file_pkg[i]
            imps = []
            for alias, target in self.imports[pkg].items():
                imps.append(f"import data.{target}" if alias == target.split(".")[-1] else f"import data.{target} as {alias}")
            if r.random() < 0.2:
                imps.append("import rego.v1")
            if self.ext and r.random() < 0.15:
                imps.append(r.choice(["import future.keywords", "import future.keywords.in", "import future.keywords.every"]))
            if r.random() < 0.1:
                imps.append("import input.m as mm")
            modules[f"gen/f{i}.rego"] = f"package {pkg}\n\n" + "\n".join(imps) + "\n\n" + "\n\n".join(bodies[i]) + "\n"
        queries: list[tuple[str, str | None]] = []
        for rule in self.rules:
            path = f"data.{rule.pkg}.{rule.name}"
            if rule.kind == "func":
                args = ", ".join(self.term([], 2) for _ in range(rule.arity))
                queries.append((f"x := {path}({args})", None))
            else:
                queries.append((f"x := {path}", path))
                if rule.kind in ("set", "object") and r.random() < 0.3:
                    queries.append((f"{path}[k]", None))
        queries.append(("x := data.gen", "data.gen"))
        inputs = [gen_input(r) for _ in range(r.randint(2, 3))]
        return Program(modules, gen_data(r), inputs, queries)


def gen_program(r: random.Random) -> Program:
    """A random program (:mod:`program_gen_ext` for more constructs)."""
    return Gen(r).build()


if __name__ == "__main__":
    import sys

    rr = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    p = gen_program(rr)
    for name, text in p.modules.items():
        print(f"# --- {name}\n{text}")
    print(p.queries)
    print(json.dumps(p.inputs))
