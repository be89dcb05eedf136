"""``providers.aws.sign_req``: AWS Signature Version 4 signing of an http.send request."""

from __future__ import annotations

import datetime
import hashlib
import hmac
from typing import Any
from urllib.parse import quote, urlsplit

from pyrego.builtins.http import set_text, validate_request
from pyrego.builtins.jwk import go_json_marshal
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import OperandTypeError
from pyrego.runtime.values import thaw

_REQUIRED = ("aws_access_key", "aws_secret_access_key", "aws_region", "aws_service")
# Headers that proxies may change; never signed (as in the AWS SDK and OPA).
_IGNORED = frozenset(["authorization", "user-agent", "x-amzn-trace-id"])
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


def _s(value: Any) -> str:
    return value if type(value) is str else ""


def _escaped_path(url: str) -> str:
    """Go's URL.EscapedPath (RFC 3986 path escaping of the decoded path)."""
    path = urlsplit(url).path
    from urllib.parse import unquote

    return quote(unquote(path), safe="/!$&'()*+,;=:@-._~")


def _mac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


def sign_v4(
    headers: dict[str, str],
    method: str,
    url: str,
    body: bytes,
    service: str,
    creds: dict[str, str],
    when: datetime.datetime,
    disable_payload_signing: bool,
) -> tuple[str, dict[str, str]]:
    """The Authorization header and the AWS headers for a request."""
    content_sha = UNSIGNED_PAYLOAD if disable_payload_signing else hashlib.sha256(body).hexdigest()
    date = when.strftime("%Y%m%d")
    stamp = when.strftime("%Y%m%dT%H%M%SZ")
    parts = urlsplit(url)
    aws_headers = {"host": parts.netloc, "x-amz-date": stamp}
    if service in ("s3", "glacier"):
        aws_headers["x-amz-content-sha256"] = content_sha
    if creds["session_token"]:
        aws_headers["x-amz-security-token"] = creds["session_token"]
    to_sign = dict(aws_headers)
    for k, v in headers.items():
        lower = k.lower()
        if lower not in _IGNORED:
            to_sign[lower] = v
    ordered = sorted(to_sign, key=lambda s: s.encode("utf-8", "surrogatepass"))
    canonical = method + "\n" + _escaped_path(url) + "\n" + parts.query + "\n"
    for k in ordered:
        canonical += k + ":" + to_sign[k] + "\n"
    canonical += "\n"
    signed = ";".join(ordered)
    canonical += signed + "\n" + content_sha
    scope = f"{date}/{creds['region']}/{service}/aws4_request"
    to_sign_text = (
        "AWS4-HMAC-SHA256\n"
        + stamp
        + "\n"
        + scope
        + "\n"
        + hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()
    )
    key = _mac(("AWS4" + creds["secret_key"]).encode("utf-8", "surrogatepass"), date)
    key = _mac(key, creds["region"])
    key = _mac(key, service)
    key = _mac(key, "aws4_request")
    signature = hmac.new(key, to_sign_text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
    auth = f"AWS4-HMAC-SHA256 Credential={creds['access_key']}/{scope},SignedHeaders={signed},Signature={signature}"
    return auth, aws_headers


@builtin("providers.aws.sign_req", 3)
def aws_sign_req(request: Any, config: Any, time_ns: Any) -> dict[Any, Any]:
    if type(request) is not dict:
        raise operand_error(1, request, "object")
    if type(config) is not dict:
        raise operand_error(1, config, "object")
    missing = [k for k in _REQUIRED if k not in config]
    if missing:
        raise OperandTypeError(f"operand 2 missing required AWS config parameters(s): {set_text(missing)}")
    invalid = [k for k in _REQUIRED if type(config[k]) is not str]
    if invalid:
        raise OperandTypeError(f"operand 2 invalid values for required AWS config parameters(s): {set_text(invalid)}")
    service = config["aws_service"]
    creds = {
        "access_key": _s(config["aws_access_key"]),
        "secret_key": _s(config["aws_secret_access_key"]),
        "region": _s(config["aws_region"]),
        "session_token": _s(config.get("aws_session_token")),
    }
    if type(time_ns) is bool or type(time_ns) not in (int, float):
        raise operand_error(1, time_ns, "number")
    if type(time_ns) is float and not time_ns.is_integer() or not -(2**63) <= int(time_ns) < 2**63:
        raise OperandTypeError("operand 3 could not convert time_ns value into a unix timestamp")
    ns = int(time_ns)
    when = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=ns // 1000)
    validate_request(request, 1)
    headers_value = request.get("headers", {})
    if type(headers_value) is not dict:
        raise operand_error(0, headers_value, "object")
    bad = [k for k in ("url", "method") if type(request[k]) is not str]
    if bad:
        raise OperandTypeError(f"operand 1 invalid values for required request parameters(s): {set_text(bad)}")
    if "raw_body" in request:
        body = _s(request["raw_body"]).encode("utf-8", "surrogatepass")
    elif "body" in request:
        body = go_json_marshal(request["body"]).encode("utf-8", "surrogatepass")
    else:
        body = b""
    headers = {_s(thaw(k)): _s(v) for k, v in headers_value.items()}
    disable = False
    if "disable_payload_signing" in config:
        if type(config["disable_payload_signing"]) is not bool:
            raise OperandTypeError("operand 2 invalid value for 'disable_payload_signing' in AWS config")
        disable = config["disable_payload_signing"]
    auth, aws_headers = sign_v4(headers, request["method"], request["url"], body, service, creds, when, disable)
    signed: dict[Any, Any] = dict(headers)
    signed["Authorization"] = auth
    signed.update(aws_headers)
    out = dict(request)
    out["headers"] = signed
    return out
