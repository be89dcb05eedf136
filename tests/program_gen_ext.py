"""More constructs for :mod:`program_gen`'s random programs (its extended mode).

:class:`ExtGen` is :class:`program_gen.Gen` with template strings, string,
array and object builtins, ``walk``, ``k, v in``, ``object.get`` with paths,
set and object operators on mixed operands, refs into partial rules with
variables (also across packages, by computed keys), ``with`` on functions
and builtins by short name, nested ``every`` with ``with``, rules with
variables or constants at several levels of their ref heads, ``else`` on
functions and ref-head rules, ``default`` functions, big and odd numbers,
``import future.keywords``.
"""

from __future__ import annotations

import json
import random
import re

from program_gen import ARITH, CMP, FORMATS, REGEXES, SEPS, STRINGS, Gen, Program, Rule


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
    """A random program; ``ext``: with the constructs of :class:`ExtGen`."""
    return (ExtGen(r, ext=True) if ext else Gen(r)).build()


if __name__ == "__main__":
    import sys

    rr = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    p = gen_program(rr, ext=True)
    for name, text in p.modules.items():
        print(f"# --- {name}\n{text}")
    print(p.queries)
    print(json.dumps(p.inputs))
