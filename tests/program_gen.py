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
        self.ext = ext  # (the constructs of ext_term, ext_body, ext_rule too)
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


class ExtGen(Gen):
    """:class:`Gen` with more constructs: template strings, string, array and
    object builtins, ``walk``, ``k, v in``, ``object.get`` with paths, set and
    object operators on mixed operands, refs into partial rules with
    variables (also across packages), ``with`` on functions and builtins by
    short name, nested ``every`` with ``with``, rules with variables at
    several levels of their ref heads, ``else`` on functions and ref-head
    rules, ``default`` functions, big and odd numbers."""

    def str_term(self, env: list[str], depth: int) -> str:
        r = self.r
        if r.random() < 0.5:
            return json.dumps(r.choice(STRINGS + ["a.b", "x-y", "  a ", "AbC", "é."]), ensure_ascii=False)
        return r.choice([self.input_ref(), "input.s", "input.s", "input.a", *env] if env else [self.input_ref(), "input.s", "input.a"])

    def template(self, env: list[str], depth: int) -> str:
        r = self.r
        parts = []
        for _ in range(r.randint(1, 3)):
            parts.append(r.choice(["", "x", "a b", "\\{", "é", "-"]))
            parts.append("{" + self.term(env, depth + 1).replace("\n", " ") + "}")
        if r.random() < 0.5:
            parts.append(r.choice(["", "z", ":"]))
        text = "".join(parts)
        if '"' not in text and "`" not in text and r.random() < 0.3:
            return "$`" + text.replace("\\{", "x") + "`"
        return '$"' + text + '"'

    def partial_ref(self, env: list[str]) -> str | None:
        """A ref into a partial or ref-head rule, a variable or input at some level."""
        r = self.r
        rule = self.pick(("set", "object", "refset", "refobj", "refconst", "multi"))
        if rule is None:
            return None
        keys = [self.input_ref(), *env, *env, json.dumps(r.choice(["a", "x", "b"])), str(r.randint(0, 2))]
        t = f"data.{rule.pkg}.{rule.name}" if r.random() < 0.5 else self.ref(rule)
        if rule.kind in ("set", "object"):
            return t + f"[{r.choice(keys)}]"
        if rule.kind in ("refset", "refobj", "refconst"):
            t += "." + r.choice(["x", "y", "q"] if rule.kind == "refconst" else ["x", "y"])
            return t + (f"[{r.choice(keys)}]" if rule.kind != "refconst" and r.random() < 0.6 else "")
        for _ in range(r.randint(1, 2)):
            t += f"[{r.choice(keys)}]"
        return t

    def ext_term(self, env: list[str], depth: int) -> str:
        r = self.r
        s = lambda: self.str_term(env, depth + 1)  # noqa: E731
        t = lambda: self.term(env, depth + 1)  # noqa: E731
        k = r.randrange(17)
        if k == 0:
            return self.template(env, depth)
        if k == 1:
            return r.choice(
                [
                    lambda: f"upper({s()})",
                    lambda: f"lower({s()})",
                    lambda: f"split({s()}, {r.choice(SEPS)})",
                    lambda: f"replace({s()}, \"a\", {s()})",
                    lambda: f"trim({s()}, \" \")",
                    lambda: f"startswith({s()}, {s()})",
                    lambda: f"endswith({s()}, {s()})",
                    lambda: f"contains({s()}, {s()})",
                    lambda: f"substring({s()}, {r.randint(-1, 2)}, {r.randint(-1, 3)})",
                    lambda: f"indexof({s()}, {s()})",
                    lambda: f"strings.reverse({s()})",
                    lambda: f"trim_prefix({s()}, {s()})",
                    lambda: f"format_int({self.num(env, depth + 1)}, {r.choice([2, 10, 16])})",
                    lambda: f"sprintf({r.choice(FORMATS)}, [{t()}{', ' + t() if r.random() < 0.5 else ''}])",
                ]
            )()
        if k == 2:
            a = lambda: self.typed("arr", env, depth + 1)  # noqa: E731
            return r.choice(
                [
                    lambda: f"array.slice({a()}, {r.randint(-1, 2)}, {r.randint(0, 4)})",
                    lambda: f"array.reverse({a()})",
                    lambda: f"{a()}[{r.choice([0, 1, '_'] if False else [0, 1])}]",
                    lambda: f"count({a()}) {r.choice(CMP)} {self.num(env, depth + 1)}",
                    lambda: f"min({self.coll(env, depth + 1)})",
                    lambda: f"product({self.typed('num', env, depth + 1)})",
                ]
            )()
        if k == 3:
            o = lambda: self.typed("obj", env, depth + 1)  # noqa: E731
            return r.choice(
                [
                    lambda: f"object.union({o()}, {o()})",
                    lambda: f"object.remove({o()}, {self.typed('str', env, depth + 1)})",
                    lambda: f"object.filter({o()}, {self.typed('str', env, depth + 1)})",
                    lambda: f"object.get({o()}, [{', '.join(t() for _ in range(r.randint(0, 2)))}], {t()})",
                    lambda: f"object.get({r.choice(['input', 'input.m', 'data.d', 'data.d.obj'])}, {self.typed('str', env, depth + 1)}, {t()})",
                    lambda: f"object.keys({o()})",
                    lambda: f"json.filter({o()}, [{s()}])",
                    lambda: f"object.union_n([{o()}, {o()}])",
                ]
            )()
        if k == 4 and r.random() < 0.3:
            # set and object operators on operands of any types
            return f"({t()} {r.choice(['|', '&', '-'])} {t()})"
        if k == 5:
            return f"{self.term(env, depth + 1)}, {self.term(env, depth + 1)} in {self.coll(env, depth + 1)}" if depth == 0 else f"({t()} in {self.coll(env, depth + 1)})"
        if k == 6:
            ref = self.partial_ref(env)
            if ref is not None:
                return ref
        if k == 7:
            p, v = self.fresh(), self.fresh()
            return f"[[{p}, {v}] | walk({self.coll(env, depth + 1)}, [{p}, {v}])]"
        if k == 8:
            v = self.fresh()
            rule = self.pick(("func",))
            call = f"{self.ref(rule)}(" + ", ".join([v] * rule.arity) + ")" if rule is not None else f"count({v})"
            return f"{{{v}: {call} | some {v} in {self.coll(env, depth + 1)}}}" if r.random() < 0.3 else f"[{call} | some {v} in {self.coll(env, depth + 1)}]"
        if k == 9:
            return r.choice(["1e400", "-1e400", "0.1", "1e-7", "-0", "-0.0", "123456789012345678901234567890", "9007199254740993", "1.5e300", "0.30000000000000004", "100000000000000000000.5"])
        if k == 10:
            return f"({self.num(env, depth + 1)} {r.choice(ARITH + ['*', '/'])} {r.choice(['1e400', '3', '0.1', '9007199254740993', '-0'])})"
        if k == 11:
            return r.choice([f"round({self.num(env, depth + 1)})", f"ceil({self.num(env, depth + 1)})", f"floor({self.num(env, depth + 1)})", f"numbers.range({r.randint(-1, 2)}, {r.choice([0, 3, -2, 2.5])})", f"to_number({s()})"])
        if k == 12:
            return f"{self.typed('set', env, depth + 1)} {r.choice(['|', '&', '-'])} {self.typed('set', env, depth + 1)} {r.choice(['|', '&', '-'])} {self.typed('set', env, depth + 1)}"
        if k == 13:
            return f"is_object({t()})" if r.random() < 0.5 else f"type_name({t()}) == {json.dumps(r.choice(['string', 'number', 'array', 'object', 'set', 'null', 'boolean']))}"
        if k == 14:
            return r.choice(["input.m[_]", "input.xs[_]", "data.d.obj[_]", "input[_]", "data.d.list[_]"]) if depth == 0 else self.scalar()
        if k == 15:
            return f"regex.match({r.choice(REGEXES)}, {s()})"
        v = self.fresh()
        return f"{{{v} | some {v} in {self.coll(env, depth + 1)}; {self.cond([*env, v], depth + 1)}}}"

    def ext_lit(self, env: list[str]) -> str:
        r = self.r
        k = r.randrange(9)
        if k == 0:
            # nested every, maybe with `with`
            a, b = self.fresh(), self.fresh()
            inner = f"every {b} in {self.coll([*env, a])} {{ {self.cond([*env, a, b])}; {b} != {a} }}"
            lit = f"every {a} in {self.coll(env)} {{ {inner} }}"
            if r.random() < 0.5:
                lit += " " + self.with_clause()
            return lit
        if k == 1:
            kv, vv = self.fresh(), self.fresh()
            env += [kv, vv]
            self.declared += [kv, vv]
            return f"some {kv}, {vv} in {self.coll(env[:-2])}"
        if k == 2:
            return f"{self.term(env)}, {self.term(env)} in {self.coll(env)}"
        if k == 3:
            p, v = self.fresh(), self.fresh()
            env += [p, v]
            return f"walk({self.coll(env[:-2])}, [{p}, {v}])"
        if k == 4:
            return f"{self.cond(env) if r.random() < 0.5 else self.term(env)} {self.with_clause()}"
        if k == 5:
            ref = self.partial_ref(env)
            if ref is not None:
                v = self.fresh()
                env.append(v)
                return f"{v} := {ref}"
        if k == 6:
            v = self.fresh()
            lit = f"{v} := {self.template(env, 1)}"
            env.append(v)
            return lit
        if k == 7:
            return f"not {self.ext_term(env, 0)}"
        if k == 8 and r.random() < 0.5:
            # other packages' documents, by computed keys, walked, or by path
            others = [p for p in self.pkgs if not (p + ".").startswith(self.cur_pkg + ".") and not (self.cur_pkg + ".").startswith(p + ".")]
            if others:
                pkg = r.choice(others)
                a, b, v = self.fresh(), self.fresh(), self.fresh()
                env += [a, b, v]
                names = [x.name for x in self.visible if x.pkg == pkg and x.kind != "func"] or ["x"]
                return r.choice(
                    [
                        f"{v} := data.{pkg}[{a}][{b}]",
                        f"walk(data.{pkg}, [{a}, {v}]); {b} := count({a})",
                        f"{v} := object.get(data.{pkg}, [{json.dumps(r.choice(names))}, {json.dumps(r.choice(['x', 'y', 'a']))}], {a}); {a} := 0; {b} := 1",
                        f"some {a}, {b} in data.{pkg}; {v} := {b}",
                    ]
                )
        v = self.fresh()
        lit = f"{v} := {self.ext_term(env, 1)}"
        env.append(v)
        return lit

    def with_clause(self) -> str:
        """``with`` on a function or builtin by short or full name, as a function or a value; or on input or data."""
        r = self.r
        k = r.randrange(5)
        funcs = [x for x in self.visible if x.kind == "func"]
        if k == 0 and funcs:
            f = r.choice(funcs)
            same = [x for x in funcs if x.arity == f.arity]
            name = f.name if f.pkg == self.cur_pkg else f"data.{f.pkg}.{f.name}"
            repl = r.choice([self.scalar(), *[x.name if x.pkg == self.cur_pkg else f"data.{x.pkg}.{x.name}" for x in same]] + (["upper"] if f.arity == 1 else ["concat"]))
            return f"with {name} as {repl}"
        if k == 1:
            b, alts = r.choice([("upper", ["lower", "trim_space", '"Q"']), ("count", ["abs", "7"]), ("concat", ["sprintf", '"c"']), ("startswith", ["endswith", "true"]), ("object.get", ['"og"'])])
            one = [x for x in funcs if x.arity == 1] if b in ("upper", "count") else []
            return f"with {b} as {r.choice(alts + [x.name if x.pkg == self.cur_pkg else f'data.{x.pkg}.{x.name}' for x in one])}"
        if k == 2:
            return f"with input.{r.choice(['a', 'b', 's', 'm.a', 'xs'])} as {self.term([], 2)}"
        if k == 3:
            rule = self.pick(("complete", "set", "object", "refconst", "multi", "refobj"))
            path = f"data.{rule.pkg}.{rule.name}" if rule is not None else "data.d.obj"
            if rule is not None and rule.kind in ("refconst", "multi", "refobj") and r.random() < 0.5:
                path += "." + r.choice(["x", "y", "a"])
            return f"with {path} as {self.term([], 2)}"
        return f"with data.d.{r.choice(['x', 'obj.a', 'list', 'n'])} as {self.term([], 2)}"

    def braced(self, bt: str) -> str:
        if bt and not bt.endswith("}"):
            return " if {\n\t" + bt[4:] + "\n}"
        return bt

    def ext_rule(self, rule: Rule) -> Rule:
        r = self.r
        name = rule.name
        k = r.randrange(6)
        ndefs = r.choices([1, 2, 3], [5, 3, 2])[0]
        if k == 0:
            # variables at several levels of a ref head
            rule.kind = "multi"
            rule.name = name = "m" + name[1:]
            for _ in range(ndefs):
                env: list[str] = []
                b = self.body(env, r.randint(1, 3))
                keys = [self.term(env, 2) if r.random() < 0.7 else json.dumps(r.choice(["a", "x"])) for _ in range(r.randint(1, 3))]
                path = name + "".join(f"[{x}]" if r.random() < 0.7 else f".{r.choice(['a', 'x', 's'])}[{x}]" for x in keys)
                if r.random() < 0.3:
                    rule.texts.append(f"{path} contains {self.term(env, 1)}{self.body_text(b)}")
                else:
                    rule.texts.append(f"{path} := {self.term(env, 1)}{self.body_text(b)}")
            return rule
        if k == 1:
            # a ref-head rule of constants with an else chain
            rule.kind = "refconst"
            rule.name = name = "k" + name[1:]
            for j in range(ndefs):
                key = r.choice(["x", "y.z", "q"]) if j == 0 else f"w{j}"
                if r.random() < 0.3:
                    rule.texts.append(f"default {name}.{key} := {self.scalar()}")
                parts = []
                for i in range(r.randint(2, 3)):
                    env = []
                    b = self.body(env, r.randint(1, 2))
                    bt = self.braced(self.body_text(b))
                    parts.append((f"{name}.{key} := " if i == 0 else "else := ") + self.term(env, 1) + bt)
                    if not bt:
                        break
                rule.texts.append(" ".join(parts))
            return rule
        if k in (2, 3):
            # a function with an else chain, maybe a default
            rule.kind = "func"
            rule.name = name = "f" + name[1:]
            rule.arity = r.choice([1, 1, 2])
            if r.random() < 0.4:
                rule.texts.append(f"default {name}(" + ", ".join("_" for _ in range(rule.arity)) + f") := {self.scalar() if r.random() < 0.7 else self.template([], 2)}")
            for _ in range(ndefs):
                params, env = [], []
                for _ in range(rule.arity):
                    if r.random() < 0.15:
                        params.append(r.choice([self.scalar(), "[x, _]", "{\"a\": x}"]))
                    else:
                        p = self.fresh()
                        params.append(p)
                        env.append(p)
                params = [p.replace("x", self.fresh()) if p in ("[x, _]", '{"a": x}') else p for p in params]
                for p in params:
                    for m in re.findall(r"\bv\d+\b", p):
                        if m not in env:
                            env.append(m)
                penv = list(env)
                parts = []
                for i in range(r.randint(1, 3)):
                    e2 = list(penv)
                    b = self.body(e2, r.randint(1, 2))
                    bt = self.braced(self.body_text(b))
                    parts.append((f"{name}({', '.join(params)}) := " if i == 0 else "else := ") + self.term(e2, 1) + bt)
                    if not bt:
                        break
                rule.texts.append(" ".join(parts))
            return rule
        if k == 4:
            # a partial set whose elements are composite, or templates
            rule.kind = "set"
            rule.name = name = "s" + name[1:]
            for _ in range(ndefs):
                env = []
                b = self.body(env, r.randint(1, 3))
                elem = self.template(env, 1) if r.random() < 0.4 else "{" + f'"k": {self.term(env, 1)}, "v": {self.term(env, 1)}' + "}"
                rule.texts.append(f"{name} contains {elem}{self.body_text(b)}")
            return rule
        # a complete rule over a comprehension calling rules and functions
        rule.kind = "complete"
        rule.name = name = "c" + name[1:]
        if r.random() < 0.3:
            rule.texts.append(f"default {name} := {self.scalar()}")
        env = []
        b = self.body(env, r.randint(0, 2))
        rule.texts.append(f"{name} := {self.ext_term(env, 1)}{self.body_text(b)}")
        return rule


def gen_program(r: random.Random, ext: bool = False) -> Program:
    """A random program; ``ext`` adds the constructs of :class:`ExtGen`'s methods."""
    return (ExtGen(r, ext=True) if ext else Gen(r)).build()


if __name__ == "__main__":
    import sys

    rr = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    p = gen_program(rr)
    for name, text in p.modules.items():
        print(f"# --- {name}\n{text}")
    print(p.queries)
    print(json.dumps(p.inputs))
