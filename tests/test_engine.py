"""Engine API and core semantics (DESIGN.md §2)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import pyrego
from pyrego import UNDEFINED


def make(policy: str, *, data: object = None, input: object = UNDEFINED, v0: bool = False) -> pyrego.Engine:
    e = pyrego.Engine()
    if v0:
        e.set_rego_v0(True)
    e.add_policy("test.rego", policy)
    if data is not None:
        e.add_data(data)
    if input is not UNDEFINED:
        e.set_input(input)
    e.compile()  # errors of the whole program now, for the tests that expect them
    return e


def test_add_policy_returns_package() -> None:
    e = pyrego.Engine()
    assert e.add_policy("a.rego", "package a.b\np := 1") == "data.a.b"
    assert e.get_packages() == ["data.a.b"]
    assert e.get_policies() == [{"path": "a.rego", "text": "package a.b\np := 1"}]


def test_undefined_is_not_false_or_null() -> None:
    e = make("package t\nallow if input.x == 1\n")
    e.set_input({"x": 2})
    assert e.eval_rule("data.t.allow") is UNDEFINED
    assert not UNDEFINED
    assert UNDEFINED is not None
    e.set_input({"x": 1})
    assert e.eval_rule("data.t.allow") is True


def test_default_rule() -> None:
    e = make("package t\ndefault allow := false\nallow if input.ok\n", input={})
    assert e.eval_rule("data.t.allow") is False
    e.set_input({"ok": True})
    assert e.eval_rule("data.t.allow") is True


def test_booleans_are_not_numbers() -> None:
    policy = """package t
a if true == 1
b := count({1, true})
c if 1 in [true]
d := {true: "t", 1: "one"}
e if [1] == [true]
"""
    # OPA's type checker refuses the comparisons of a boolean with a number...
    with pytest.raises(pyrego.RegoTypeError, match="match error"):
        make(policy)
    # ...which still evaluate as OPA evaluates them with the check off.
    e = pyrego.Engine()
    e.set_type_check(False)
    e.add_policy("test.rego", policy)
    assert e.eval_rule("data.t.a") is UNDEFINED
    assert e.eval_rule("data.t.b") == 2
    assert e.eval_rule("data.t.c") is UNDEFINED
    assert e.eval_rule("data.t.e") is UNDEFINED
    out = json.loads(e.eval_query_json("data.t.d"))
    assert out["result"][0]["expressions"][0]["value"] == {"1": "one", "true": "t"}


def test_numbers() -> None:
    e = make(
        """package t
a if 1 == 1.0
b := 0.1 + 0.2
c if 0.1 + 0.2 == 0.3
d := 12345678901234567890 * 98765432109876543210
f := 7 / 2
g := 6 / 2
"""
    )
    assert e.eval_rule("data.t.a") is True
    assert e.eval_rule("data.t.b") == 0.3
    assert e.eval_rule("data.t.c") is True
    assert e.eval_rule("data.t.d") == 12345678901234567890 * 98765432109876543210
    assert e.eval_rule("data.t.f") == 3.5
    assert e.eval_rule("data.t.g") == 3


def test_decimal_literals_are_exact() -> None:
    from decimal import Decimal

    e = make(
        """package t
tiny if 1e-400 > 0
tiny_neg if -1e-400 < 0
digits if 0.1234567890123456789 > 0.1234567890123456788
same if 0.12345678901234567890 == 0.1234567890123456789
lit := 0.12345678901234567891
sum_int := 0.1234567890123456789 + 1
diff_int := 2 - 0.1234567890123456789
prod_int := 0.1234567890123456789 * 10
cancel := 0.1234567890123456789 - 0.1234567890123456789
sorted := sort([0.1234567890123456789, 1e-400, 0, 0.1234567890123456788])
total := sum([0.1234567890123456789, 1])
third := 1 / 3
"""
    )
    assert e.eval_rule("data.t.tiny") is True
    assert e.eval_rule("data.t.tiny_neg") is True
    assert e.eval_rule("data.t.digits") is True
    assert e.eval_rule("data.t.same") is True
    assert e.eval_rule("data.t.lit") == Decimal("0.12345678901234567891")
    assert e.eval_rule("data.t.sum_int") == Decimal("1.1234567890123456789")
    assert e.eval_rule("data.t.diff_int") == Decimal("1.8765432109876543211")
    assert e.eval_rule("data.t.prod_int") == Decimal("1.234567890123456789")
    assert e.eval_rule("data.t.cancel") == 0 and type(e.eval_rule("data.t.cancel")) is int
    assert e.eval_rule("data.t.total") == Decimal("1.1234567890123456789")
    assert e.eval_rule("data.t.third") == Decimal("0.33333333333333333334")  # as in OPA
    text = e.eval_query_json("x := [data.t.lit, data.t.sorted, data.t.sum_int]")
    assert '"x":[0.12345678901234567891,[0,1e-400,0.1234567890123456788,0.1234567890123456789],1.1234567890123456789]' in text


def test_sets_of_composites_and_order() -> None:
    e = make(
        """package t
s := {[1, 2], {"a": 1}, {3}, "x", null, false, 2}
sorted := sort(s)
"""
    )
    res = json.loads(e.eval_query_json("data.t.sorted"))["result"][0]["expressions"][0]["value"]
    assert res == [None, False, 2, "x", [1, 2], {"a": 1}, [3]]
    s = e.eval_rule("data.t.s")
    assert (1, 2) in s and "x" in s and frozenset({3}) in s


def test_partial_set_and_object() -> None:
    e = make(
        """package t
users := [{"name": "a", "role": "admin"}, {"name": "b", "role": "dev"}, {"name": "c", "role": "admin"}]
admins contains u.name if { some u in users; u.role == "admin" }
by_name[u.name] := u.role if { some u in users }
""",
    )
    assert e.eval_rule("data.t.admins") == {"a", "c"}
    assert e.eval_rule("data.t.by_name") == {"a": "admin", "b": "dev", "c": "admin"}


def test_complete_rule_conflict() -> None:
    e = make("package t\np := x if { some x in input }\n", input=[1, 2])
    with pytest.raises(pyrego.EvalConflictError) as info:
        e.eval_rule("data.t.p")
    assert info.value.code == "eval_conflict_error"
    e.set_input([1, 1])
    assert e.eval_rule("data.t.p") == 1


def test_object_key_conflict() -> None:
    e = make('package t\np[k] := v if { some k, v in {"a": 1, "b": 2}; k = "a" }\nq[k] := 1 if { some k in ["a"] }\nq[k] := 2 if { some k in ["a"] }\n')
    assert e.eval_rule("data.t.p") == {"a": 1}
    with pytest.raises(pyrego.EvalConflictError):
        e.eval_rule("data.t.q")


def test_function_multiple_definitions_and_else() -> None:
    e = make(
        """package t
f(x) := "neg" if x < 0
f(x) := "pos" if x > 0
f(0) := "zero"
g(x) := 1 if { x == "a" } else := 2 if { x == "b" } else := 3
r := [f(-1), f(1), f(0), g("a"), g("b"), g("c")]
"""
    )
    assert e.eval_rule("data.t.r") == ["neg", "pos", "zero", 1, 2, 3]


def test_unification_and_reordering() -> None:
    e = make(
        """package t
p := [a, b] if {
    a > 1
    [a, b] = input.pair
}
q := x if {
    x := y + 1
    y = 2
}
"""
    )
    e.set_input({"pair": [2, "z"]})
    assert e.eval_rule("data.t.p") == [2, "z"]
    assert e.eval_rule("data.t.q") == 3


def test_comprehensions_every_not() -> None:
    e = make(
        """package t
xs := [y | some x in input.nums; x > 1; y := x * 2]
s := {x | some x in input.nums}
o := {k: v | some k, v in input.obj}
all_pos if every x in input.nums { x > 0 }
no_zero if not 0 in input.nums
""",
        input={"nums": [1, 2, 3], "obj": {"a": 1}},
    )
    assert e.eval_rule("data.t.xs") == [4, 6]
    assert e.eval_rule("data.t.s") == {1, 2, 3}
    assert e.eval_rule("data.t.o") == {"a": 1}
    assert e.eval_rule("data.t.all_pos") is True
    assert e.eval_rule("data.t.no_zero") is True


def test_with_input_data_and_functions() -> None:
    e = make(
        """package t
p := input.x
q := data.base.v
r := count([1, 2, 3])
m := x if { x := p with input.x as 5 }
n := x if { x := q with data.base.v as "over" }
c := x if { x := r with count as 99 }
""",
        data={"base": {"v": "orig"}},
        input={"x": 1},
    )
    assert e.eval_rule("data.t.m") == 5
    assert e.eval_rule("data.t.p") == 1
    assert e.eval_rule("data.t.n") == "over"
    assert e.eval_rule("data.t.q") == "orig"
    assert e.eval_rule("data.t.c") == 99


def test_dynamic_refs_mix_base_and_virtual() -> None:
    e = make("package t\nv := 1\nw := 2\n", data={"t": {"base": 3}})
    e.add_policy("q.rego", "package q\nkeys := {k | data.t[k]}\n")
    assert e.eval_rule("data.q.keys") == {"v", "w", "base"}
    res = e.eval_query("data.t[k] = 2")
    assert [r["bindings"]["k"] for r in res["result"]] == ["w"]


def test_eval_query_shape() -> None:
    e = make("package t\np contains 1\np contains 2\n")
    res = e.eval_query("data.t.p[x]")
    xs = sorted(r["bindings"]["x"] for r in res["result"])
    assert xs == [1, 2]
    first = res["result"][0]["expressions"][0]
    assert first["text"] == "data.t.p[x]"
    assert first["location"] == {"row": 1, "col": 1}
    assert e.eval_query("data.t.nope") == {"result": []}


def test_print_is_captured() -> None:
    e = make('package t\np if { print("hello", input.missing, 1) }\n', input={})
    assert e.eval_rule("data.t.p") is True
    assert e.take_prints() == ["hello <undefined> 1"]


def test_engine_never_mutates_input_or_data() -> None:
    inp = {"a": [1, 2], "b": {"c": 1}}
    data = {"d": {"e": [1]}}
    before = (copy.deepcopy(inp), copy.deepcopy(data))
    e = make(
        "package t\np := x if { x := object.union(input.b, {\"z\": 1}) }\nq := x if { x := data.d with data.d.e as 5 }\nr := x if { x := input with input.b.c as 9 }\n",
        data=data,
        input=inp,
    )
    assert e.eval_rule("data.t.p") == {"c": 1, "z": 1}
    assert e.eval_rule("data.t.q") == {"e": 5}
    assert e.eval_rule("data.t.r") == {"a": [1, 2], "b": {"c": 9}}
    e.add_data({"d": {"f": 2}})
    assert (inp, data) == before


def test_add_data_conflict() -> None:
    e = pyrego.Engine()
    e.add_data({"a": {"b": 1}})
    e.add_data({"a": {"c": 2}})
    with pytest.raises(pyrego.DataError):
        e.add_data({"a": {"b": 2}})


def test_clone_shares_compiled_code() -> None:
    e = make("package t\np := input.x\n")
    e.set_input({"x": 1})
    assert e.eval_rule("data.t.p") == 1
    c = e.clone()
    c.set_input({"x": 2})
    assert c.eval_rule("data.t.p") == 2
    assert e.eval_rule("data.t.p") == 1
    assert c._get_program() is e._get_program()


def test_strict_builtin_errors() -> None:
    e = make('package t\np := x if { x := 1 / input.zero }\n', input={"zero": 0})
    assert e.eval_rule("data.t.p") is UNDEFINED
    e.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.EvalBuiltinError) as info:
        e.eval_rule("data.t.p")
    assert "divide by zero" in str(info.value)


def test_errors_carry_codes_and_locations() -> None:
    e = pyrego.Engine()
    with pytest.raises(pyrego.RegoParseError) as perr:
        e.add_policy("bad.rego", "package t\np := [1,\n")
    assert perr.value.code == "rego_parse_error"
    assert perr.value.location is not None and perr.value.location.file == "bad.rego"
    e.add_policy("unsafe.rego", "package t\np if { x > 1 }\n")
    with pytest.raises(pyrego.RegoUnsafeVarError) as uerr:
        e.compile()
    assert uerr.value.code == "rego_unsafe_var_error"
    assert uerr.value.location is not None and uerr.value.location.row == 2
    assert "var x is unsafe" in str(uerr.value)


def test_recursion_is_rejected() -> None:
    with pytest.raises(pyrego.RegoRecursionError):
        make("package t\np if q\nq if p\n")


def test_v0_mode() -> None:
    e = make("package t\nallow { input.x == 1 }\ns[x] { x := input.items[_] }\n", v0=True, input={"x": 1, "items": ["a"]})
    assert e.eval_rule("data.t.allow") is True
    assert e.eval_rule("data.t.s") == {"a"}


def test_ref_heads() -> None:
    e = make('package t\na.b[x].c := 1 if { some x in ["k"] }\na.d := 2\n')
    assert e.eval_rule("data.t.a") == {"b": {"k": {"c": 1}}, "d": 2}


def test_add_extension_custom_builtin() -> None:
    e = pyrego.Engine()
    calls: list[object] = []

    def lookup_user(name: object) -> object:
        calls.append(name)
        users = {"alice": {"roles": ["admin"]}}
        return users.get(str(name), pyrego.UNDEFINED)

    e.add_extension("corp.user", 1, lookup_user)
    e.add_extension("corp.boom", 0, lambda: 1 / 0)
    e.add_policy(
        "x.rego",
        "package x\nadmin if \"admin\" in corp.user(input.name).roles\nknown := x if { x := corp.user(input.name) }\nb := x if { x := corp.boom() }\n",
    )
    e.set_input({"name": "alice"})
    assert e.eval_rule("data.x.admin") is True
    assert e.eval_rule("data.x.known") == {"roles": ["admin"]}
    e.set_input({"name": "bob"})
    assert e.eval_rule("data.x.known") is UNDEFINED
    assert "alice" in calls and "bob" in calls
    # A failing extension is a builtin error: undefined, or raised when strict.
    assert e.eval_rule("data.x.b") is UNDEFINED
    e.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.EvalBuiltinError, match="corp.boom: ZeroDivisionError"):
        e.eval_rule("data.x.b")
    with pytest.raises(ValueError):
        e.add_extension("count", 1, len)
    with pytest.raises(pyrego.RegoTypeError):
        e.add_policy("y.rego", "package y\np := corp.user(1, 2, 3)\n")
        e.eval_rule("data.y.p")


def test_compile_cache_size_decides_reuse() -> None:
    policy = "package sized\nx := 1\n"
    try:
        pyrego.set_compile_cache_size(programs=1, modules=1)
        a, b = pyrego.Engine(), pyrego.Engine()
        for e in (a, b):
            e.add_policy("sized.rego", policy)
            assert e.eval_rule("data.sized.x") == 1
        assert a._get_program() is b._get_program()  # reused
        kept = a._get_program()
        del a, b
        again = pyrego.Engine()
        again.add_policy("sized.rego", policy)
        assert again._get_program() is kept  # kept since its second request
        pyrego.set_compile_cache_size(programs=0, modules=0)
        c = pyrego.Engine()
        c.add_policy("sized.rego", policy)
        assert c.eval_rule("data.sized.x") == 1
        assert c._get_program() is not kept  # nothing kept
        with pytest.raises(ValueError):
            pyrego.set_compile_cache_size(programs=-1)
    finally:
        pyrego.set_compile_cache_size()


def test_text_seen_once_is_freed_with_its_engine() -> None:
    import weakref

    pyrego.clear_compile_cache()
    engine = pyrego.Engine()
    engine.add_policy("once.rego", "package once\nx := 1\n")
    assert engine.eval_rule("data.once.x") == 1
    from pyrego.codegen import build_cache

    program = weakref.ref(engine._get_program())
    module = engine._policies["once.rego"][1]
    assert all(kept is not module for kept in build_cache._modules.entries.values())
    del engine
    # (no cyclic collection needed: nothing but the engine held it)
    assert program() is None
    assert not build_cache.program_cache.entries and not build_cache.program_cache._unkept
    # Seen twice (the first engine gone): the second build is kept.
    for _ in range(2):
        engine = pyrego.Engine()
        engine.add_policy("once.rego", "package once\nx := 1\n")
        engine.compile()
    assert list(build_cache.program_cache.entries.values()) == [engine._get_program()]


def test_concurrent_first_requests_share_one_build() -> None:
    import threading

    pyrego.clear_compile_cache()
    policy = "package shared_build\nx := 1\n"
    builds = 0
    barrier = threading.Barrier(8)
    engines: list[pyrego.Engine] = []
    lock = threading.Lock()

    def work() -> None:
        barrier.wait()
        e = pyrego.Engine()
        e.add_policy("shared_build.rego", policy)
        e.compile()
        with lock:
            engines.append(e)

    import pyrego.engine as engine_module

    original = engine_module.compile_program

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal builds
        with lock:
            builds += 1
        return original(*args, **kwargs)

    engine_module.compile_program = counting  # type: ignore[assignment]
    try:
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        engine_module.compile_program = original  # type: ignore[assignment]
    assert all(e.eval_rule("data.shared_build.x") == 1 for e in engines)
    # Each build either served threads waiting for it (and was kept) or was
    # the key's first, uncounted one: never more than two builds for eight.
    assert 1 <= builds <= 2
    programs = {id(e._get_program()) for e in engines}
    assert len(programs) <= 2


# The tests below run in each execution form (the conftest fixture).


@pytest.mark.parametrize("v0", [False, True], ids=["v1", "v0"])
def test_importing_input_or_data_changes_nothing(execution_form: str, v0: bool) -> None:
    policy = """package t
import input
import data.t.q as alias
p := input.x
q := 2
r := [p, alias, data.t.q]
"""
    e = make(policy, input={"x": 1}, v0=v0)
    assert e.eval_rule("data.t.r") == [1, 2, 2]
    e = make("package t\nimport input as i\nimport data as d\np := [i.x, input.x, d.t.q]\nq := 3\n", input={"x": 1}, v0=v0)
    assert e.eval_rule("data.t.p") == [1, 1, 3]
    e = make("package t\nimport data\np := data.t.q\nq := 4\n", v0=v0)
    assert e.eval_rule("data.t.p") == 4


@pytest.mark.parametrize("v0", [False, True], ids=["v1", "v0"])
@pytest.mark.parametrize("kw", ["", ".in", ".if", ".contains", ".every"])
def test_rego_v1_import_beside_future_keywords(execution_form: str, kw: str, v0: bool) -> None:
    rules = "s contains x if { some x in input.xs; every y in [x] { y > 0 } }\n"
    for imports in (f"import rego.v1\nimport future.keywords{kw}\n", f"import future.keywords{kw}\nimport rego.v1\n"):
        e = make("package t\n" + imports + rules, input={"xs": [2, 1]}, v0=v0)
        assert e.eval_rule("data.t.s") == {1, 2}


def test_functions_with_quoted_keys_in_ref_heads(execution_form: str) -> None:
    e = make(
        """package t
fruit["color.name"](f, c) := concat(".", [f, c])
fruit["x y"].z(a) := a + 1
fruit.plain(a) := a * 2
local := fruit["color.name"]("a", "b")
absolute := data.t.fruit["color.name"]("c", "d")
spaced := fruit["x y"].z(1)
bracketed := fruit["plain"](4)
as_test if fruit["color.name"]("a", "b") == "a.b"
out := v if fruit["color.name"]("e", "f", v)
in_compr := [fruit["color.name"](x, x) | some x in ["g"]]
""",
    )
    e.add_policy("u.rego", 'package u\nimport data.t.fruit\nimport data.t as tt\nv := [fruit["color.name"]("h", "i"), tt.fruit["x y"].z(2)]\n')
    assert e.eval_rule("data.t.local") == "a.b"
    assert e.eval_rule("data.t.absolute") == "c.d"
    assert e.eval_rule("data.t.spaced") == 2
    assert e.eval_rule("data.t.bracketed") == 8
    assert e.eval_rule("data.t.as_test") is True
    assert e.eval_rule("data.t.out") == "e.f"
    assert e.eval_rule("data.t.in_compr") == ["g.g"]
    assert e.eval_rule("data.u.v") == ["h.i", 3]
    res = e.eval_query('x := data.t.fruit["color.name"]("j", "k")')
    assert res["result"][0]["bindings"] == {"x": "j.k"}
    # ... and with replaces them as it does any function
    e.add_policy("w.rego", 'package w\nimport data.t.fruit\ng(x, y) := "g"\nv := x if { x := fruit["color.name"]("a", "b") with fruit["color.name"] as g }\n')
    assert e.eval_rule("data.w.v") == "g"


def test_template_string_expressions_with_modifiers(execution_form: str) -> None:
    e = make(
        """package t
hello := $"Hello {input.name with input as {"name": "world"}}!"
plain := $"Hello {input.name}!"
missing := $"{input.name with input as {}}"
several := $"{input.a with input.a as 2 with input.b as 3}{input.b with input.b as 4}{input.b}"
q := input.b
rule := $"{q with data.t.q as 5} {q}"
local := s if { y := {"name": "local"}; s := $"{input.name with input as y}" }
tested if $"{input.name with input as {"name": 1}}" == "1"
each := [s | some i in [1, 2]; s := $"{input.name with input as {"name": i}}"]
raw := $`{input.name == "w" with input.name as "w"}`
""",
        input={"name": "you", "b": 1},
    )
    assert e.eval_rule("data.t.hello") == "Hello world!"
    assert e.eval_rule("data.t.plain") == "Hello you!"
    assert e.eval_rule("data.t.missing") == "<undefined>"
    assert e.eval_rule("data.t.several") == "241"
    assert e.eval_rule("data.t.rule") == "5 1"
    assert e.eval_rule("data.t.local") == "local"
    assert e.eval_rule("data.t.tested") is True
    assert e.eval_rule("data.t.each") == ["1", "2"]
    assert e.eval_rule("data.t.raw") == "true"
    res = e.eval_query('x := $"{input.name with input as {"name": "q"}}"')
    assert res["result"][0]["bindings"] == {"x": "q"}
    e.set_strict_builtin_errors(True)
    e.add_policy("u.rego", 'package u\nbad := $"{to_number("x") with input as 1}"\n')
    with pytest.raises(pyrego.EvalBuiltinError):
        e.eval_rule("data.u.bad")


def test_template_string_with_replacing_functions(execution_form: str) -> None:
    e = make('package t\nf(x) := x + 1\ng(x) := x * 10\nr := s if { s := $"{f(1) with f as g} {f(1)}" }\n')
    assert e.eval_rule("data.t.r") == "10 2"


def test_parse_duration_long_units_in_policies(execution_form: str) -> None:
    e = make(
        """package t
d := time.parse_duration_ns(input.d)
all := [time.parse_duration_ns(x) | some x in ["1d2h", "1w", "1y", "1.5d", "-1d"]]
""",
        input={"d": "0.3d"},
    )
    assert e.eval_rule("data.t.d") == 25919999999999
    assert e.eval_rule("data.t.all") == [93600000000000, 604800000000000, 31536000000000000, 129600000000000, -86400000000000]
    e.set_input({"d": "1dd"})
    assert e.eval_rule("data.t.d") is UNDEFINED
    e.set_strict_builtin_errors(True)
    with pytest.raises(pyrego.EvalBuiltinError, match='time: invalid duration "1dd"'):
        e.eval_rule("data.t.d")
