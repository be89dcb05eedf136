"""Small random programs whose rules share one document in many ways.

:func:`gen_conflict_program` mixes, under one package tree, rules of every
kind (``:=``, ``contains``, ``if``, defaults, functions, ``else`` chains) with
ref heads of every shape: constant keys (``a.b``, ``a[1]``), variable keys
(``a[k]``, ``a[k].y``, ``a[k][j]``), rules deeper down (``a.x.s``) and rules
above them. The rules go in one to three files, some in subpackages
(``package p.a`` holding ``b[k] := 1``), so conflicts are found within one
module and across modules and packages. Keys are drawn from a few strings, so
that rules with variable keys may or may not meet another rule's key.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Ref heads below ``data.p``: path parts, a part ``$k`` being a variable key.
SHAPES: list[list[str]] = [
    ["a"], ["a", "b"], ["a", "b", "c"], ["a", "x"], ["a", "x", "s"], ["a", "y"],
    ["a", "$k"], ["a", "$k", "y"], ["a", "$k", "y", "z"], ["a", "$k", "r"],
    ["a", "b", "$k"], ["a", "$k", "$j"], ["a", "$k", "b", "$j"], ["a", "x", "$k"],
    ["a", "1"], ["a", "1", "x"], ["a", "$k", "1"], ["b"], ["b", "$k"],
]
KEYS = ['"x"', '"y"', '"b"', '"c"', "1"]
VALUES = ["1", "2", '"s"', "true", "{\"s\": 1}", "{\"r\": 2}"]


@dataclass
class GenRule:
    """One rule: its path below ``data.p`` and its text relative to ``package``."""

    path: list[str]
    package: list[str]
    text: str


def _ref(parts: list[str]) -> str:
    out = parts[0]
    for p in parts[1:]:
        if p.startswith("$"):
            out += f"[{p[1:]}]"
        elif p.isdigit():
            out += f"[{p}]"
        else:
            out += f".{p}"
    return out


def _rule(r: random.Random, defaults: bool) -> GenRule:
    path = list(r.choice(SHAPES))
    ground = 0
    while ground < len(path) and not path[ground].startswith("$") and not path[ground].isdigit():
        ground += 1
    # A rule may sit in a subpackage holding a prefix of its ground part.
    cut = r.randrange(ground)
    package, rel = path[:cut], path[cut:]
    head = _ref(rel)
    variables = [p[1:] for p in path if p.startswith("$")]
    # ``:=`` renames a variable apart in OPA, ``=`` and ``some ... in`` do not
    binds = [r.choice([f"{v} := {{}}", f"{v} = {{}}", f"some {v} in [{{}}]"]).format(r.choice(KEYS)) for v in variables]
    if r.random() < 0.15:
        binds.append("input.go")
    body = f" if {{ {'; '.join(binds)} }}" if binds else ""
    value = r.choice(VALUES)
    kind = r.choice(["assign", "assign", "contains", "if", "default", "func", "else"] if defaults else ["assign", "assign", "contains", "if", "func", "else"])
    if kind == "default" and not variables:
        text = f"default {head} := {value}"
    elif kind == "func" and not variables:
        text = f"{head}(v) := {value} if v == {r.choice(KEYS)}"
    elif kind == "contains":
        text = f"{head} contains {value}{body}"
    elif kind == "if":
        text = f"{head}{body or ' if { true }'}"
    elif kind == "else" and not variables:
        text = f"{head} := {value} if {{ input.no }} else := {r.choice(VALUES)}"
    else:
        text = f"{head} := {value}{body}"
    return GenRule(path, package, text)


def gen_conflict_program(r: random.Random, defaults: bool = True) -> dict[str, str]:
    """A program of two to five rules over one to three files (file name ->
    text); ``defaults``: some may be default rules."""
    rules = [_rule(r, defaults) for _ in range(r.randint(2, 5))]
    files: dict[tuple[str, ...], list[list[str]]] = {}  # (file, package) -> texts, grouped
    nfiles = r.randint(1, 3)
    for rule in rules:
        key = (f"f{r.randrange(nfiles)}.rego", ".".join(["p", *rule.package]))
        files.setdefault(key, []).append([rule.text])
    modules: dict[str, str] = {}
    for (name, pkg), texts in sorted(files.items()):
        # Two packages in one file are not possible: the second goes to a file of its own.
        while name in modules:
            name = name.replace(".rego", "_.rego")
        modules[name] = f"package {pkg}\n\n" + "\n\n".join(t[0] for t in texts) + "\n"
    return modules


#: Paths read in generated programs (below ``data.p``).
READS = [
    "data.p", "data.p.a", "data.p.a.x", "data.p.a.y", "data.p.a.b", "data.p.a.c", "data.p.a.x.s",
    "data.p.a.b.c", "data.p.a[1]", "data.p.a.x.r", "data.p.a.y.y", "data.p.b", "data.p.a.q",
]
