"""Differential tests on random whole programs: pyrego in every execution form vs OPA v1.20.2.

Programs come from :mod:`program_gen` (a fixed ``random.Random`` seed): several
packages and files, imports, complete/partial/ref-head rules, defaults, else
chains, functions, ``with``, ``every``, comprehensions, mixed-type values; and
some from :mod:`program_gen_ext` (template strings, more builtins, ref heads
with constants and variables at several levels, ...); each with random
inputs and base data. Each query (``x := data.<rule>``, a function
call, ``data.gen``) is evaluated in OPA (one fresh engine per evaluation), and in
pyrego through ``eval_query``, ``eval_rule``, ``prepare_rule(path)(input)``,
``eval_many`` (a small list, and a longer iterator), the compact and the fast
code tiers, several threads on one engine, and without strict builtin errors
where OPA raised none. Values are compared by :func:`pyrego.conformance.canonical`
(numbers by value), errors by OPA error code.

``python tests/test_program_differential.py [N [SEED]] [--ext] [-v]`` runs N
programs (``--ext``: with the generator's extra constructs) and prints each
disagreement (for longer hunts than the test's); ``-v`` prints those of
strict builtin errors and OPA's rule index too.
"""

from __future__ import annotations

import json
import random
import signal
import sys
import threading
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import pyrego
from opa_oracle import Oracle, OracleResult, OracleUnavailable, get_oracle
from program_gen import Program
from program_gen_ext import gen_program
from pyrego.codegen import tiers as codegen_tiers
from pyrego.conformance import canonical, read_known_failures, write_known_failures
from pyrego.runtime.convert import from_python, to_json_value

KNOWN_FAILURES_FILE = Path(__file__).resolve().parent / "program_differential_known_failures.txt"
KNOWN_FAILURES = read_known_failures(KNOWN_FAILURES_FILE)

SEED = "pyrego-program-differential"
PROGRAMS = 120  # (about half a second each, mostly OPA's compile per evaluation)
EXT_PROGRAMS = 16  # (of the generator's extended mode: ids ext-000...)
NEVER = 10**9


# ---------------------------------------------------------------- forms of an answer

Answer = tuple[str, Any]  # ("error", code) | ("undefined", None) | ("value", canonical)


def _canon(value: Any) -> Any:
    """:func:`canonical`, with object keys that are JSON texts (a non-string
    key as OPA renders it) compared as the values they spell: OPA writes the
    key ``1.0`` as ``"1.0"`` where pyrego writes ``"1"``, the same number."""
    if isinstance(value, dict):
        return ("obj", frozenset((_key(k), _canon(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("arr", tuple(_canon(v) for v in value))
    return canonical(value)


def _key(k: str) -> Any:
    if k[:1] in "-0123456789[{" or k in ("true", "false", "null"):
        try:
            return ("json", _canon(json.loads(k, parse_float=Decimal)))
        except ValueError:
            pass
    return k


def _value_answer(value: Any) -> Answer:
    if value is pyrego.UNDEFINED:
        return ("undefined", None)
    if _bool_in_hashable(value, False):
        # A Python set (or dict) cannot hold both true and 1: a documented
        # limit of eval_rule's Python values (README), not compared.
        return ("lossy", None)
    return ("value", _canon(to_json_value(from_python(value))))


def _collides(c: Any) -> bool:
    """Whether canonical value ``c`` holds true and 1 (or false and 0) as
    members of one array (maybe a set's) or keys of one object: Python's
    ``True == 1`` merges them in a set or dict."""
    if type(c) is not tuple or not c:
        return False
    if c[0] == "arr":
        members = set(c[1])
        if any(("bool", b) in members and ("num", Decimal(int(b))) in members for b in (True, False)):
            return True
        return any(_collides(x) for x in c[1])
    if c[0] == "obj":
        keys = {k for k, _ in c[1]}
        if any(("json", ("bool", b)) in keys and ("json", ("num", Decimal(int(b)))) in keys for b in (True, False)):
            return True
        return any(_collides(k[1]) if type(k) is tuple else False for k in keys) or any(_collides(v) for _, v in c[1])
    return False


def _bool_in_hashable(value: Any, hashed: bool) -> bool:
    if isinstance(value, bool):
        return hashed
    if isinstance(value, (set, frozenset)):
        return any(_bool_in_hashable(v, True) for v in value)
    if isinstance(value, dict):
        return any(_bool_in_hashable(k, True) or _bool_in_hashable(v, hashed) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_bool_in_hashable(v, hashed) for v in value)
    return False


def _opa_answers(oracle: Oracle, prog: Program, query: str) -> list[OracleResult]:
    return [oracle.evaluate(prog.modules, query, input=inp, data=prog.data) for inp in prog.inputs]


def _opa_rule_answer(res: OracleResult) -> Answer:
    if res.is_error:
        return ("error", res.error_code)
    if not res.bindings:
        return ("undefined", None)
    assert len(res.bindings) == 1, res.bindings
    return ("value", _canon(res.bindings[0]["x"]))


def _bindings_answer(bindings: list[dict[str, Any]]) -> Answer:
    return ("value", Counter(frozenset((k, _canon(v)) for k, v in b.items()) for b in bindings))


def _engine(prog: Program, strict: bool = True) -> pyrego.Engine:
    """An engine with the program (its errors, as parse errors, come at its first evaluation)."""
    e = pyrego.Engine()
    e.set_strict_builtin_errors(strict)
    try:
        e.add_policies(prog.modules)
    except pyrego.RegoError as exc:
        return _Failing(exc)  # type: ignore[return-value]
    e.add_data(prog.data)
    return e


class _Failing:
    """An engine whose policies did not load: each evaluation raises their error."""

    def __init__(self, exc: pyrego.RegoError) -> None:
        self.exc = exc

    def set_input(self, value: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self.exc

        return fail


def _catch(fn: Any, *args: Any, **kwargs: Any) -> Answer:
    try:
        return _value_answer(fn(*args, **kwargs))
    except pyrego.RegoError as exc:
        return ("error", exc.code)


def _query_answer(e: pyrego.Engine, query: str, inp: Any) -> Answer:
    try:
        res = e.eval_query(query, input=inp)
    except pyrego.RegoError as exc:
        return ("error", exc.code)
    return _bindings_answer([dict(r.get("bindings") or {}) for r in res.get("result") or []])


def _batch_answer(res: Any) -> Answer:
    if res.error is not None:
        return ("error", res.error.code)
    return _value_answer(res.value)


# ---------------------------------------------------------------- one program

RUNTIME_ERRORS = ("eval_builtin_error", "eval_type_error")


def _strict_only(a: Answer, b: Answer) -> bool:
    """Whether one answer is a builtin's error and the other no error: which
    expressions run before a body fails may differ (OPA's rule index skips
    bodies; pyrego may order tests otherwise), and only strict builtin
    errors show it."""
    return (a[0] == "error" and a[1] in RUNTIME_ERRORS) != (b[0] == "error" and b[1] in RUNTIME_ERRORS) and "error" in (a[0], b[0]) and not (a[0] == b[0] == "error" and not {a[1], b[1]} & set(RUNTIME_ERRORS))


def _show(a: Answer) -> str:
    kind, v = a
    return f"{kind} {v!r}"[:300]


def program_disagreements(oracle: Oracle, prog: Program, threads: bool = True) -> list[str]:
    """Each way pyrego disagrees with OPA on ``prog`` (empty when none)."""
    out: list[str] = []
    want: dict[tuple[str, int], Answer] = {}
    rule_want: dict[tuple[str, int], Answer] = {}
    for query, path in prog.queries:
        for i, res in enumerate(_opa_answers(oracle, prog, query)):
            want[query, i] = ("error", res.error_code) if res.is_error else _bindings_answer(res.bindings)
            if path is not None:
                rule_want[path, i] = _opa_rule_answer(res)

    def check(form: str, key: tuple[str, int], got: Answer, table: dict[tuple[str, int], Answer]) -> None:
        expected = table[key]
        if table is rule_want and expected[0] == "value" and _collides(expected[1]):
            return  # (a Python value cannot hold it: see _value_answer)
        if got != expected and not (got[0] == "lossy" and expected[0] == "value"):
            tag = "[strict] " if _strict_only(expected, got) else ""
            out.append(f"{tag}{form} {key[0]} input#{key[1]}: OPA {_show(expected)} != pyrego {_show(got)}")

    old = codegen_tiers.PROMOTE_AFTER
    try:
        for tier, promote in (("compact", NEVER), ("fast", 1)):
            codegen_tiers.PROMOTE_AFTER = promote
            pyrego.clear_compile_cache()
            e = _engine(prog)
            for query, _path in prog.queries:
                for i, inp in enumerate(prog.inputs):
                    check(f"{tier}/eval_query", (query, i), _query_answer(e, query, inp), want)
            paths = [p for _, p in prog.queries if p is not None]
            for path in paths:
                for i, inp in enumerate(prog.inputs):
                    check(f"{tier}/eval_rule", (path, i), _catch(e.eval_rule, path, input=inp), rule_want)
                    e.set_input(inp)
                    check(f"{tier}/eval_rule(set_input)", (path, i), _catch(e.eval_rule, path), rule_want)
            e2 = _engine(prog)
            for path in paths:
                try:
                    rule = e2.prepare_rule(path)
                except pyrego.RegoError as exc:
                    for i in range(len(prog.inputs)):
                        check(f"{tier}/prepare_rule", (path, i), ("error", exc.code), rule_want)
                    continue
                for i, inp in enumerate(prog.inputs):
                    check(f"{tier}/prepare_rule", (path, i), _catch(rule, inp), rule_want)
            e3 = _engine(prog)
            for path in paths:
                n = len(prog.inputs)
                for form, inputs in (("eval_many", list(prog.inputs)), ("eval_many(iter)", iter(prog.inputs * 20))):
                    try:
                        results = list(e3.eval_many(path, inputs))
                    except pyrego.RegoError as exc:
                        results = [exc] * (n * 20)
                    for j, res in enumerate(results):
                        got = ("error", res.code) if isinstance(res, pyrego.RegoError) else _batch_answer(res)
                        check(f"{tier}/{form}", (path, j % n), got, rule_want)
            # Without strict builtin errors: the same answers where OPA raised no error.
            e4 = _engine(prog, strict=False)
            for path in paths:
                for i, inp in enumerate(prog.inputs):
                    if rule_want[path, i][0] != "error":
                        check(f"{tier}/non-strict", (path, i), _catch(e4.eval_rule, path, input=inp), rule_want)
        if threads:
            codegen_tiers.PROMOTE_AFTER = old
            pyrego.clear_compile_cache()
            single = _engine(prog)
            mine = {(path, i): _catch(single.eval_rule, path, input=prog.inputs[i]) for path, i in rule_want}
            out += _thread_disagreements(prog, mine)
    finally:
        codegen_tiers.PROMOTE_AFTER = old
        pyrego.clear_compile_cache()
    return out


def _thread_disagreements(prog: Program, rule_want: dict[tuple[str, int], Answer]) -> list[str]:
    e = _engine(prog)
    keys = sorted(rule_want)
    bad: list[str] = []
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)

    def work(seed: int) -> None:
        rnd = random.Random(seed)
        for _ in range(3):
            for path, i in rnd.sample(keys, len(keys)):
                got = _catch(e.eval_rule, path, input=prog.inputs[i])
                if got != rule_want[path, i]:
                    bad.append(f"threads {path} input#{i}: one thread {_show(rule_want[path, i])} != threads {_show(got)}")

    try:
        ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old_interval)
    return bad[:3]


# ---------------------------------------------------------------- the test


@pytest.fixture(scope="session")
def oracle() -> Oracle:
    try:
        return get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")


def _programs(n: int, seed: Any, ext: bool = False) -> list[Program]:
    r = random.Random(seed)
    return [gen_program(r, ext=ext) for _ in range(n)]


def _ids_and_programs(chunk: int) -> list[tuple[str, Program]]:
    """Chunk ``chunk`` of 4 of the test's programs: the plain ones, then the extended ones."""
    out = [(f"program-{i:03d}", p) for i, p in enumerate(_programs(PROGRAMS, SEED)) if i % 4 == chunk]
    return out + [(f"ext-{i:03d}", p) for i, p in enumerate(_programs(EXT_PROGRAMS, SEED + "-ext", ext=True)) if i % 4 == chunk]


@pytest.mark.parametrize("chunk", range(4))
def test_random_programs(oracle: Oracle, chunk: int) -> None:
    failures = []
    for i, (pid, prog) in enumerate(_ids_and_programs(chunk)):
        problems = program_disagreements(oracle, prog, threads=i % 2 == 0)
        excused = KNOWN_FAILURES.get(pid)
        if excused == STRICT_ORDER:
            # (known to differ only in strict builtin errors: anything else is new)
            if not problems:
                failures.append(f"{pid} is listed as a known failure but agrees with OPA now: remove it from {KNOWN_FAILURES_FILE.name}")
            problems = [p for p in problems if not p.startswith("[strict]")]
            excused = None if problems else excused
        if problems and excused is None:
            failures.append(f"{pid}:\n  " + "\n  ".join(problems[:5]) + "\n" + _dump(prog))
        if not problems and pid in KNOWN_FAILURES and KNOWN_FAILURES[pid] != STRICT_ORDER:
            failures.append(f"{pid} is listed as a known failure but agrees with OPA now: remove it from {KNOWN_FAILURES_FILE.name}")
    assert not failures, "\n\n".join(failures)


# Disagreements the generator found, minimised: each a program compared in every form.
_INPUTS = [{"a": "k", "b": "k", "s": "A"}, {"a": 1, "b": 1.0, "s": [1]}, {}]
_DISTINCT = [{"a": "k", "b": "j"}, {"a": 1, "b": 2.5}, {}]
REGRESSIONS: dict[str, tuple[str, list[str], list[Any]]] = {
    # An object literal whose computed keys turn out equal: no conflict; the
    # entry whose key sorts last in OPA's term order is kept (constants, then
    # variables and calls, then refs, then arrays).
    "object-literal-equal-keys": (
        "package t\n"
        'a := x if x := {input.a: 1, "k": 2}\n'
        'b := x if x := {"k": 2, input.a: 1}\n'
        "c := x if x := {input.b: 1, input.a: 2}\n"
        'e := x if x := {[input.a]: 2, ["k"]: 1, null: 3, input.s: 4}\n'
        "f := x if x := {count(input.a): 2, 1: 1}\n"
        "g := [x | x := {input.a: 1, input.b: 2}]\n",
        ["a", "b", "c", "e", "f", "g"],
        _INPUTS,
    ),
    "object-literal-equal-keys-local": (
        "package t\nd := x if { y := input.a; x := {input.b: 1, y: 2} }\ne := x if { y := 1; x := {count(input.s): 1, y: 2} }\n",
        ["d", "e"],
        _INPUTS,
    ),
    # The type of `some k, v in {...}` over keys that are not constant: that
    # of the entry whose key sorts last (a variable before a ref).
    "object-literal-key-types": (
        "package t\ns1 contains 1\na if { some k, v in {input.a: 1, s1: null}; k = v }\n",
        ["a"],
        _DISTINCT,
    ),
    "object-literal-key-types-local": (
        'package t\nb if { x := input.a; some k, v in {input.b: 1, x: "x"}; v + 1 }\n',
        ["b"],
        _DISTINCT,
    ),
    # Iterated where pyrego otherwise iterates by the keys' values (strict
    # builtin errors, a run again after an error): in the order built.
    "object-literal-iterated-as-built": (
        'package t\nb if { x := input.a; some v in {input.b: 1, x: "x"}; v + 1 }\n',
        ["b"],
        _DISTINCT,
    ),
    "object-literal-key-types-error": (
        'package t\nb if { some k, v in {input.a: 1, input.b: "x"}; v + 1 }\n',
        ["b"],
        _DISTINCT,
    ),
    # A key written twice is one entry (the later), before anything is evaluated.
    "object-literal-key-written-twice": (
        "package t\np := x if x := {input.a: input.m.x, input.a: 1}\nq := [v | some v in {input.a: input.m.x, input.a: 1}]\n",
        ["p", "q"],
        _INPUTS,
    ),
    # `some v in` a set or object literal holding variables iterates its
    # terms in OPA's order of terms, a value two terms share coming twice.
    "iterate-literal-terms": (
        "package t\n"
        'a := [v | some v in {null, "A", input.a}]\n'
        'b := count([1 | some v in {input.a, "k"}])\n'
        'c := [v | v2 := 1; v3 := 2; some v in {v3: "ab", "a": "", "é": v2}]\n'
        'd := [r | some r in {input.s, "guest"}]\n',
        ["a", "b", "c", "d"],
        _INPUTS,
    ),
    # A variable of a known type inside a composite operand must unify with
    # each type it may have (sum wants numbers).
    "typecheck-composite-operand-variable": ("package t\np if { x := true; sum([0.5, x]) }\n", ["p"], _INPUTS),
    "typecheck-composite-operand-variable-ok": ("package t\np if { some x in [1, true]; sum([x]) }\n", ["p"], _INPUTS),
    # print has no value: a print call as an operand is a type error.
    "print-used-as-value": ('package t\np if {\n\tprint("1")\n\t-2.5\n}\n', ["p"], _INPUTS),
    "print-in-array": ("package t\np := [print(1)]\n", ["p"], _INPUTS),
    # `a.b[1] contains y`: a set rule of a path of constants, an empty set
    # when its body fails, unless a rule of the same document has a variable
    # in its path.
    "ref-head-constant-path-set": (
        "package t\n"
        'r.x[10] contains "a" if input.q\n'
        "r.x[null] contains 1 if input.a == 1\n"
        "r.y[[1]].z contains 1 if false\n"
        "s.y[10] contains 1 if false\n"
        "s.y[v] contains 1 if { some v in [3]; input.a }\n"
        "t[true] contains 1 if false\n"
        'u.x["é"] contains 1 if false\n'
        "u.x[2] contains null if input.a\n",
        ["r", "s", "t", "u"],
        _INPUTS,
    ),
    # A call of a function of the policies nested in an expression's operands
    # is evaluated before the expression (OPA's RewriteExprTerms): its
    # conflict is raised even where an operand before it is undefined.
    "nested-function-call-first": (
        "package t\n"
        "f(_) := 1 if input.c\n"
        "f(_) := 2\n"
        "p if input.m[input.s] > f(1)\n"
        "q if [input.m[input.s], f(1)]\n"
        "r := x if x := input.m[input.s] + f(1)\n"
        "s if input.m[input.s] = f(1)\n"
        "u if input.m[input.s][f(1)]\n"
        "v := [x | x := input.m[input.s] + f(1)]\n",
        ["p", "q", "r", "s", "u", "v"],
        [{"s": 2, "m": {}, "c": True}, {"s": 2, "m": {}}, {"s": "a", "m": {"a": 3}}],
    ),
    # A body of one `true` expression (negated or not, with modifiers or not)
    # gives way to what OPA's compiler moves out of a head holding a ref, a
    # call, a comprehension or a template string: such a rule is defined.
    "true-body-replaced-by-head": (
        "package t\n"
        "f(_) := 1 if input.c\n"
        "f(_) := 2\n"
        "g := 1\n"
        "a := f(1) if { true with input.m as input.zz }\n"
        "b := g if { not true }\n"
        "c := [x | x := 1] if { not true with input.m as 1 }\n"
        "d contains count([1]) if { true with input.m as input.zz }\n"
        "e := 1 if { false } else := input.m if { not true }\n"
        "h := input.m if { not true } else := 2\n"
        'k := $"a{1}" if not true\n'
        "m := count([1]) if { not true; true }\n"
        "n := count([1]) if { 1 with input.m as input.zz }\n"
        "o := 5 if { not true }\n"
        "q[count([1])] := 1 if { true with data.t as {} }\n",
        ["a", "b", "c", "d", "e", "h", "k", "m", "n", "o", "q"],
        [{"c": True}, {"m": 1}, {}],
    ),
    # OPA's rule tree has a node for each constant key (of any type) that
    # starts a rule's path after its strings, and an object at each node
    # holding no rules: `a[1].b := v` makes `{1: {}}` when its body fails,
    # `a[1].b[x] := v` makes `{1: {"b": {}}}`; not where a rule at the
    # document (or above) has a variable first, nor below a node that holds
    # a rule; a child document of such a node is whole (`{"s": {}}`).
    "ref-head-constant-keys-objects": (
        "package t\n"
        "a[1].x := 1 if input.q\n"
        "a[1].y.z := 2 if input.q\n"
        "b[true].x[y] := 1 if { y := input.a; input.q }\n"
        "b[2] := 1\n"
        "c[1].x := 1 if input.q\n"
        "c[1][y] := 2 if { y := input.a; input.q }\n"
        "d[y].x := 1 if { y := input.a; input.q }\n"
        "d.s[1].t := 1 if input.q\n"
        "e.s[input.m.x] := true\n"
        "e[false] contains 1\n"
        'f[12345678901234567890].x["true"][input.a] contains input.q\n'
        "g[null].x := 1 if input.q\n"
        "g[[1]].y := 1 if input.q\n",
        ["a", "b", "c", "d", "e", "f", "g"],
        _INPUTS,
    ),
    # A `with` target goes into a rule's document only past a node of OPA's
    # rule tree that holds rules: `p[1] contains 2` holds none at `p`.
    "with-target-constant-key-document": (
        "package t\n"
        "m[1] contains 2\n"
        "n[1].x[y] := 2 if y := 1\n"
        "a := 1 if { true with data.t.m.y as 1 }\n"
        "b := 1 if { true with data.t.n[1].y.z as 1 }\n"
        "c := count(n) with data.t.n.q as 1\n",
        ["a", "b", "c"],
        _INPUTS,
    ),
    "with-target-constant-key-inside-rule": ("package t\nn[1].x[y] := 2 if y := 1\na := 1 if { true with data.t.n[1].x.z as 1 }\n", ["a"], _INPUTS),
    # A rule whose path is all constants holds no other rule inside it.
    "ref-head-constant-key-extent-conflict": (
        "package t\nm[1].x := 1 if input.q\nm[1] := 5 if input.q\nm[1].y[z] := 5 if z := input.a\n",
        ["m"],
        _INPUTS,
    ),
    "ref-head-constant-key-set-extent-conflict": ("package t\nm[2] contains 1\nm[2].q := 1\n", ["m"], _INPUTS),
    # A template string reads a bound variable as `{v}`, which OPA's type
    # checker unifies with `any`: the variable is untyped after it (its type
    # errors come at evaluation); any other part is `{x | x = t}`.
    "template-variable-untyped-after": (
        "package t\n"
        'a := {x | some x in v} if { v := 5; $"{v}" }\n'
        'b := 1 if { some v in [5]; $"{v}"; v[0] }\n'
        'c := 1 if { v := 5; $"{v}" with input as 1; v[0] }\n'
        'd := 1 if { v := 5; $"{v}", v in {set() - v} }\n'
        'f(v) := 1 if { $"{v}"; v[0] }\n'
        "e := f(5)\n",
        ["a", "b", "c", "d", "e"],
        _INPUTS,
    ),
    "template-variable-typed-in-comprehension": ('package t\np := 1 if { v := 5; [1 | $"{v}"]; v[0] }\n', ["p"], _INPUTS),
    "template-expression-part-typed": ('package t\np := 1 if { v := 5; $"{v + 1}"; v[0] }\n', ["p"], _INPUTS),
    # Rules held at one node of OPA's rule tree (`p` for `p[x]...`, `p[1]`
    # for `p[1][x]...`) are all multi-valued or all single-valued.
    "ref-head-mixed-kinds-at-node": ("package t\nm[x] contains 1 if x := input.a\nm[y].z := 2 if y := input.b\n", ["m"], _INPUTS),
    "ref-head-mixed-kinds-at-constant-key": ("package t\nm[1][x] contains 1 if x := input.a\nm[1][y] := 2 if y := input.b\n", ["m"], _INPUTS),
    "ref-head-mixed-kinds-apart": ("package t\nm[1][x] contains 1 if x := input.a\nm[2][y] := 2 if y := input.b\nm[3] contains 1\n", ["m"], _INPUTS),
    # A variable in print's operands must be bound before the call.
    "print-undeclared-variable": ("package t\np if { print(input.m[_]) }\n", ["p"], _INPUTS),
    "print-undeclared-in-every": ("package t\np if { every x in [1] { print(x, y) } }\n", ["p"], _INPUTS),
    "print-declared-variables": (
        "package t\n"
        "f(a) := 1 if print(a)\n"
        "p := f(1)\n"
        "q if { x := input.m[_]; print(x, [y | y := x]) }\n"
        "r if { some x in [1]; print(x) }\n"
        "import input.m as mm\n"
        "s if print(p, mm, data.t.p, input)\n",
        ["p", "q", "r", "s"],
        _INPUTS,
    ),
    # `if set()` without braces: one expression, an empty set (true); it was
    # refused as a parse error.
    # OPA's rule index skips a definition (or else branch) whose indexed
    # tests of input, base data or arguments cannot hold before its body
    # runs: the conflict before the test is never reached there.
    "index-skips-body": (
        "package t\n"
        "bad(_) := 1\n"
        "bad(_) := 2\n"
        "c0 := 1\n"
        "c0 := 2\n"
        "p if { bad(1); input.x == 1 }\n"
        "q if { c0 == 1; input.y.k == \"a\" }\n"
        "r if { bad(2); input.xs[_] == 1 }\n"
        "s := 1 if { bad(1); input.x == 2 } else := 2 if { input.x == 1 }\n"
        "f(x) := 1 if { bad(1); x == 2 }\n"
        "g if f(input.x)\n"
        "h if { bad(1); input.x in [\"a\", \"b\"] }\n"
        "n if { bad(1); input.x == null }\n"
        "u if { bad(1); y := input.w; y == [1, 2] }\n"
        "v if { bad(1); glob.match(\"a.*\", [\".\"], input.x) }\n",
        ["p", "q", "r", "s", "g", "h", "n", "u", "v"],
        [{"x": 3, "y": {"k": "b"}, "xs": [2], "w": [1]}, {"x": 1, "xs": [1], "w": [1, 2]}, {"x": False}, {}, {"x": "b.c"}, {"x": "a.c"}],
    ),
    # With strict builtin errors, a builtin that fails before a test OPA's
    # index makes (an equality, membership, glob.match, a ref defined, a
    # function's argument) is not reached where the test fails.
    "index-skips-body-strict-builtin": (
        "package t\n"
        "p if { to_number(input.s) > 0; input.x == 1 }\n"
        'q := 1 if { upper(input.s); input.y == "a" } else := 2 if { lower(input.s); input.x == 2 }\n'
        'r contains x if { x := to_number(input.s); input.k == "a" }\n'
        "s if { not input.a - input.b; input.x == 3 }\n"
        "f(v) := 1 if { count(v); v == [1] }\n"
        "g if f(input.s)\n"
        "h if { y := [to_number(input.s)]; input.x in [1, 2] }\n"
        'k if { to_number(input.s); glob.match("a.*", ["."], input.x) }\n'
        "m := y if { y := sum(input.s); input.x }\n",
        ["p", "q", "r", "s", "g", "h", "k", "m"],
        [
            {"s": "abc", "x": 2},
            {"s": 5, "x": 2, "a": "a", "b": 1},
            {"s": "1", "x": 1, "k": "a"},
            {"s": 3, "x": 1, "y": "a", "k": "b"},
            {"s": [1], "x": "a.b"},
            {"s": {"a": 1}, "x": 3, "a": 1, "b": "x"},
            {},
        ],
    ),
    # OPA evaluates the refs of a rule's head (its key, value, or a key of
    # its path) in the body, after it: its index tests them first.
    "index-skips-body-head-refs": (
        "package t\n"
        "bad(_) := 1\n"
        "bad(_) := 2\n"
        "a contains input.s if bad(1)\n"
        "b[input.k] := 1 if bad(1)\n"
        "c := input.v if bad(1)\n"
        "d := input.v if to_number(input.s)\n"
        "e.x[input.k] := 1 if bad(1)\n"
        "o[input.m[input.s]] := 1 if bad(1)\n"
        "u := [input.v] if bad(1)\n",
        ["a", "b", "c", "d", "e", "o", "u"],
        [{"s": "abc"}, {"k": "a", "s": 1}, {"v": 1, "s": "x"}, {"m": {}, "s": "a"}, {}],
    ),
    # OPA binds a negated expression's ref operands before the negation
    # (RewriteDynamicTerms), so its index tests them: a body whose negated
    # expression reads an undefined ref is skipped before a call that raises.
    "index-skips-body-negated-operand": (
        "package t\nf(_) := 1 if input.c\nf(_) := 2\nr if { not input.m.x >= f(2) }\ns := 5 if { not input.m.x >= f(2) }\n",
        ["r", "s"],
        [{"c": True, "m": {}}, {"c": True, "m": {"x": 1}}, {"m": {"x": 3}}],
    ),
    # With strict builtin errors, a builtin call nested in an expression's
    # operands raises before the refs of the expression are read (OPA's
    # RewriteExprTerms evaluates nested calls first).
    "nested-builtin-call-first-strict": (
        "package t\n"
        "conf := 1 if input.q\n"
        "conf := 2\n"
        "a if { input.m[input.k] >= to_number(input.s) }\n"
        "b := x if { x := input.m[input.k] + to_number(input.s) }\n"
        "c if { [input.m[input.k], to_number(input.s)] }\n"
        "d if { input.m[to_number(input.s)] }\n"
        "e if { conf <= (input.n * to_number(true)) }\n"
        'g if { x := {"a": input.m[input.k], "b": upper(input.s)} }\n'
        "h if { some k; input.m[k] >= to_number(input.s) }\n"
        "i if { input.m[input.k] - abs(input.s) > 0 }\n"
        "j := [x | x := input.m[input.k] + to_number(input.s)]\n",
        ["a", "b", "c", "d", "e", "g", "h", "i", "j"],
        [
            {"s": "abc", "m": {}},
            {"s": 1, "m": {"a": 1}, "k": "a"},
            {"s": "2", "m": {"a": 3}, "k": "a", "n": None, "q": True},
            {"s": "x", "m": {"a": 3}, "k": "b", "n": 1},
            {},
        ],
    ),
    # OPA evaluates a document's definitions in its index's order: those
    # without indexed tests first. Which error comes first depends on it.
    "index-definition-order": (
        "package t\n"
        "a := input.n % 0.5\n"
        "a := v if { some v in [1, 2] }\n"
        'f(_) := concat(",", [input.b])\n'
        "f(_) := 1\n"
        "f(_) := true\n"
        "g := f(1)\n"
        "h := 1 if { x := to_number(input.s); input.x == 1 }\n"
        "h := 2 if { some v in [1, 2]; v > 5 }\n"
        "h := 3 if { input.x }\n"
        "k := input.n % 0.5\n"
        "k := 2 if input.q\n",
        ["a", "g", "h", "k"],
        [{"n": 2.5, "b": -1, "s": "x", "x": 1}, {"n": 3, "b": "s", "s": "1", "x": 1, "q": True}, {"x": 2, "q": True}, {}],
    ),
    # OPA evaluates the calls of a rule's head (at the end of its body)
    # before the head's refs: a call that is undefined, or fails with strict
    # builtin errors, comes before a conflict in a document the head reads.
    "head-calls-before-head-refs": (
        "package t\n"
        "c1 := 1\n"
        "c1 := 2\n"
        "r3.x[sum(input.s)] := c1 if { true }\n"
        "r4[sum(input.s)] := c1 if { true }\n"
        "r5[sum(input.s)] := c1\n"
        "r6[c1] := sum(input.s)\n"
        "r7 contains [c1, sum(input.s)]\n",
        ["r3", "r4", "r5", "r6", "r7"],
        [{"s": "x"}, {"s": [1]}, {}],
    ),
    # OPA's index takes a collection holding the value a test requires
    # among its members: the body runs (and raises before its test fails).
    "index-matches-collection-members": (
        "package t\n"
        "bad(_) := 1\n"
        "bad(_) := 2\n"
        "p if { bad(1); input.x == 1 }\n"
        'q if { bad(1); input.x == "a" }\n'
        'r if { bad(1); input.x in ["a", "b"] }\n'
        'u if { to_number("z"); input.y == 1 }\n'
        "v if { bad(1); input.z == 1 }\n"
        "v if { bad(1); input.z == [1, 2] }\n",
        ["p", "q", "r", "u", "v"],
        [
            {"x": [1], "y": [1], "z": [1]},
            {"x": {"k": 1}, "y": {"k": 1}, "z": [1, 2]},
            {"x": ["a"]},
            {"x": "abc", "y": "1"},
            {"x": 2, "z": 1},
            {"x": [2], "y": [2], "z": [2]},
            {"x": [[1]], "z": {"a": [1, 2]}},
            {"x": {"k": "b"}},
            {"x": "b"},
        ],
    ),
    # OPA's RewriteExprTerms moves calls out of a `some ... in` collection,
    # an `every` domain, an expression with `with` (the call keeps the
    # `with`) and an object literal (whose entries pyrego builds in OPA's
    # order of their keys); a comprehension's term has its calls at the end
    # of its body. With strict builtin errors such a call raises before an
    # undefined ref of the expression fails it.
    "nested-builtin-call-first-strict-collections": (
        "package t\n"
        "a contains v if { some v in [input.m[input.s], (1 % input.m.a)] }\n"
        'b if { some k, v in {"x": input.m[input.s], "y": (1 % input.m.a)}; k != v }\n'
        "c if { every v in [input.m[input.s], (1 % input.m.a)] { v } }\n"
        'd if { every k, v in {input.m[input.s]: 1, "y": (3 / input.n)} { v != k } }\n'
        "e if { x := [input.m[input.s], (1 % input.m.a)] with input.w as 1 }\n"
        'g if { x := {(1 / input.n): 1, "k": input.m[input.s]} }\n'
        "h := [[input.m[input.s], (1 % input.m.a)] | true]\n"
        "i := {input.m[input.s]: (1 % input.m.a) | true}\n"
        "j if { some v in [[input.m[input.s]], [(1 % input.m.a)]][0] }\n",
        ["a", "b", "c", "d", "e", "g", "h", "i", "j"],
        [
            {"s": "", "m": {"a": False}, "n": 0},
            {"s": "x", "m": {"a": 2, "x": 1}, "n": 2},
            {"s": "x", "m": {"a": False, "x": 1}, "n": "q"},
            {"m": {}},
        ],
    ),
    # OPA tests the refs of a rule's head (bound at the end of its body) in
    # its index even where no expression of the body can raise: the rule is
    # skipped where one is undefined, before the head's calls could raise (a
    # builtin's error, a conflict).
    "index-skips-body-head-calls": (
        "package t\n"
        "f(_) := 1\n"
        "f(_) := 2\n"
        "o[f(null)] := input.m.x if { true }\n"
        "r := [(1 / input.n), input.m.a]\n"
        "s := [(1 / input.n), input.m]\n",
        ["o", "r", "s"],
        [{}, {"m": {"x": 1}}, {"m": {}, "n": "ab"}, {"m": {"a": 1}, "n": 0}],
    ),
    # OPA binds an `every` domain before the loop: its refs are among the
    # index's tests.
    "index-skips-body-every-domain": (
        "package t\n"
        "bad(_) := 1\n"
        "bad(_) := 2\n"
        "c := 1 if bad(1)\n"
        'p if { every v in {input.s: input.m.a, "k": c} { v } }\n'
        "q if { every v in [input.m.a, to_number(input.z)] { v } }\n"
        "r if { every v in input.m.a { v > bad(2) } }\n",
        ["p", "q", "r"],
        [{"s": "x", "m": {}}, {"s": "x", "m": {"a": 1}, "z": "q"}, {"m": {"a": [1]}, "z": "1"}, {}],
    ),
    "if-empty-set-no-braces": (
        "package t\n"
        "p if set()\n"
        "q contains 1 if set() with input as 1\n"
        "r := 1 if false else := 2 if set()\n"
        "s if not set()\n",
        ["p", "q", "r", "s"],
        [{}],
    ),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regressions(oracle: Oracle, name: str) -> None:
    text, rules, inputs = REGRESSIONS[name]
    queries: list[tuple[str, str | None]] = [(f"x := data.t.{r}", f"data.t.{r}") for r in rules] + [("x := data.t", "data.t")]
    prog = Program({"t.rego": text}, {"d": {}}, inputs, queries)
    problems = program_disagreements(oracle, prog)
    assert not problems, "\n".join(problems[:5])


def test_strict_errors_turned_on_and_off(oracle: Oracle) -> None:
    # An engine's code for strict builtin errors evaluates in OPA's order for
    # them; turning the setting on (or off) on an engine takes that program.
    text, rules, inputs = REGRESSIONS["index-skips-body-strict-builtin"]
    e = pyrego.Engine()
    e.add_policy("t.rego", text)
    for strict in (False, True, False, True):
        e.set_strict_builtin_errors(strict)
        for rule in rules:
            for inp in inputs:
                got = _catch(e.eval_rule, f"data.t.{rule}", input=inp)
                want = _opa_rule_answer(oracle.evaluate({"t.rego": text}, f"x := data.t.{rule}", input=inp))
                if strict:
                    assert got == want, (rule, inp)
                elif want[0] != "error":
                    assert got == want, (rule, inp)
                else:
                    assert got[0] != "error", (rule, inp)


def test_known_failures_are_program_ids() -> None:
    ids = {f"program-{i:03d}" for i in range(PROGRAMS)} | {f"ext-{i:03d}" for i in range(EXT_PROGRAMS)}
    assert not set(KNOWN_FAILURES) - ids


def _dump(prog: Program) -> str:
    mods = "\n".join(f"# --- {name}\n{text}" for name, text in prog.modules.items())
    return f"{mods}\n# data: {json.dumps(prog.data)}\n# inputs: {json.dumps(prog.inputs)}"


# The reasons of the kinds of disagreement left (see _reason).
INDEX_SKIP = (
    "OPA's rule index skips a body whose input or base data refs cannot match (one undefined in a top-level "
    "expression, not negated, without with; input.x == a constant it differs from) before the rule that "
    "fails is evaluated; pyrego evaluates in order and raises"
)
STRICT_ORDER = (
    "strict builtin errors only: OPA's rule index skips the body, or OPA evaluates another operand first, "
    "before the builtin error pyrego raises (the same answer without strict errors)"
)


def _reason(problems: list[str]) -> str:
    if all(p.startswith("[strict]") for p in problems):
        return STRICT_ORDER
    if all(p.startswith("[strict]") or ("!= pyrego error 'eval_conflict_error'" in p and ": OPA error" not in p) for p in problems):
        return INDEX_SKIP
    return next(p for p in problems if not p.startswith("[strict]"))


def write_known(n: int = PROGRAMS) -> None:
    """Write the known-failures file for the test's programs (a reason edited there by hand stays)."""
    oracle = get_oracle()
    found = []
    progs = [(f"program-{i:03d}", p) for i, p in enumerate(_programs(n, SEED))]
    progs += [(f"ext-{i:03d}", p) for i, p in enumerate(_programs(EXT_PROGRAMS, SEED + "-ext", ext=True))]
    for pid, prog in progs:
        problems = program_disagreements(oracle, prog, threads=False)
        if problems:
            found.append((pid, _reason(problems)))
    write_known_failures(
        KNOWN_FAILURES_FILE, found, header="Random programs (pyrego vs OPA) known to disagree; regenerate with: python tests/test_program_differential.py --write-known"
    )
    print(f"{len(found)} of {len(progs)} programs disagree; wrote {KNOWN_FAILURES_FILE}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--write-known"]:
        write_known()
        return 0
    ext = "--ext" in argv
    argv = [a for a in argv if a not in ("-v", "--ext")] + (["-v"] if "-v" in argv else [])
    n = int(argv[0]) if argv else 200
    seed: Any = argv[1] if len(argv) > 1 and argv[1] != "-v" else SEED
    oracle = get_oracle()
    r = random.Random(seed)

    def timeout(signum: int, frame: Any) -> None:
        raise TimeoutError("program took over 120 s")

    signal.signal(signal.SIGALRM, timeout)
    bad = 0
    stats: Counter[str] = Counter()
    for i in range(n):
        prog = gen_program(r, ext=ext)
        signal.alarm(120)  # (a program that runs away is a finding too)
        try:
            problems = program_disagreements(oracle, prog, threads=i % 5 == 0)
        except Exception as exc:  # noqa: BLE001 - a crash is a finding too
            problems = [f"CRASH {type(exc).__name__}: {exc}"]
        finally:
            signal.alarm(0)
        first = oracle.evaluate(prog.modules, "x := data.gen", input=prog.inputs[0], data=prog.data)
        stats[first.error_code or "ok"] += 1
        serious = [p for p in problems if not p.startswith("[strict]")]
        if serious and "-v" not in argv and _reason(problems) == INDEX_SKIP:
            stats["(index skip)"] += 1
            continue
        if serious or (problems and "-v" in argv):
            problems = serious + [p for p in problems if p.startswith("[strict]")]
            bad += 1
            print(f"=== program {i} (seed {seed!r})")
            print("\n".join(problems[:6]))
            print(_dump(prog))
            sys.stdout.flush()
    print(f"{n} programs, {bad} disagree; OPA on data.gen: {dict(stats)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
