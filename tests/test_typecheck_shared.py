"""Types shared between rules: compiling stays linear in the size of the program.

``a1 := [a0, a0]``, ..., ``a59 := [a58, a58]``: each rule's type holds the one
before it twice, so ``a59``'s type prints with about 2^59 parts, while the
program has 60 small rules (OPA compiles it in 0.02 s). Here such programs
(arrays, objects, sets, a mix, functions, comprehensions, two chains unified
with each other, rules reading the chains in many ways, and errors on them)
are compiled in a child process that must finish within :data:`TIMEOUT`
seconds, three ways: with the type check's screen (:mod:`pyrego.typecheck.fast`),
with the full check only, and without the type check (the compiler, closure
planning and code generation alone).

Where OPA prints such a type in full (error messages), pyrego prints the same
text, up to :data:`pyrego.typecheck.types_text.TEXT_LIMIT` characters: the messages of
small chains are compared with OPA's, and a long one must be OPA's cut there.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyrego  # noqa: E402
import pyrego.typecheck as tc  # noqa: E402
from pyrego.conformance import CaseTimeout, run_with_timeout  # noqa: E402
from pyrego.typecheck import static_types as T
from pyrego.typecheck.types_text import CUT_MARK, TEXT_LIMIT, text_key, type_text  # noqa: E402
from pyrego.typecheck.unify import unifies  # noqa: E402
from test_typecheck_opa import compare, opa_outcome, pyrego_outcome  # noqa: E402

#: Rules in each chain.
RULES = 60

#: Seconds a child process may take to compile one program three ways (about 1 s is usual).
TIMEOUT = 20

# ---------------------------------------------------------------- programs


def chain(name: str, n: int, kind: str) -> list[str]:
    """Rules ``name0`` .. ``name<n-1>``, each holding the one before it twice (``lin``: once)."""
    lines: list[str] = []
    for i in range(n):
        p = f"{name}{i - 1}"
        k = "array" if kind == "mixed" and i == 0 else kind
        if kind == "mixed" and i:
            k = ("array", "object", "set")[i % 3]
        if k == "array":
            lines.append(f"{name}{i} := [{p}, {p}]" if i else f"{name}0 := [1]")
        elif k == "object":
            lines.append(f'{name}{i} := {{"x": {p}, "y": {p}}}' if i else f'{name}0 := {{"x": 1}}')
        elif k == "set":
            lines.append(f"{name}{i} := {{{p}, [{p}]}}" if i else f"{name}0 := {{1}}")
        else:  # lin
            lines.append(f"{name}{i} := [{p}]" if i else f"{name}0 := [1]")
    return lines


def module(lines: list[str]) -> str:
    return "package p\n\n" + "\n".join(lines) + "\n"


def chains(kind: str, n: int = RULES) -> str:
    return module(chain("a", n, kind))


def functions(n: int = RULES) -> str:
    lines = ["f0(x) := [x]"] + [f"f{i}(x) := [f{i - 1}(x), f{i - 1}(x)]" for i in range(1, n)]
    return module(lines + [f"r := f{n - 1}(1)"])


def function_calls(n: int = RULES) -> str:
    return module(["f(x) := [x, x]", "a0 := [1]"] + [f"a{i} := f(a{i - 1})" for i in range(1, n)])


def comprehensions(n: int = RULES) -> str:
    return module(["a0 := [1]"] + [f"a{i} := [x | some x in [a{i - 1}, a{i - 1}]]" for i in range(1, n)])


def comprehension_variables(n: int = RULES) -> str:
    return module(["a0 := [1]"] + [f"a{i} := y if {{ v := [a{i - 1}, a{i - 1}]; y := [x | some x in v] }}" for i in range(1, n)])


def two_chains(kind: str, n: int = RULES) -> str:
    """Two chains of the same shape (types equal, not shared), unified and merged."""
    k = n - 1
    uses = [
        f"eq if b{k} == c{k}",
        f"s := {{b{k}, c{k}}}",
        f"r := b{k} if input.x",
        f"r := c{k} if not input.x",
        f"u if [b{k}, 1] = [c{k}, 1]",
        f"m := x if {{ some x in [b{k}, c{k}]; x == b{k} }}",
    ]
    return module(chain("b", n, kind) + chain("c", n, kind) + uses)


def readers(kind: str, n: int = RULES) -> str:
    """Rules reading a chain in many ways (refs, iteration, builtins, functions, with, every)."""
    k = n - 1
    uses = [
        f"r2 := [x | some x in a{k}]",
        f"r3 := {{k: v | some k, v in a{k}}}",
        f"r4 contains x if some x in a{k}",
        f"r5[k] := v if some k, v in b{k}",
        f"r6 := count(a{k})",
        f"r7 := [p | walk(a{k}, [p, _])]",
        f'r9 := object.get({{"k": a{k}}}, "k", b{k})',
        f"r10 := x if {{ x := a{k}; x == b{k} }}",
        f"r11 := {{a{k}: b{k}}}",
        f"r12 := y if {{ y := [z | z := a{k}; z != b{k}] }}",
        "f(x) := [x, x]",
        f"r13 := f(a{k})",
        f"g(x) := y if {{ y := [x, a{k}] }}",
        f"r14 := g(b{k})",
        f"r15 := json.marshal(a{k})",
        f"r16 if every x in a{k} {{ x != b{k} }}",
        f"r19 := x if {{ x := a{k} with input as b{k} }}",
        f"r20 := [a{k}, b{k}] == [b{k}, a{k}]",
    ]
    return module(chain("a", n, kind) + chain("b", n, kind) + uses)


def error(kind: str, n: int = RULES) -> str:
    return module(chain("a", n, kind) + [f"x := a{n - 1} + 1"])


KINDS = ("array", "object", "set", "mixed")

PROGRAMS: dict[str, Callable[[], str]] = {
    **{f"chain-{k}": (lambda k=k: chains(k)) for k in KINDS},  # type: ignore[misc]
    "functions": functions,
    "function-calls": function_calls,
    "comprehensions": comprehensions,
    "comprehension-variables": comprehension_variables,
    **{f"two-chains-{k}": (lambda k=k: two_chains(k)) for k in KINDS + ("lin",)},  # type: ignore[misc]
    **{f"readers-{k}": (lambda k=k: readers(k)) for k in KINDS},  # type: ignore[misc]
    **{f"error-{k}": (lambda k=k: error(k)) for k in KINDS},  # type: ignore[misc]
}

# ---------------------------------------------------------------- compiling in bounded time

_CHILD = textwrap.dedent(
    """
    import json, sys
    import pyrego
    import pyrego.typecheck as tc

    text = sys.stdin.read()
    out = {}
    for mode in ("screen", "full", "off"):
        tc.FAST_SCREEN = mode != "full"
        pyrego.clear_compile_cache()
        engine = pyrego.Engine()
        engine.set_type_check(mode != "off")
        try:
            engine.add_policy("p.rego", text)
            engine.compile()
            out[mode] = None
        except pyrego.RegoError as err:
            out[mode] = [err.code, [str(e) for e in getattr(err, "errors", [err])]]
    print(json.dumps(out))
    """
)


def compile_in_child(text: str) -> dict[str, Any]:
    """How ``text`` compiles three ways, in a child process that must finish in time."""
    src = str(Path(pyrego.__file__).resolve().parent.parent)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=text,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"compiling took more than {TIMEOUT} s")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compiles_in_bounded_time(name: str) -> None:
    out = compile_in_child(PROGRAMS[name]())
    assert out["off"] is None
    if not name.startswith("error-"):
        assert out["screen"] is None and out["full"] is None
        return
    assert out["screen"] == out["full"]
    code, messages = out["full"]
    assert code == "rego_type_error" and len(messages) == 1
    message = messages[0]
    assert "plus: invalid argument(s)\n\thave: (" in message
    assert message.endswith(f"{CUT_MARK}, number, ???)\n\twant: (x: number, y: number, z: number)")
    assert len(message) < TEXT_LIMIT + 200


# ---------------------------------------------------------------- OPA's messages


def bounded(test: Callable[[], None]) -> Callable[[], None]:
    """``test`` fails, instead of hanging, when it takes more than :data:`TIMEOUT` seconds."""

    def run() -> None:
        try:
            run_with_timeout(test, TIMEOUT)
        except CaseTimeout:
            pytest.fail(f"no answer within {TIMEOUT} s")

    run.__name__ = test.__name__
    run.__doc__ = test.__doc__
    return run


def _small_programs() -> list[str]:
    out: list[str] = []
    for kind in KINDS + ("lin",):
        for n in (1, 4, 8):
            k = n - 1
            base = chain("a", n, kind) + chain("b", n, kind)
            for extra in (
                [f"x := a{k} + 1"],
                [f'x if a{k} == "s"'],
                [f"x := a{k}[0].foo"],
                [f'x := [y | some y in a{k}; y == "s"]'],
                [f"f(x) := [x, a{k}]", "y := f(1) + 1"],
                [f'x if [a{k}, 1] == [b{k}, "s"]'],
                [f"x := {{y | y := a{k}}}", "z if x == 7"],
                [f"x if {{ some y in a{k}; y + 1 > 0 }}"],
            ):
                out.append(module(base + extra))
    return out


@pytest.mark.parametrize("screen", [True, False], ids=["screen", "full"])
def test_errors_agree_with_opa(oracle: Any, monkeypatch: pytest.MonkeyPatch, screen: bool) -> None:
    monkeypatch.setattr(tc, "FAST_SCREEN", screen)
    problems = []

    def run() -> None:
        for text in _small_programs():
            verdict = compare(oracle, {"p.rego": text}, "true")
            if verdict.kind not in ("agree", "accept"):
                problems.append(f"--- {verdict.kind}\n{text}{verdict.detail}")

    bounded(run)()
    assert not problems, "\n".join(problems[:3])


def test_long_message_is_opas_cut(oracle: Any) -> None:
    """``a15``'s text has about 720,000 characters: OPA prints it whole, pyrego its first TEXT_LIMIT."""
    n = 16
    modules = {"p.rego": error("array", n)}
    want_code, want = opa_outcome(oracle, modules, "true")
    got_code, got = pyrego_outcome(modules, "true")
    assert want_code == got_code == "rego_type_error"
    assert len(want) == len(got) == 1
    opa_have = want[0].split("\n")[1]
    have = got[0].split("\n")[1]
    start = len("\thave: (")
    assert len(opa_have) > start + TEXT_LIMIT + 1000
    assert have == opa_have[: start + TEXT_LIMIT] + CUT_MARK + ", number, ???)"
    assert got[0].split("\n")[2:] == want[0].split("\n")[2:]


def test_short_chain_messages_are_opas_whole(oracle: Any) -> None:
    """Below the limit (``a12`` prints in about 90,000 characters) the text is OPA's, whole."""
    modules = {"p.rego": error("array", 13)}
    want = opa_outcome(oracle, modules, "true")
    assert pyrego_outcome(modules, "true") == want
    assert 50_000 < len(want[1][0]) <= TEXT_LIMIT + 200


# ---------------------------------------------------------------- the type functions on graphs




def _tree_text(t: T.MaybeType) -> str:
    """A type's text by walking it as a tree (the slow way, for small types)."""
    return "".join(p if isinstance(p, str) else _tree_text(p) for p in t.pieces()) if t is not None else "???"


def _shared(depth: int, leaf: T.Type = T.NUMBER) -> T.Type:
    t: T.Type = T.ArrayType((leaf,))
    for i in range(depth):
        t = [T.ArrayType((t, t)), T.ObjectType([("x", t), ("y", t)]), T.SetType(T.new_any(t, T.ArrayType((), t)))][i % 3]
    return t


def test_type_text_is_the_tree_text() -> None:
    t = _shared(7)
    assert type_text(t) == str(t) == _tree_text(t)
    for limit in (0, 1, 5, 100, 1000):
        assert type_text(t, limit) == _tree_text(t)[:limit] + CUT_MARK
    f = T.FunctionType((T.NamedType("x", t), T.STRING), t, T.NUMBER)
    assert str(f) == "(" + _tree_text(t) + ", string, number...) => " + _tree_text(t)
    assert str(T.FunctionType((), T.NUMBER, T.STRING)) == "(string...) => number"


@bounded
def test_deep_types_print_cut_and_fast() -> None:
    t = _shared(90)
    text = type_text(t)
    assert len(text) == TEXT_LIMIT + len(CUT_MARK)
    assert text.startswith("set[any<array[object<x: array<")
    assert text.startswith(type_text(t, 5000)[:5000])


@bounded
def test_text_keys_follow_the_text() -> None:
    table: dict[tuple[Any, ...], int] = {}
    a, b, c = _shared(40), _shared(40), _shared(40, T.STRING)
    assert a is not b
    assert text_key(a, table, {}) == text_key(b, table, {})
    assert text_key(a, table, {}) != text_key(c, table, {})
    small = [_shared(d) for d in range(5)] + [_shared(d, T.STRING) for d in range(5)]
    keys = [text_key(t, table, {}) for t in small]
    texts = [str(t) for t in small]
    for i in range(len(small)):
        for j in range(len(small)):
            assert (keys[i] == keys[j]) == (texts[i] == texts[j])


@bounded
def test_equal_deep_types_compare_and_unify() -> None:
    a, b, c = _shared(200), _shared(200), _shared(200, T.STRING)
    assert T.compare(a, b) == 0 and unifies(a, b)
    assert T.compare(a, c) != 0 and T.compare(a, c) == -T.compare(c, a)
    assert not unifies(a, c)
    assert T.or_(a, b) is a
    assert not T.is_nil(a)
    nil: T.MaybeType = None
    for _ in range(200):
        nil = T.ObjectType([("x", T.ArrayType((nil, nil))), ("y", nil)])
    assert T.is_nil(nil)
