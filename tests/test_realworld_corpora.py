"""Differences with OPA found on smaller public policy sets (a CloudFormation
hook's routing policies under ``package system``, JWT and naming libraries,
code-graph and relation helpers, admission controllers with their tests).
Each case is a minimal program written here, evaluated by OPA v1.20.2 and by
pyrego in every execution form, with strict builtin errors on and off (off:
only where OPA raised no error), comparing the value, undefined, or the
error's code and message."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from conftest import EXECUTION_FORMS, in_form
from opa_compare import HEADER
from opa_compare import agree as _agree
from opa_oracle import plain_numbers
from pyrego.conformance import canonical

_V1 = "import rego.v1\n\n"
_P = "package p\n\n" + _V1


def _opa_query(oracle: Any, modules: dict[str, str], query: str, data: Any) -> Any:
    res = oracle.evaluate(modules, query, data=data)
    if res.is_error:
        return ("error", res.error_code, HEADER.sub("", res.error_message or "").split("\n")[0])
    return ("value", canonical([plain_numbers(b) for b in res.bindings]))


def _pyrego_query(modules: dict[str, str], query: str, data: Any, strict: bool) -> Any:
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    try:
        for name, text in modules.items():
            engine.add_policy(name, text)
        if data is not None:
            engine.add_data(data)
        found = engine.eval_query(query)["result"]
    except pyrego.RegoError as exc:
        return ("error", exc.code, str(exc).split("\n")[0])
    return ("value", canonical([r["bindings"] for r in found]))


def _agree_query(oracle: Any, modules: dict[str, str], query: str, data: Any = None) -> None:
    """The query's bindings in pyrego are OPA's, in every execution form."""
    want = _opa_query(oracle, modules, query, data)
    for form in EXECUTION_FORMS:
        for strict in (True, False):
            if not strict and want[0] == "error":
                continue
            with in_form(form):
                got = _pyrego_query(modules, query, data, strict)
            assert got == want, f"{form}, strict={strict}"


def _agree_root_rule(oracle: Any, modules: dict[str, str], data: Any = None) -> None:
    """``eval_rule("data")`` (the whole root document) gives OPA's value of ``data``."""
    res = oracle.evaluate(modules, "x := data", data=data)
    assert not res.is_error
    want = canonical(plain_numbers(res.bindings[0]["x"]))
    for form in EXECUTION_FORMS:
        with in_form(form):
            engine = pyrego.Engine()
            for name, text in modules.items():
                engine.add_policy(name, text)
            if data is not None:
                engine.add_data(data)
            assert canonical(pyrego.json_ready(engine.eval_rule("data"))) == want, form


# OPA's root document ``data`` read whole leaves out the system document:
# base data under ``system`` and the rules of packages under ``system``
# (a CloudFormation hook's router, ``package system`` with ``main``, showed
# in pyrego's ``data``). A ref iterating the root's keys (``data[k]``,
# ``some k, v in data``) sees base data without ``system`` too, but the
# rule tree's child ``system`` where rules are under it (read whole: rules
# and base data); a constant or computed key ``system`` reads it all.
_SYSTEM = {
    "s.rego": "package system\n\n" + _V1 + 'main := {"allow": true}\n',
    "a.rego": "package a\n\n" + _V1 + "b := 2\n",
}
_SYSTEM_DEEPER = {
    "s.rego": "package system.main\n\n" + _V1 + "r := 1\n",
    "a.rego": "package a\n\n" + _V1 + "b := 2\n",
}
_ONLY_FUNCTIONS = {"f.rego": "package f\n\n" + _V1 + "g(x) := x\n"}
_BASE = {"system": {"z": 1}, "k": 2, "a": {"system": 5}}
_BASE_NO_A = {"system": {"z": 1}, "k": 2}

ROOT_QUERIES = [
    "x := data",
    "x := count(data)",
    "x := object.keys(data)",
    "x := {p | walk(data, [p, _]); count(p) == 1}",
    "x := {k | data[k]}",
    "x := [k | data[k]]",
    "data[k]",
    "data[k][j]",
    "x := {k | some k, _ in data}",
    "x := [k | some k, _ in data]",
    "x := {v | some v in data}",
    'x := {"z": 1} in data',
    'k := "system"; x := data[k]',
    "x := data.system",
]

ROOT_PROGRAMS = {
    "system package, base data": (_SYSTEM, _BASE),
    "system package, no base data": (_SYSTEM, None),
    "deeper system package, base data": (_SYSTEM_DEEPER, _BASE_NO_A),
    "base data only under system": ({"a.rego": _SYSTEM["a.rego"]}, _BASE_NO_A),
    "no rules, base data under system": (_ONLY_FUNCTIONS, _BASE_NO_A),
}


@pytest.mark.parametrize("query", ROOT_QUERIES)
@pytest.mark.parametrize("program", list(ROOT_PROGRAMS))
def test_root_document_without_system(oracle: Any, program: str, query: str) -> None:
    modules, data = ROOT_PROGRAMS[program]
    _agree_query(oracle, modules, query, data)


def test_root_document_iterated_below_system(oracle: Any) -> None:
    for query in ("data[k].main", "data[k].main[j]", "data[k][j].r", "x := {k: v | some k, v in data}"):
        _agree_query(oracle, _SYSTEM_DEEPER, query, _BASE_NO_A)


@pytest.mark.parametrize("program", list(ROOT_PROGRAMS))
def test_root_document_by_eval_rule(oracle: Any, program: str) -> None:
    modules, data = ROOT_PROGRAMS[program]
    _agree_root_rule(oracle, modules, data)


# A JWT library's test passes a key that is no JWK ("wrong") to
# io.jwt.verify_*: OPA's error is jwx's (jwk.ParseString, the first JSON
# value read as Go's json.Decoder reads it, a key probed into a struct).
# A key set with a member that is no object is an error, not a set without
# that member (pyrego's verify was false); io.jwt.encode_sign parses with
# jwk.Parse, whose error has no ParseString prefix.
_TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJtZSJ9.c2ln"
JWK_TEXTS = [
    "wrong",
    " wrong",
    "",
    "tru",
    "{",
    '{"a" 1}',
    "5",
    "[1]",
    '"x"',
    "true",
    "null",
    "{}",
    "{} x",
    "5 x",
    '{"keys": 5}',
    '{"keys": "x"}',
    '{"keys": {}}',
    '{"keys": null}',
    '{"keys": -1.5e3}',
    '{"keys": [5]}',
    '{"keys": [null]}',
    '{"keys": [{}, 5]}',
    '{"keys": []}',
]


# OPA's JWK library names the two fields of the struct it probes a key with
# in an order that changes from process to process (a Go map read at its
# start): either order is OPA's message; pyrego writes the kty field first.
_PROBE_D_FIRST = 'struct { D json.RawMessage "json:\\"d,omitempty\\""; Kty string "json:\\"kty\\"" }'
_PROBE_KTY_FIRST = 'struct { Kty string "json:\\"kty\\""; D json.RawMessage "json:\\"d,omitempty\\"" }'


def _probe_kty_first(message: str) -> str:
    return message.replace(_PROBE_D_FIRST, _PROBE_KTY_FIRST)


@pytest.mark.parametrize("key", JWK_TEXTS)
def test_jwk_parse_errors_as_jwx(oracle: Any, key: str) -> None:
    module = _P + "r := io.jwt.verify_es256(input.t, input.k)\n"
    _agree(oracle, module, "data.p.r", {"t": _TOKEN, "k": key}, opa_text=_probe_kty_first)


@pytest.mark.parametrize("key", ["wrong", '{"keys": [5]}', "{}"])
def test_jwk_parse_errors_of_encode_sign(oracle: Any, key: str) -> None:
    module = _P + 'r := io.jwt.encode_sign_raw(`{"alg": "ES256"}`, "{}", input.k)\n'
    _agree(oracle, module, "data.p.r", {"k": key}, opa_text=_probe_kty_first)


# Mutated tokens of the same library's tests: a JWT's header and payload are
# read as OPA's util.UnmarshalJSON reads JSON (Go's decoder, then no second
# value), with Go's quoting of the character named in the error.
JWT_PARTS = ["\x11", '{"a" \x01}', '{"alg": "x"} z', '"', "\u00e9", "[1 2]", "", '{"a": 1} 2', "5"]


@pytest.mark.parametrize("part", JWT_PARTS)
def test_jwt_json_errors_as_go(oracle: Any, part: str) -> None:
    module = _P + 'r := io.jwt.decode(concat(".", [base64url.encode_no_pad(input.h), base64url.encode_no_pad(input.p), "c2ln"]))\n'
    _agree(oracle, module, "data.p.r", {"h": part, "p": "{}"})
    _agree(oracle, module, "data.p.r", {"h": "{}", "p": part})


# Authors in METADATA (a Mendix model checker's rules print their
# annotations): OPA takes the last word of "Name <email>" as the email only
# when it is enclosed in <> ("Bashar Amin<x@ave.com>" is a name), and joins
# the other words with one space.
AUTHORS = ["Bashar Amin<x@ave.com>", "A  B <a@b>", "<a@b>", "Name", "N <a@b> x", "N <>", "  N   M  "]


@pytest.mark.parametrize("author", AUTHORS)
def test_metadata_authors_as_opa_splits_them(oracle: Any, author: str) -> None:
    module = f"# METADATA\n# title: t\n# authors:\n# - {author}\npackage p\n\n{_V1}r := rego.metadata.chain()[1].annotations\n"
    _agree(oracle, module, "data.p.r")
