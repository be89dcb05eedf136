"""Small random programs with keys other than strings in rule and function refs.

:func:`gen_numkey_program` mixes, under ``package p``, functions whose refs
hold number, boolean and null keys (``a[1].x(v)``, ``a[true].y(v)``,
``a[null][2].z(v)``), rules with such keys (``a[1] := 1``, ``a[2].b := 2``,
``a[1] contains 3``), rules with variable keys (``a[k][1]``, ``a.x[k]``,
``a[1][k]``) and default rules at constant paths, some of them below a
document of rules with variable keys (which OPA leaves out). Other rules call
the functions (``r := a[1].x("x")``) or replace them with ``with``.
:data:`NUMKEY_QUERIES` reads the documents and calls the functions.
"""

from __future__ import annotations

import random

#: Keys other than strings, as written in a ref.
KEYS = ["1", "2", "true", "false", "null", "2.5"]
#: Values the rules give.
VALUES = ["1", "2", '"s"', "true", '{"q": 1}']
#: Arguments the functions are called with.
ARGS = ['"x"', '"y"', "1"]


def _function(r: random.Random) -> str:
    head = r.choice(["a[{}].x", "a[{}].y", "a[{}][{}].z", "a.b[{}].w", "c[{}]"]).format(r.choice(KEYS), r.choice(KEYS))
    body = r.choice([f"v == {r.choice(ARGS)}", "true", 'is_string(v)'])
    return f"{head}(v) := {r.choice(VALUES)} if {{ {body} }}"


def _rule(r: random.Random) -> str:
    k = r.choice(KEYS)
    kind = r.random()
    if kind < 0.25:
        head = r.choice([f"a[{k}]", f"a[{k}].b", f"a.b[{k}]", f"a[{k}][{r.choice(KEYS)}]"])
        return f"{head} := {r.choice(VALUES)}" + r.choice(["", " if input.on"])
    if kind < 0.35:
        return f"a[{k}] contains {r.choice(VALUES)}"
    if kind < 0.65:
        # Variable keys, beside the constant ones.
        head = r.choice(["a[k][1]", "a.x[k]", f"a[{k}][k]", "a.b[k]", "a[k].r"])
        bind = r.choice(['k := "z"', 'k := "b"', "k := 7", "some k in input.ks"])
        return f"{head} := {r.choice(VALUES)} if {{ {bind} }}"
    # Defaults at constant paths (some under the documents above).
    head = r.choice(["a.b.c", "a.x.y", "a.z", "a.b.c.d", f"a[{k}].c", f"a[{k}]", "d.e"])
    return f"default {head} := {r.choice(VALUES)}"


def _caller(r: random.Random, functions: list[str]) -> str:
    fn = r.choice(functions).split("(")[0]
    arg = r.choice(ARGS)
    kind = r.randrange(4)
    if kind == 0:
        return f"r := {fn}({arg})"
    if kind == 1:
        return f"s := y if {{ y := {fn}({arg}) with {fn} as {r.choice(VALUES)} }}"
    if kind == 2:
        return f"t := y if {{ y := f({arg}) with f as {fn} }}\n\nf(v) := 0"
    return f"u := y if {{ y := g({arg}) with {fn} as h }}\n\ng(v) := {fn}(v)\n\nh(v) := 9"


def gen_numkey_program(r: random.Random) -> dict[str, str]:
    """A program of two to six rules and functions in one or two files (file
    name -> text), all in ``package p``."""
    functions = [_function(r) for _ in range(r.randint(0, 2))]
    rules = [_rule(r) for _ in range(r.randint(1, 4))]
    texts = functions + rules
    if functions and r.random() < 0.7:
        texts.append(_caller(r, functions))
    r.shuffle(texts)
    cut = r.randint(1, len(texts)) if r.random() < 0.3 else len(texts)
    modules = {"p.rego": "package p\n\n" + "\n\n".join(texts[:cut]) + "\n"}
    if texts[cut:]:
        modules["p2.rego"] = "package p\n\n" + "\n\n".join(texts[cut:]) + "\n"
    return modules


#: Reads and calls of the generated programs' documents (queries).
NUMKEY_QUERIES = [
    "x := data.p", "x := data.p.a", "x := data.p.a[1]", "x := data.p.a[true]", "x := data.p.a[null]",
    "x := data.p.a[2.5]", "x := data.p.a.b", "x := data.p.a.b.c", "x := data.p.a.x", "x := data.p.a.x.y",
    "x := data.p.a.z", "x := data.p.a[1].c", "x := data.p.d.e", "x := data.p.c", "x := data.p.a.b[1]",
    'x := data.p.a[1].x("x")', 'x := data.p.a[true].y("y")', 'x := data.p.a[null][2].z("x")', 'x := data.p.c[1]("x")',
    "k := 1; x := data.p.a[k]", "k := true; x := data.p.a[k]", "x := data.p.a[k]", 'x := data.p.a["1"]',
    "x := data.p.r", "x := data.p.s", "x := data.p.t", "x := data.p.u",
]

def call_queries(modules: dict[str, str]) -> list[str]:
    """Queries calling each function the program defines (with each argument)."""
    heads = sorted({line.split("(v)")[0] for text in modules.values() for line in text.splitlines() if "(v) :=" in line})
    return [f"x := data.p.{head}({arg})" for head in heads if head not in ("f", "g", "h") for arg in ARGS]


#: Rule paths read with ``eval_rule`` and ``prepare_rule``.
NUMKEY_RULE_PATHS = ["data.p", "data.p.a", "data.p.a.b.c", "data.p.a.b", "data.p.r", "data.p.u"]
