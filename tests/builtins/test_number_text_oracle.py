"""How numbers print (json.marshal, yaml.marshal, sprintf with every verb,
%v of composites) against OPA v1.20.2, on generated integers of many sizes, floats,
exponents and negative zero, both as input values and as computed results.

OPA keeps the text of a number that was not computed (literals, JSON); for
input that text is Python's ``json.dumps`` text, which pyrego's printing of
the same value follows. Integral floats in input (``1.0``) are left out: OPA
prints their text ``1.0``, pyrego the number ``1`` (numbers are values, not
texts). One difference is accepted where it is known: a computed number
that is not an integer and has 7 to 16 integer digits prints in plain digits
in pyrego (the text an equal input float has) and in exponent form in OPA
(``1.6401935065e+09``).
"""

from __future__ import annotations

import random
import re
from decimal import Decimal
from typing import Any

import pytest

import pyrego
from opa_oracle import Oracle

VERBS = ["%v", "%d", "%x", "%X", "%o", "%b", "%e", "%E", "%g", "%G", "%f", "%.3f", "%.2e", "%10.4g",
         "%s", "%q", "%t", "%08.3f", "%+d", "%#x", "%-12.5v", "% d"]
# (expression, computed?)
EXPRS = [("n", False), ("n * 1", True), ("n / 7", True), ("n + 0.5", True), ("n * 1.5", True),
         ("0 - n", True), ("n * 1e10", True), ("n / 1e10", True), ("0 / (0 - n)", True), ("n * n", True)]


def numbers(seed: int) -> list[Any]:
    rng = random.Random(seed)
    ns: list[Any] = []
    for bits in [1, 5, 31, 32, 52, 53, 54, 63, 64, 65, 100, 128, 200, 400, 1000]:
        v = rng.getrandbits(bits) | 1
        ns += [v, -v]
    ns += [1, -1, 2**63, 2**63 - 1, -(2**63), 2**64, 10**20, 10**21, 10**22, 2**200]
    while len(ns) < 90:
        f = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
        if f and not f.is_integer():
            ns.append(f)
    ns += [0.1, 0.5, 1.5, -2.5, 1e-7, 1.5e-7, 123.456, 1e-5, 0.0001, 5e-324, 0.30000000000000004, 2.5e-300]
    return ns


def query() -> str:
    parts = []
    for e, _ in EXPRS:
        parts += [f"json.marshal({e})", f'sprintf("%v", [[{e}]])', f"json.marshal({{{e}: 1}})"]
        parts += [f'sprintf("{v}", [{e}])' for v in VERBS]
        parts += [f"yaml.marshal([{e}])", f"yaml.marshal({{{e}: 1}})"]
    return f"x := [[{', '.join(parts)}] | some n in input.ns]"


def labels() -> list[tuple[str, bool, bool]]:
    """(label, computed, prints a number as JSON/Rego text) for each query part."""
    out = []
    for e, computed in EXPRS:
        out += [(f"json.marshal({e})", computed, True), (f"%v [[{e}]]", computed, True), (f"json.marshal({{{e}: 1}})", computed, True)]
        out += [(f"{v} {e}", computed, False) for v in VERBS]
        out += [(f"yaml.marshal([{e}])", computed, False), (f"yaml.marshal({{{e}: 1}})", computed, True)]
    return out


_NUMBER = re.compile(r"-?[0-9][0-9.e+-]*")


def known_difference(opa: str, ours: str) -> bool:
    """The computed non-integer of 7 to 16 integer digits: same numbers, OPA in
    exponent form, pyrego in plain digits."""
    a, b = _NUMBER.findall(opa), _NUMBER.findall(ours)
    if len(a) != len(b) or _NUMBER.sub("#", opa) != _NUMBER.sub("#", ours):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        if "e+" not in x or "e" in y or "." not in y or Decimal(x) != Decimal(y):
            return False
        if not 6 <= Decimal(x).adjusted() < 16:
            return False
    return True


@pytest.mark.parametrize(("seed", "strict"), [(1, True), (2, False)])
def test_numbers_print_as_in_opa(oracle: Oracle, seed: int, strict: bool) -> None:
    ns = numbers(seed)
    q = query()
    got_opa = oracle.evaluate({}, q, input={"ns": ns})
    assert not got_opa.is_error, got_opa.error_message
    want = got_opa.bindings[0]["x"]
    eng = pyrego.Engine()
    eng.set_strict_builtin_errors(strict)
    got = eng.eval_query(q, input={"ns": ns})["result"][0]["bindings"]["x"]
    diffs = []
    known = 0
    for n, w_row, g_row in zip(ns, want, got):
        for (label, computed, as_text), w, g in zip(labels(), w_row, g_row):
            if w == g:
                continue
            if computed and as_text and known_difference(w, g):
                known += 1
                continue
            diffs.append((n, label, w, g))
    assert not diffs, diffs[:10]
    # the accepted difference stays what it is: a minority of the computed cases
    assert known < len(ns) * 4


@pytest.mark.parametrize(
    ("expr", "want_text"),
    [
        ('sprintf("%d", [1 / 10000000])', "%!d(string=1e-07)"),
        ('sprintf("%d", [3 / 20000000])', "%!d(float64=1.5e-07)"),
        ('sprintf("%x", [1e-200 / 1e200])', "31652d343030"),
        ('sprintf("%e", [1e-200 / 1e200])', "%!e(string=1e-400)"),
        ('sprintf("%v", [5e-324 / 7])', "0"),
        ('sprintf("%e", [2 * 1e200 * 1e200])', "%!e(big.Int=2" + "0" * 400 + ")"),
        ('sprintf("%x", [2 * 1e200 * 1e200])', format(2 * 10**400, "x")),
        ('sprintf("%v", [[0 / -5]])', "[-0]"),
        ('json.marshal({0 / -5: [0 / -5]})', '{"-0":[-0]}'),
        ('sprintf("%v", [{0 / -5}])', "{-0}"),
        ("yaml.marshal(13708279311291771 + 0.5)", "1.3708279311291772e+16\n"),
        ("yaml.marshal([-1e-200 / 1e200, 1e-200 / 1e200, 1 / 3])", "- -0\n- 0\n- 0.3333333333333333\n"),
    ],
)
def test_computed_number_texts(oracle: Oracle, expr: str, want_text: str) -> None:
    """Numbers OPA computed, whose Go value in sprintf follows from their text."""
    q = f"x := {expr}"
    assert oracle.evaluate({}, q).bindings == [{"x": want_text}]
    assert pyrego.Engine().eval_query(q)["result"][0]["bindings"] == {"x": want_text}
