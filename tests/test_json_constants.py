"""JSON has no ``NaN``, ``Infinity`` or ``-Infinity``; Python's reader takes
them. Every JSON reader in pyrego refuses them through one hook
(:func:`pyrego.runtime.convert.reject_json_constant`), each with the error it
gives any malformed text: checked here against OPA v1.20.2 for the builtins
and the engine's input and data (http.send's body is in
tests/builtins/test_http_send.py: it needs a server)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from opa_oracle import Oracle
from pyrego import Engine
from pyrego.errors import DataError, RegoError

CONSTANTS = ("NaN", "Infinity", "-Infinity")

KEY = '{"kty":"oct","k":"AAAA"}'


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _calls(constant: str) -> list[str]:
    """Builtin calls that read JSON text holding ``constant`` (alone, and as a member's value)."""
    member = '{"a": ' + constant + "}"
    q = json.dumps
    return [
        f"json.unmarshal({q(constant)})",
        f"json.unmarshal({q(member)})",
        f"json.is_valid({q(constant)})",
        f"json.is_valid({q(member)})",
        f'io.jwt.decode("{_b64(q({"alg": "HS256"}))}.{_b64(member)}.c2ln")',
        f'io.jwt.decode("{_b64(member.replace("a", "alg"))}.{_b64("{}")}.c2ln")',
        f"io.jwt.encode_sign_raw({q(q({'alg': 'HS256'}))}, {q(member)}, {q(KEY)})",
        f"json.verify_schema({q(constant)})",
        f"json.verify_schema({q(member)})",
        f"json.match_schema({q(member)}, {{}})",
        f"json.match_schema({{}}, {q(member)})",
    ]


def _ours(call: str) -> tuple[str, Any]:
    engine = Engine()
    engine.set_strict_builtin_errors(True)
    try:
        result = engine.eval_query(f"x := {call}")
    except RegoError as exc:
        return "error", str(exc).partition("eval_builtin_error: ")[2]
    return "value", result["result"][0]["bindings"]["x"]


def _theirs(oracle: Oracle, call: str) -> tuple[str, Any]:
    found = oracle.evaluate({}, f"x := {call}")
    if found.is_error:
        assert found.error_code == "eval_builtin_error", found
        return "error", (found.error_message or "").partition("eval_builtin_error: ")[2]
    return "value", found.bindings[0]["x"]


@pytest.mark.parametrize("constant", CONSTANTS)
def test_builtins_refuse_them_as_opa(oracle: Oracle, constant: str) -> None:
    for call in _calls(constant):
        ours, theirs = _ours(call), _theirs(oracle, call)
        assert ours == theirs, call
        if ours[0] == "value":  # json.is_valid, json.verify_schema: the text is not JSON
            assert ours[1] is False or ours[1] == [False, "jsonschema: invalid JSON string"], call


@pytest.mark.parametrize("constant", CONSTANTS)
def test_jwk_refuses_them_with_gos_words(oracle: Oracle, constant: str) -> None:
    # A key's JSON: OPA's JWK library words its error in its own way, its end is Go's reader's.
    key = KEY.replace('"AAAA"', constant)
    call = f"io.jwt.encode_sign_raw({json.dumps(json.dumps({'alg': 'HS256'}))}, {json.dumps('{}')}, {json.dumps(key)})"
    kind, ours = _ours(call)
    their_kind, theirs = _theirs(oracle, call)
    assert kind == their_kind == "error"
    go_words = theirs.rpartition(": ")[2]
    assert go_words.startswith("invalid character") and ours.endswith(": " + go_words), (ours, theirs)


@pytest.mark.parametrize("constant", CONSTANTS)
@pytest.mark.parametrize("kind", ["input", "data"])
def test_engine_input_and_data_refuse_them(oracle: Oracle, constant: str, kind: str) -> None:
    value = {"a": float(constant.replace("Infinity", "inf"))}  # (Python's json writes NaN for it)
    found = oracle.evaluate({}, "x := 1", **{kind: value})  # type: ignore[arg-type]
    assert found.error_code == "invalid_json", found
    engine = Engine()
    text = json.dumps(value)
    with pytest.raises(DataError) as caught:
        if kind == "input":
            engine.set_input_json(text)
        else:
            engine.add_data_json(text)
    assert caught.value.code == "rego_data_error"
    assert caught.value.message == f"malformed {kind} JSON: {found.error_message}"
