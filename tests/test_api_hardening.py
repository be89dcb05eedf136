"""The public API refuses what it must not do: paths that are not refs, input terms
that are not constants, policies that do not compile, data that clashes with rules.

On every refusal the error is a ``pyrego.RegoError`` and the engine is left as it was.
"""

from __future__ import annotations

from typing import Any

import pytest

import pyrego

AUTHZ = """package authz

default allow := false

allow if input.user == "admin"

secret := "s3cr3t"
"""


def _engine() -> pyrego.Engine:
    engine = pyrego.Engine()
    engine.add_policy("authz.rego", AUTHZ)
    engine.add_data({"a": {"b-c": 5}, "arr": ["zero"]})
    return engine


@pytest.mark.parametrize(
    "path",
    [
        'data.authz.allow with input.user as "admin"',
        "data.authz.allow == false",
        "data.authz.allow; true",
        'http.send({"method": "get", "url": "http://127.0.0.1:1"})',
        "opa.runtime()",
        "data.authz[x]",
        "input.user",
        "[data.authz.allow]",
        "",
        "data.authz.allow\nx := 1",
    ],
)
def test_eval_rule_takes_only_a_ref_path(path: str) -> None:
    engine = _engine()
    engine.set_input({"user": "guest"})
    with pytest.raises(pyrego.ArgumentError) as info:
        engine.eval_rule(path)
    assert isinstance(info.value, pyrego.RegoError)
    assert engine.eval_rule("data.authz.allow") is False


@pytest.mark.parametrize("path", [None, 5, ["data"], b"data.authz.allow"])
def test_eval_rule_path_must_be_a_string(path: Any) -> None:
    with pytest.raises(pyrego.ArgumentError, match="must be a string"):
        _engine().eval_rule(path)


@pytest.mark.parametrize(
    ("path", "want"),
    [
        ("data.authz.allow", False),
        ("authz.allow", False),
        ('data["authz"]["allow"]', False),
        ('data.a["b-c"]', 5),
        ("data.arr[0]", "zero"),
        ("data.authz.nope", pyrego.UNDEFINED),
        ("data.nope.x", pyrego.UNDEFINED),
        ("x", pyrego.UNDEFINED),
    ],
)
def test_eval_rule_paths(path: str, want: Any) -> None:
    engine = _engine()
    engine.set_input({"user": "guest"})
    assert engine.eval_rule(path) == want


def test_set_input_term_takes_only_constants() -> None:
    engine = _engine()
    engine.set_input_term('{"user": "admin", "groups": {"a", "b"}, "n": [1, -2.5, null]}')
    assert engine.eval_rule("data.authz.allow") is True
    assert engine.eval_query("x := input.groups")["result"][0]["bindings"]["x"] == ["a", "b"]
    for text in ["data.authz.secret", '{"user": data.authz.secret}', "[x | x := 1]", "http.send({})", "1 + 2", "input", "x"]:
        with pytest.raises(pyrego.ArgumentError, match="constant"):
            engine.set_input_term(text)
    assert engine.eval_rule("data.authz.allow") is True  # the input set before is kept


def test_set_eval_timeout_takes_a_positive_number() -> None:
    engine = _engine()
    for bad in ["1", 0, -1, float("nan"), True, [1]]:
        with pytest.raises(pyrego.ArgumentError):
            engine.set_eval_timeout(bad)  # type: ignore[arg-type]
    engine.set_eval_timeout(0.5)
    engine.set_eval_timeout(None)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("package bad\np if { x > 1 }", "rego_unsafe_var_error"),
        ("package bad\np := undefined_fn(1)", "rego_type_error"),
        ("package bad\np if q\nq if p", "rego_recursion_error"),
        ("package bad\np := 1\np contains 2", "rego_type_error"),
        ("package bad\np := {", "rego_parse_error"),
    ],
)
def test_a_policy_that_does_not_compile_is_refused_and_nothing_changes(text: str, code: str) -> None:
    engine = _engine()
    engine.set_input({"user": "admin"})
    assert engine.eval_rule("data.authz.allow") is True
    if code == "rego_parse_error":
        # A parse error concerns the module alone: add_policy refuses it.
        with pytest.raises(pyrego.RegoError) as info:
            engine.add_policy("bad.rego", text)
        assert engine.get_packages() == ["data.authz"]
    else:
        # An error of the program as a whole: raised by compile() and every
        # evaluation until the module goes; then the engine answers as before.
        engine.add_policy("bad.rego", text)
        with pytest.raises(pyrego.RegoError) as again:
            engine.eval_rule("data.authz.allow")
        with pytest.raises(pyrego.RegoError) as info:
            engine.compile()
        assert again.value.code == code
        engine.remove_policy("bad.rego")
    assert info.value.code == code
    assert info.value.location is not None and info.value.location.file == "bad.rego"
    assert engine.get_packages() == ["data.authz"]
    assert engine.eval_rule("data.authz.allow") is True
    assert engine.eval_query("x := data.authz.secret")["result"][0]["bindings"]["x"] == "s3cr3t"


def test_replacing_a_policy_with_a_broken_one_and_back() -> None:
    engine = _engine()
    engine.add_policy("authz.rego", "package authz\nallow if { y }")
    with pytest.raises(pyrego.RegoError) as info:
        engine.eval_rule("data.authz.allow")
    assert info.value.code == "rego_unsafe_var_error"
    engine.add_policy("authz.rego", AUTHZ)
    assert engine.get_policies()[0]["text"] == AUTHZ
    engine.set_input({"user": "admin"})
    assert engine.eval_rule("data.authz.allow") is True


def test_modules_that_need_each_other_load_in_either_order() -> None:
    caller = "package app\nr := data.lib.double(2)"
    lib = "package lib\ndouble(x) := 2 * x"
    engine = pyrego.Engine()
    engine.add_policy("app.rego", caller)
    with pytest.raises(pyrego.RegoTypeError, match="undefined function data.lib.double"):
        engine.eval_rule("data.app.r")
    engine.add_policy("lib.rego", lib)
    assert engine.eval_rule("data.app.r") == 4
    assert engine.add_policies({"app.rego": caller, "lib.rego": lib}) == ["data.app", "data.lib"]
    assert engine.eval_rule("data.app.r") == 4
    other = pyrego.Engine()
    other.add_policy("lib.rego", lib)
    other.add_policy("app.rego", caller)
    assert other.eval_rule("data.app.r") == 4


@pytest.mark.parametrize(
    ("policy", "data"),
    [
        ('package p\nk := "bar"', {"p": {"k": "foo"}}),
        ('package p\nk.a := "bar"', {"p": {"k": {"a": 1}}}),
        ("package p\nk contains 1", {"p": {"k": {"a": 1}}}),
        ("package p.k\nx := 1", {"p": {"k": 5}}),
        ("package p\nk := 1", {"p": 5}),
        ("package p\ndefault k := 1", {"p": {"k": None}}),
    ],
)
def test_rules_where_base_data_is_are_refused_either_way(policy: str, data: dict[str, Any]) -> None:
    # OPA: rego_compile_error "conflicting rule for data path p/k found".
    engine = pyrego.Engine()
    engine.add_policy("p.rego", policy)
    before = engine.eval_query("x := data")
    engine.add_data(data)  # the conflict is the program's: found when it is next used
    with pytest.raises(pyrego.RegoCompileError, match="conflicting rule for data path p/k"):
        engine.eval_query("x := data")
    engine.clear_data()
    assert engine.eval_query("x := data") == before
    other = pyrego.Engine()
    other.add_data(data)
    other.add_policy("p.rego", policy)
    with pytest.raises(pyrego.RegoCompileError, match="conflicting rule for data path p/k"):
        other.compile()
    assert other.remove_policy("p.rego") == "data." + policy.split()[1] and other.get_packages() == []
    other.compile()


def test_base_data_beside_rules_is_fine() -> None:
    engine = pyrego.Engine()
    engine.add_policy("p.rego", 'package p\nk := "bar"\nm.a := 1')
    engine.add_data({"p": {"j": "foo", "m": {"b": 2}}})
    assert engine.eval_rule("data.p") == {"j": "foo", "k": "bar", "m": {"a": 1, "b": 2}}


def test_add_policy_arguments_must_be_strings() -> None:
    engine = pyrego.Engine()
    with pytest.raises(pyrego.ArgumentError):
        engine.add_policy("p.rego", None)  # type: ignore[arg-type]
    with pytest.raises(pyrego.ArgumentError):
        engine.add_policies({"p.rego": 5})  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "name", ["if", "some", "not", "with", "else", "every", "in", "contains", "true", "null", "default", "_", "data", "input", "ñame", "a..b", "", "x y", "1x", "count"]
)
def test_extension_names_that_cannot_be_called_are_refused(name: str) -> None:
    engine = pyrego.Engine()
    with pytest.raises(pyrego.ArgumentError):
        engine.add_extension(name, 1, lambda x: x)


def test_extension_names_policies_can_call() -> None:
    engine = pyrego.Engine()
    engine.add_extension("ok_1", 1, lambda x: x + 1)
    engine.add_extension("my.ext.if", 1, lambda x: x * 2)  # only the first part is a keyword to avoid
    engine.add_policy("p.rego", "package p\nr := [ok_1(1), my.ext.if(2)]")
    assert engine.eval_rule("data.p.r") == [2, 4]
    for bad_arity in (-1, True, 1.0):
        with pytest.raises(pyrego.ArgumentError):
            engine.add_extension("other", bad_arity, lambda x: x)  # type: ignore[arg-type]


def test_json_input_keeps_numbers_no_float_holds_and_replaces_lone_surrogates() -> None:
    # As OPA reads JSON: 1e400 stays 1e400 (not infinity), 30 digits stay exact,
    # and an unpaired surrogate escape becomes U+FFFD.
    engine = pyrego.Engine()
    engine.set_input_json(
        '{"a": 1e400, "c": 1e-400, "d": 123456789012345678901234567890.5, "f": 2.5,'
        ' "s": "\\ud800x", "t": "\\udc00", "u": "\\ud83d\\ude00", "\\ud800k": [" \\udfff"]}'
    )
    got = engine.eval_query("x := [input.a > 10, input.d == 123456789012345678901234567890.5, input.d == 123456789012345678901234567890, count(input.s)]")
    assert got["result"][0]["bindings"]["x"] == [True, True, False, 2]
    text = engine.eval_query_json("x := input")
    assert '"a":1' + "0" * 400 in text and '"c":1e-400' in text
    doc = engine.eval_query("x := input")["result"][0]["bindings"]["x"]
    assert (doc["s"], doc["t"], doc["u"], doc["\ufffdk"]) == ("\ufffdx", "\ufffd", "\U0001f600", [" \ufffd"])
