"""Iteration order of documents where base data and rules meet.

OPA iterates such a document (``data.r.style[k]``, ``some k, v in data.r``)
as its rule tree holds it: base data's keys first, then the rule tree's other
children, each group sorted. A whole document is an object, so it prints
sorted either way, and so do ``object.keys`` and ``walk``. Each case has the
answer OPA v1.20.2 gives, checked against OPA itself (when the oracle is
available), and runs in the three execution forms.
"""

from __future__ import annotations

from typing import Any

import pytest

from policy_cases import Case, check_oracle, check_pyrego

MODS = {
    "style.rego": "package r.style\nm := 1\nb := 2\nzz := 3\n",
    "sub.rego": "package r.style.sub\nq := 1\n",
    "other.rego": "package r.other\nx := 1\n",
}
# Base data's keys are not in sorted order here: OPA sorts them.
DATA = {"r": {"style": {"z": 1, "a": 2, "n": 3, "c": 2}, "zz": {"k": 2}, "aa": {"k": 1}}}
STYLE = ["a", "c", "n", "z", "b", "m", "sub", "zz"]
STYLE_DOC = {"a": 2, "b": 2, "c": 2, "m": 1, "n": 3, "sub": {"q": 1}, "z": 1, "zz": 3}
# "style" is in base data and in the rule tree: it goes with base data's keys.
TOP = ["aa", "style", "zz", "other"]


def _case(id: str, query: str, want: Any, modules: dict[str, str] | None = None) -> Case:
    return Case(id, modules or MODS, query, want, data=DATA)


CASES = [
    _case("comprehension", "x := [b | data.r.style[b]]", {"x": STYLE}),
    _case("comprehension-some", "x := [b | some b; data.r.style[b]]", {"x": STYLE}),
    _case("values", "x := [v | some v in data.r.style]", {"x": [2, 2, 3, 1, 2, 1, {"q": 1}, 3]}),
    _case("some-key-value", "x := [k | some k, v in data.r.style]", {"x": STYLE}),
    _case("concat", 'x := concat(",", [b | data.r.style[b]])', {"x": ",".join(STYLE)}),
    _case("top-level", "x := [k | data.r[k]]", {"x": TOP}),
    _case("top-level-pairs", "x := [k | some k, _ in data.r]", {"x": TOP}),
    _case("two-levels", "x := [[a, b] | data.r[a][b]]", {"x": [["aa", "k"]] + [["style", b] for b in STYLE] + [["zz", "k"], ["other", "x"]]}),
    _case("two-levels-some", "x := [[a, b] | some a, b; data.r[a][b]]", {"x": [["aa", "k"]] + [["style", b] for b in STYLE] + [["zz", "k"], ["other", "x"]]}),
    _case("projection", "x := [a | data.r[a].k]", {"x": ["aa", "zz"]}),
    _case("set-comprehension-sorted", "x := {b | data.r.style[b]}", {"x": sorted(STYLE)}),
    _case("object-keys-sorted", "x := object.keys(data.r.style)", {"x": sorted(STYLE)}),
    _case("walk-sorted", "x := [p | walk(data.r.style, [p, _])]", {"x": [[]] + [[k] for k in sorted(STYLE) if k < "sub"] + [["sub"], ["sub", "q"], ["z"], ["zz"]]}),
    _case("whole-document", "x := data.r.style", {"x": STYLE_DOC}),
    _case(
        "in-a-rule",
        "x := data.q.out",
        {"x": [["a", 2], ["c", 2], ["n", 3], ["z", 1], ["b", 2], ["m", 1], ["sub", {"q": 1}], ["zz", 3]]},
        {**MODS, "q.rego": "package q\nout := [[k, v] | some k; v := data.r.style[k]]\n"},
    ),
    _case(
        "in-a-function",
        'x := data.q.f("style")',
        {"x": STYLE},
        {**MODS, "q.rego": "package q\nf(p) := [k | some k, _ in data.r[p]]\n"},
    ),
    _case(
        "nested-package-only",
        "x := [k | data.r.style.sub[k]]",
        {"x": ["q"]},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case_gives_opa_answer(case: Case, execution_form: str) -> None:
    check_pyrego(case)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_written_answers_are_opa_answers(case: Case, oracle: Any) -> None:
    check_oracle(case, oracle)
