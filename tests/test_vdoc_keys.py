"""Documents defined by rules with variable keys beside rules deeper down.

``deny[u].reason := ...`` (rules at ``deny`` whose key is a variable) and
``deny.root.audit := ...`` (a rule below ``deny.root``) define one document:
OPA merges them, and a policy that reads ``deny.root.reason`` must see the
first rule's value. Reads with a computed key into a tree of packages
(``data.t[name].deny``) evaluate only the document they name, so a test in
package ``t.a`` may call such a function without evaluating itself.

Each case has the answer OPA v1.20.2 gives, written down and checked against
OPA itself (when the oracle is available), and runs in the three execution
forms; generated programs mixing both kinds of rules under shared prefixes
are compared with OPA directly.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from policy_cases import Case, check_oracle, check_pyrego, generated_differences

DENY = 'package p\ndeny[u].reason := "blocked" if some u in input.blocked\ndeny.root.audit := "logged"\nallow if not deny.root.reason\n'
DENY_SET = 'package p\ndeny[u] contains "x" if some u in input.blocked\ndeny.root contains "y"\nallow if not "x" in deny.root\n'
BLOCKED = {"blocked": ["root"]}
ROOT = {"audit": "logged", "reason": "blocked"}

LIB = "package lib\nf(name) := data.t[name].deny\ng(name) := x if { some n; x := data.t[n].deny; n == name }\n"
T_A = (
    "package t.a\nimport data.lib\n"
    'deny contains "x" if input.bad\n'
    'test_deny if { lib.f("a") == set() }\n'
    'test_g if { lib.g("a") == set() }\n'
    'others := lib.f("b")\n'
)
T_B = 'package t.b\ndeny contains "y" if true\nother := 1\n'

ROUTED = {
    "naming.rego": 'package checks.style.naming\nreport contains "camel" if input.camel\nnotices contains "note"\n',
    "broken.rego": "package checks.style.broken\nreport contains x if x := 1 / input.zero\n",
    "helper.rego": "package checks.style\nhelper(x) := x\n",
    "router.rego": (
        "package router\n"
        "found contains v if {\n\tsome category, title in input.run\n\tsome v in data.checks[category][title].report\n}\n"
        "deep := data.checks[input.c][input.t][input.k]\n"
        "deeper := data.checks[input.c].broken[input.k]\n"
        "notes contains [c, t, n] if {\n\tsome c, t\n\tsome n in data.checks[c][t].notices\n}\n"
    ),
}

CASES = [
    # -- the rule with a variable key is not ignored
    Case("allow-undefined", {"p.rego": DENY}, "x := data.p.allow", "undefined", input=BLOCKED),
    Case("allow-without-input", {"p.rego": DENY}, "x := data.p.allow", {"x": True}),
    Case("static-key-document", {"p.rego": DENY}, "x := data.p.deny.root", {"x": ROOT}, input=BLOCKED),
    Case("static-key-leaf", {"p.rego": DENY}, "x := data.p.deny.root.reason", {"x": "blocked"}, input=BLOCKED),
    Case("whole-document", {"p.rego": DENY}, "x := data.p.deny", {"x": {"root": ROOT}}, input=BLOCKED),
    Case("iterated-key", {"p.rego": DENY}, "x := data.p.deny[k]", {"k": "root", "x": ROOT}, input=BLOCKED),
    Case("package", {"p.rego": DENY}, "x := data.p", {"x": {"deny": {"root": ROOT}}}, input=BLOCKED),
    Case("root", {"p.rego": DENY}, "x := data", {"x": {"p": {"deny": {"root": ROOT}}}}, input=BLOCKED),
    Case("root-without-input", {"p.rego": DENY}, "x := data", {"x": {"p": {"allow": True, "deny": {"root": {"audit": "logged"}}}}}),
    Case(
        "computed-key",
        {"p.rego": DENY + 'r := deny[k] if k := "root"\ns := deny[k] if k := "other"\nt := deny.other'},
        "x := [data.p.r, object.get(data.p, \"s\", 0), object.get(data.p, \"t\", 0)]",
        {"x": [ROOT, 0, 0]},
        input=BLOCKED,
    ),
    # -- sets at the leaves (contains)
    Case("set-allow-undefined", {"p.rego": DENY_SET}, "x := data.p.allow", "undefined", input=BLOCKED),
    Case("set-document", {"p.rego": DENY_SET}, "x := data.p.deny", {"x": {"root": ["x", "y"]}}, input=BLOCKED),
    Case("set-iterated", {"p.rego": DENY_SET}, "x := data.p.deny.root[_]", {"x": "y"}, input={"blocked": []}),
    # -- a path through a value a rule gave is a conflict, and never changes the value
    Case(
        "path-through-a-value",
        {"p.rego": 'package p\ndeny[u] := {"reason": "b"} if some u in input.blocked\ndeny[v].audit := "x" if some v in input.blocked'},
        "x := data.p.deny",
        "eval_conflict_error",
        input=BLOCKED,
    ),
    Case(
        "value-equal-to-a-path",
        {"p.rego": 'package p\ndeny[u].audit := "x" if some u in input.blocked\ndeny[v] := {"audit": "x"} if some v in input.blocked'},
        "x := data.p.deny",
        {"x": {"root": {"audit": "x"}}},
        input=BLOCKED,
    ),
    Case(
        "empty-set-adds-no-key",
        {"p.rego": 'package p\na[k] contains 2 if { some k in input.ks }\na.y contains true if input.on'},
        "x := [data.p.a, object.get(data.p.a, \"y\", 0)]",
        {"x": [{}, 0]},
    ),
    # -- split across modules, and across packages
    Case(
        "two-modules",
        {
            "a.rego": 'package p\ndeny[u].reason := "blocked" if some u in input.blocked',
            "b.rego": 'package p\ndeny.root.audit := "logged"\nallow if not deny.root.reason',
        },
        "x := [object.get(data.p, \"allow\", false), data.p.deny]",
        {"x": [False, {"root": ROOT}]},
        input=BLOCKED,
    ),
    Case(
        "two-packages",
        {
            "a.rego": 'package p\na[x].k := 1 if some x in input.blocked\nok if not a.root.k',
            "b.rego": "package p.a.root\nk2 := 2",
        },
        "x := [data.p.a.root, data.p.a, object.get(data.p, \"ok\", false)]",
        {"x": [{"k": 1, "k2": 2}, {"root": {"k": 1, "k2": 2}}, False]},
        input=BLOCKED,
    ),
    Case(
        "two-packages-conflict",
        {"a.rego": "package p\na[x].k := 1 if some x in input.blocked", "b.rego": "package p.a.root\nk := 2"},
        "x := data.p.a.root",
        "eval_conflict_error",
        input=BLOCKED,
    ),
    # -- conflicts where OPA has them, and none where it has none
    Case(
        "same-key-different-values",
        {"p.rego": 'package p\ndeny[u].audit := "v" if some u in input.blocked\ndeny.root.audit := "logged"'},
        "x := data.p.deny.root.audit",
        "eval_conflict_error",
        input=BLOCKED,
    ),
    Case(
        "same-key-same-value",
        {"p.rego": 'package p\ndeny[u].audit := "logged" if some u in input.blocked\ndeny.root.audit := "logged"'},
        "x := data.p.deny",
        {"x": {"root": {"audit": "logged"}}},
        input=BLOCKED,
    ),
    Case(
        "static-rule-undefined",
        {"p.rego": 'package p\ndeny[u].audit := "v" if some u in input.blocked\ndeny.root.audit := "logged" if false'},
        "x := data.p.deny.root.audit",
        {"x": "v"},
        input=BLOCKED,
    ),
    Case(
        "value-where-a-path-goes-deeper",
        {"p.rego": 'package p\ndeny[u] := "b" if some u in input.blocked\ndeny.root.audit := "logged"'},
        "x := data.p.deny.root.audit",
        "eval_conflict_error",
        input=BLOCKED,
    ),
    Case(
        "object-value-where-a-path-goes-deeper",
        {"p.rego": 'package p\ndeny[u] := {"reason": "b"} if some u in input.blocked\ndeny.root.audit := "logged"'},
        "x := data.p.deny",
        "eval_conflict_error",
        input=BLOCKED,
    ),
    Case(
        "deeper-value-equal-to-the-paths",
        {"p.rego": 'package p\na.x := {"r": 1}\na[k].r := 1 if k := "x"'},
        "x := data.p.a",
        {"x": {"x": {"r": 1}}},
    ),
    Case(
        "deeper-value-not-all-the-paths-hold",
        {"p.rego": 'package p\na.x := {"r": 1, "s": 2}\na[k].r := 1 if k := "x"'},
        "x := data.p.a.x",
        "eval_conflict_error",
    ),
    Case(
        "no-empty-objects-below",
        {"p.rego": 'package p\ndeny[u].audit := "v" if some u in input.blocked\ndeny.root.audit := "logged" if false\ndeny.root.z.q := 1 if false'},
        "x := [data.p.deny, object.get(data.p.deny, \"root\", 0)]",
        {"x": [{}, 0]},
    ),
    Case(
        "sibling-reads-sibling",
        {"p.rego": 'package p\ndeny[u].reason := "r" if some u in input.blocked\ndeny.root.audit := 1\ndeny.root.b := deny.root.audit + 1'},
        "x := data.p.deny.root",
        {"x": {"audit": 1, "b": 2, "reason": "r"}},
        input=BLOCKED,
    ),
    Case(
        "with-replacements",
        {
            "p.rego": DENY,
            "q.rego": (
                "package q\n"
                't1 := x if { x := data.p.deny.root with input as {"blocked": ["root"]} }\n'
                't3 := x if { x := data.p.deny.root with data.p.deny as {"root": {"q": 1}} }\n'
                "t4 := x if { x := data.p.allow with input.blocked as [] }\n"
                't5 := x if { x := data.p.allow with input.blocked as ["root"] }\n'
                't6 := x if { x := data.p.deny.root.reason with data.p.deny as {"root": {"reason": 1}} }\n'
                't7 := x if { x := data.p with data.p.deny as {"root": {"reason": 1}} }'
            ),
        },
        "x := data.q",
        {"x": {"t1": ROOT, "t3": {"q": 1}, "t4": True, "t6": 1, "t7": {"deny": {"root": {"reason": 1}}}}},
    ),
    # -- a computed key into a tree of packages: only the document it names
    Case("package-key-test", {"lib.rego": LIB, "ta.rego": T_A, "tb.rego": T_B}, "x := data.t.a.test_deny", {"x": True}),
    Case("package-key-iterated-test", {"lib.rego": LIB, "ta.rego": T_A, "tb.rego": T_B}, "x := data.t.a.test_g", {"x": True}),
    Case("package-key-other", {"lib.rego": LIB, "ta.rego": T_A, "tb.rego": T_B}, "x := data.t.a.others", {"x": ["y"]}),
    Case("package-key-missing", {"lib.rego": LIB, "ta.rego": T_A}, 'x := data.lib.f("zz")', "undefined"),
    Case(
        "package-key-query",
        {"lib.rego": LIB, "ta.rego": T_A, "tb.rego": T_B},
        "x := {k: v | v := data.t[k].deny}",
        {"x": {"a": [], "b": ["y"]}},
    ),
    Case(
        "package-key-base-data",
        {"lib.rego": LIB, "ta.rego": T_A},
        'x := [data.lib.f("c"), data.t.a.test_deny]',
        {"x": [["z"], True]},
        data={"t": {"c": {"deny": ["z"]}}},
    ),
    # -- computed keys in a row (a router over packages of checks): followed
    #    down the rule tree, so checks the keys do not name are never evaluated
    Case("keys-in-a-row", ROUTED, "x := data.router.found", {"x": ["camel"]}, input={"run": {"style": "naming"}, "camel": True, "zero": 0}),
    Case("keys-in-a-row-off-the-tree", ROUTED, "x := data.router.found", {"x": []}, input={"run": {"style": "nope"}, "zero": 0}),
    Case("keys-in-a-row-number-key", ROUTED, "x := data.router.found", {"x": []}, input={"run": {"style": 0}, "zero": 0}),
    Case("keys-in-a-row-function", ROUTED, "x := data.router.found", {"x": []}, input={"run": {"style": "helper"}, "zero": 0}),
    Case("keys-in-a-row-named-check-fails", ROUTED, "x := data.router.found", "eval_builtin_error", input={"run": {"style": "broken"}, "zero": 0}),
    Case(
        "keys-in-a-row-base-data",
        ROUTED,
        "x := [data.router.found, data.router.deep]",
        {"x": [["from data"], "base"]},
        input={"run": {"style": "extra"}, "zero": 0, "c": "style", "t": "extra", "k": "more"},
        data={"checks": {"style": {"extra": {"report": ["from data"], "more": "base"}}}},
    ),
    Case("keys-iterated", ROUTED, "x := data.router.notes", {"x": [["style", "naming", "note"]]}, input={"zero": 0}),
    Case(
        "keys-in-a-row-constant-between",
        ROUTED,
        "x := [object.get(data.router, \"deep\", 0), object.get(data.router, \"deeper\", 0)]",
        {"x": [0, 0]},
        input={"c": "style", "t": "naming", "k": "nothing", "zero": 0},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)


@pytest.mark.parametrize("form", EXECUTION_FORMS)
def test_same_answer_at_every_evaluation(form: str) -> None:
    """The answers stay the same from the first evaluation to the 500th (the
    closures and compact forms turn hot on the way), inputs alternating."""
    with in_form(form):
        engine = pyrego.Engine()
        engine.add_policies({"p.rego": DENY + 'deny[u] := {"note": u} if some u in input.noted\nn := count(deny)'})
        inputs = [(BLOCKED, "undefined", ROOT), ({}, True, {"audit": "logged"}), ({"blocked": ["root", "b"]}, "undefined", ROOT)]
        for i in range(500):
            inp, allow, root = inputs[i % 3]
            got = engine.eval_query("x := [object.get(data.p, \"allow\", \"undefined\"), data.p.deny.root]", input=inp)["result"]
            assert got[0]["bindings"]["x"] == [allow, root], i


# ---------------------------------------------------------------- generated programs

_VALUES = ("1", "2", '"v"', "true")


def _program(rng: random.Random) -> tuple[dict[str, str], Any, list[str]]:
    """Rules with variable keys and static ref heads under the prefix ``a``,
    in one module, two modules of one package, or beside a package ``p.a.<key>``."""
    family = rng.choice(("object", "object", "set"))
    depth = rng.choice((1, 2))
    value = rng.choice(_VALUES)  # one per program: rules with variable keys agree among themselves
    body = []
    for _ in range(rng.randint(1, 3)):
        cond = rng.choice(("some k in input.ks", "some k in input.ks; input.on", 'k := "x"'))
        if family == "set":
            body.append(f"a[k] contains {rng.choice(_VALUES)} if {{ {cond} }}")
        elif depth == 1:
            body.append(f"a[k].r := {value} if {{ {cond} }}")
        else:
            # (not beside a[k] := {...}: see the README's note on such rules)
            body.append(f"a[k][j] := {value} if {{ {cond}; some j in input.js }}")
    for _ in range(rng.randint(1, 3)):
        key, v, cond = rng.choice("xyz"), rng.choice(_VALUES), rng.choice(("", " if input.on", " if false"))
        if family == "set":
            body.append(f"a.{key} contains {v}{cond}")
        else:
            body.append(f"a.{key}.{rng.choice('rs')} := {v}{cond}")
    if family == "set":
        # (no constant member lookups: see the README's note on the type checker)
        readers = ["allow if not a.x", "cnt_x := count(a.x)", "out := a.x", "cnt := count(a)", "ys := a.y", "kk := [k | a[k]]"]
    else:
        readers = ["allow if not a.x.r", "out := a.x", "cnt := count(a)", "ys := a.y", "kk := [k | a[k]]"]
    body += rng.sample(readers, 2)
    rng.shuffle(body)
    split = rng.choice(("one", "two", "package"))
    if split == "one" or (split == "package" and family == "set"):
        modules = {"p.rego": "package p\n" + "\n".join(body)}
    else:
        cut = rng.randint(1, len(body) - 1)
        modules = {"p1.rego": "package p\n" + "\n".join(body[:cut]), "p2.rego": "package p\n" + "\n".join(body[cut:])}
        if split == "package":
            v = rng.choice(_VALUES)
            rule = rng.choice((f"r := {v}", f"s := {v} if input.on", f"t := {v}"))
            modules["p3.rego"] = f"package p.a.{rng.choice('xy')}\n{rule}"
    inputs = [None, {"ks": ["x"], "js": ["r"], "on": True}, {"ks": ["x", "y"], "js": ["s", "r"], "on": False}, {"ks": ["y"], "js": ["t"], "on": True}]
    queries = ["x := data.p.a", "x := data.p.a.x", "x := data.p.a[k]", "x := data.p", "x := data.p.allow", "x := data"]
    if family == "object":
        queries.append("x := data.p.a.x.r")
    return modules, rng.choice(inputs), rng.sample(queries, 2)


@pytest.mark.parametrize("block", range(6))
def test_generated_programs_agree_with_opa(block: int, oracle: Any) -> None:
    """300 generated programs (50 per block, fixed seeds), each in one of the
    three execution forms in turn, two queries each, compared with OPA."""
    failures = generated_differences(oracle, range(block * 50, block * 50 + 50), _program, EXECUTION_FORMS)
    assert not failures, "\n\n".join(failures[:5])
