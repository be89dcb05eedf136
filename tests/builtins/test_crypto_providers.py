"""providers.aws.sign_req (AWS SigV4) and the runtime builtins (opa.runtime, trace, internal.test_case)."""

from __future__ import annotations

from typing import Any

import pytest

from pyrego.builtins.registry import OperandTypeError, lookup
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import make_set

CONFIG = {
    "aws_access_key": "MYAWSACCESSKEYGOESHERE",
    "aws_secret_access_key": "MYAWSSECRETACCESSKEYGOESHERE",
    "aws_service": "s3",
    "aws_region": "us-east-1",
}
TIME = 1451311705000000000


def sign(req: dict[str, Any], config: dict[str, Any] = CONFIG, t: Any = TIME) -> Any:
    b = lookup("providers.aws.sign_req")
    assert b is not None
    return b.fn(req, config, t)


def test_sign_no_body() -> None:
    out = sign({"method": "get", "url": "http://example.com"})
    assert out == {
        "method": "get",
        "url": "http://example.com",
        "headers": {
            "Authorization": "AWS4-HMAC-SHA256 Credential=MYAWSACCESSKEYGOESHERE/20151228/us-east-1/s3/aws4_request,"
            "SignedHeaders=host;x-amz-content-sha256;x-amz-date,"
            "Signature=0047a7016c81e5c7f29cd522f97e911e04fc472fced0aee7916cbc287ad6c8e3",
            "host": "example.com",
            "x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "x-amz-date": "20151228T140825Z",
        },
    }


def test_sign_body_set_and_session_token() -> None:
    out = sign({"method": "get", "url": "http://example.com", "body": {"example": make_set([1, 2, 3, 4])}})
    assert out["headers"]["x-amz-content-sha256"] == "bacff6243c850423883052ac3c336fd645994442933408dfd3f9e858e69bda07"
    assert out["headers"]["Authorization"].endswith("5fb06ab1cfd74c8fcb3af95b8cce696708cf6155d971dac10f254d79799c6e88")
    out = sign(
        {"method": "get", "url": "http://example.com"}, CONFIG | {"aws_session_token": "MYAWSSECURITYTOKENGOESHERE"}
    )
    assert out["headers"]["x-amz-security-token"] == "MYAWSSECURITYTOKENGOESHERE"
    assert out["headers"]["Authorization"].endswith("23c31bda8a74630c0a94f6b82a3511e7e74728df98e6f54ed0840488dbbdc8d1")


def test_unsigned_payload_and_other_services() -> None:
    out = sign(
        {"method": "get", "url": "https://example.com", "headers": {"foo": "bar"}},
        CONFIG | {"disable_payload_signing": True},
    )
    assert out["headers"]["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD"
    out = sign({"method": "POST", "url": "https://sts.amazonaws.com/a%20b?x=1"}, CONFIG | {"aws_service": "sts"})
    assert "x-amz-content-sha256" not in out["headers"]
    assert "SignedHeaders=host;x-amz-date," in out["headers"]["Authorization"]


def test_sign_errors() -> None:
    with pytest.raises(
        OperandTypeError, match=r'operand 2 missing required AWS config parameters\(s\): \{"aws_region"\}'
    ):
        sign({"method": "get", "url": "http://x"}, {k: v for k, v in CONFIG.items() if k != "aws_region"})
    with pytest.raises(
        OperandTypeError, match=r'invalid values for required AWS config parameters\(s\): \{"aws_service"\}'
    ):
        sign({"method": "get", "url": "http://x"}, CONFIG | {"aws_service": 1})
    with pytest.raises(OperandTypeError, match="could not convert time_ns value"):
        sign({"method": "get", "url": "http://x"}, CONFIG, 1.5)
    with pytest.raises(OperandTypeError, match=r"missing required request parameters\(s\)"):
        sign({"method": "get"})
    with pytest.raises(OperandTypeError, match="invalid value for 'disable_payload_signing'"):
        sign({"method": "get", "url": "http://x"}, CONFIG | {"disable_payload_signing": "yes"})


def test_runtime_trace_test_case() -> None:
    rt = lookup("opa.runtime")
    assert rt is not None and rt.nondeterministic
    # Embedded, as for OPA's library: nothing about the host unless configured.
    assert rt.fn(EvalContext()) == {}
    assert rt.fn(EvalContext(options={"runtime": {"config": {}}})) == {"config": {}}
    tr = lookup("trace")
    assert tr is not None
    ctx = EvalContext()
    assert tr.fn(ctx, "note") is True
    assert ctx.cache_for("trace")["notes"] == ["note"]
    with pytest.raises(OperandTypeError):
        tr.fn(ctx, 1)
    tc = lookup("internal.test_case")
    assert tc is not None and tc.fn({"a": 1}) is True
