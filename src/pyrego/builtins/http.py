"""``http.send``: a real HTTP(S) client with OPA's request options, caching and errors.

A request's timeout covers the whole exchange (connecting, the headers and
the body), as Go's ``Client.Timeout`` does, and is cut to the time left
before the evaluation's deadline: a request stopped by that deadline ends
the evaluation with ``eval_cancel_error`` (whatever ``raise_error`` says),
and is not cached. YAML bodies are read with the alias limit of
:mod:`pyrego.yaml_safe`.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import ssl
import tempfile
import threading
import time
from decimal import Decimal
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from pyrego.builtins._goutil import go_quote
from pyrego.builtins.encoding_url import URL, parse_url
from pyrego.builtins.jwk import go_json_marshal, pem_blocks
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import BuiltinCancel, BuiltinError, OperandTypeError
from pyrego.runtime.convert import reject_json_constant
from pyrego.runtime.numbers import parse_number
from pyrego.runtime.values import freeze, sorted_values, thaw

ALLOWED_KEYS = (
    "method",
    "url",
    "body",
    "enable_redirect",
    "force_json_decode",
    "force_yaml_decode",
    "headers",
    "raw_body",
    "tls_use_system_certs",
    "tls_ca_cert",
    "tls_ca_cert_file",
    "tls_ca_cert_env_variable",
    "tls_client_cert",
    "tls_client_cert_file",
    "tls_client_cert_env_variable",
    "tls_client_key",
    "tls_client_key_file",
    "tls_client_key_env_variable",
    "tls_insecure_skip_verify",
    "tls_server_name",
    "timeout",
    "cache",
    "force_cache",
    "force_cache_duration_seconds",
    "raise_error",
    "caching_mode",
    "max_retry_attempts",
    "cache_ignored_headers",
)
_ALLOWED = frozenset(ALLOWED_KEYS)
_STRING_KEYS = frozenset(
    [
        "method",
        "url",
        "raw_body",
        "tls_ca_cert",
        "tls_ca_cert_file",
        "tls_ca_cert_env_variable",
        "tls_client_cert",
        "tls_client_cert_file",
        "tls_client_cert_env_variable",
        "tls_client_key",
        "tls_client_key_file",
        "tls_client_key_env_variable",
        "tls_server_name",
    ]
)
_CACHEABLE = frozenset([200, 203, 204, 206, 300, 301, 404, 405, 410, 414, 501])
DEFAULT_TIMEOUT_S = 5.0
USER_AGENT = "Open Policy Agent/1.20.2 (linux, amd64)"
NETWORK_ERR = "eval_http_send_network_error"
INTERNAL_ERR = "eval_http_send_internal_error"


class NetworkError(Exception):
    """Go's ``*url.Error``: a failure while talking to the server."""

    def __init__(self, method: str, url: str, detail: str, *, timeout: bool = False) -> None:
        op = method[:1].upper() + method[1:].lower()
        super().__init__(f"{op} {go_quote(url)}: {detail}")
        self.op = op
        self.url = url
        self.timeout = timeout


def set_text(names: list[str]) -> str:
    """OPA's rendering of a set of strings: ``{"a", "b"}``."""
    return "{" + ", ".join(json.dumps(n) for n in sorted(names)) + "}"


def validate_request(req: Any, pos: int) -> dict[Any, Any]:
    """OPA's validateHTTPRequestOperand: known keys only, method and url required."""
    if type(req) is not dict:
        raise operand_error(pos, req, "object")
    keys = [thaw(k) for k in req]
    invalid = [k if type(k) is str else go_json_marshal(k) for k in keys if k not in _ALLOWED]
    if invalid:
        raise OperandTypeError(f"operand {pos} invalid request parameters(s): {set_text(invalid)}")
    missing = [k for k in ("method", "url") if k not in req]
    if missing:
        raise OperandTypeError(f"operand {pos} missing required request parameters(s): {set_text(missing)}")
    return req


def _bool_field(req: dict[Any, Any], key: str) -> bool:
    if key not in req:
        return False
    v = req[key]
    if type(v) is not bool:
        raise BuiltinError(f'invalid value for "{key}" field')
    return v


def _go_quoted(v: Any, nested: bool = False) -> str:
    """A JSON value as Go's ``%q`` prints the decoded value OPA reports: a
    string or number quoted, a boolean or null as Go's bad-verb text (null
    in a collection as ``<nil>``), an array's members and an object's
    entries (keys in order) each so."""
    if type(v) is str:
        return go_quote(v)
    if v is True or v is False:
        return f"%!q(bool={'true' if v else 'false'})"
    if v is None:
        return "<nil>" if nested else "%!q(<nil>)"
    if isinstance(v, dict):
        keys = {k if type(k) is str else go_json_marshal(thaw(k)): k for k in v}
        return "map[" + " ".join(f"{go_quote(k)}:{_go_quoted(v[keys[k]], True)}" for k in sorted(keys)) + "]"
    if isinstance(v, (set, frozenset)):
        return "[" + " ".join(_go_quoted(x, True) for x in sorted_values(v)) + "]"
    if isinstance(v, (list, tuple)):
        return "[" + " ".join(_go_quoted(x, True) for x in v) + "]"
    return go_quote(go_json_marshal(v))


def _parse_bool_text(value: Any) -> bool:
    """Go's strconv.ParseBool over the value's Rego text."""
    text = go_json_marshal(value) if type(value) is not str else json.dumps(value)
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise BuiltinError(f"strconv.ParseBool: parsing {json.dumps(text)}: invalid syntax")


_DURATION = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_timeout(value: Any) -> float:
    """A timeout in seconds from a number (ns) or a string (ns or Go duration)."""
    if type(value) is bool or value is None or type(value) not in (int, float, str):
        from pyrego.runtime.values import type_name

        raise OperandTypeError(f"operand 1 'timeout' must be one of {{string, number}} but got {type_name(value)}")
    if type(value) is not str:
        if type(value) is float and not value.is_integer() or not -(2**63) <= int(value) < 2**63:
            raise BuiltinError(f"invalid timeout number value {go_json_marshal(value)}, must be int64")
        return int(value) / 1e9
    try:
        return int(value, 10) / 1e9
    except ValueError:
        pass
    text = value
    sign = 1.0
    if text[:1] in "+-" and text:
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    pos = 0
    total = 0.0
    while pos < len(text):
        m = _DURATION.match(text, pos)
        if m is None:
            raise BuiltinError(f'invalid timeout value "{value}": time: invalid duration "{value}"')
        total += float(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if not text:
        raise BuiltinError(f'invalid timeout value "{value}": time: invalid duration "{value}"')
    return sign * total


def _canonical_header(name: str) -> str:
    """Go's http.CanonicalHeaderKey."""
    if not name or any(c in name for c in " \t\r\n:"):
        return name
    return "-".join(p[:1].upper() + p[1:].lower() for p in name.split("-"))


# ---------------------------------------------------------------- caching


class InterQueryCache:
    """Responses kept across queries for requests with ``cache`` or ``force_cache``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Any, tuple[float, Any]] = {}

    def get(self, key: Any, now: float) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if now >= entry[0]:
                del self._entries[key]
                return None
            return entry[1]

    def put(self, key: Any, value: Any, expires: float) -> None:
        with self._lock:
            if len(self._entries) > 10000:
                self._entries.clear()
            self._entries[key] = (expires, value)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


INTER_QUERY_CACHE = InterQueryCache()


def _cache_key(req: dict[Any, Any]) -> Any:
    """The request minus headers listed in ``cache_ignored_headers``, frozen."""
    key = dict(req)
    ignored = req.get("cache_ignored_headers")
    headers = req.get("headers")
    if ignored is not None and type(headers) is dict:
        names = thaw(ignored) if type(ignored) in (set, frozenset) else ignored
        if type(names) not in (list, frozenset, set):
            raise BuiltinError("json: cannot unmarshal into Go value of type []string")
        drop = {thaw(n) if type(n) is not str else n for n in names}
        key["headers"] = {k: v for k, v in headers.items() if k not in drop}
    key["cache_ignored_headers"] = None
    return freeze(key)


def _expiry(headers: dict[str, list[str]], now: float) -> float:
    cc: dict[str, str] = {}
    for part in ",".join(headers.get("cache-control", [])).split(","):
        part = part.strip()
        if not part:
            continue
        if "=" in part:
            items = part.split("=")
            if len(items) == 2:
                cc[items[0].strip()] = items[1].strip(",")
        else:
            cc[part] = ""
    if "no-store" in cc:
        return 0.0
    if "max-age" in cc:
        try:
            max_age = min(int(cc["max-age"]), 2**31 - 1)
        except ValueError:
            return 0.0
        date = headers.get("date")
        try:
            created = parsedate_to_datetime(date[0]).timestamp() if date else now
        except (TypeError, ValueError):
            return 0.0
        return created + max_age
    expires = headers.get("expires")
    if expires:
        try:
            return parsedate_to_datetime(expires[0]).timestamp()
        except (TypeError, ValueError):
            return 0.0
    return 0.0


# ---------------------------------------------------------------- the request


class _GoRequestLine(http.client.HTTPConnection):
    """Writes the request line as Go's client does: the target's bytes as
    they are (UTF-8, spaces in a query included), refusing control
    characters only (which Go's URL parser refused already)."""

    def _validate_path(self, url: str) -> None:
        if any(ord(c) < 0x20 or c == "\x7f" for c in url):
            raise http.client.InvalidURL("net/http: can't write control character in Request.URL")

    def _encode_request(self, request: str) -> bytes:
        return request.encode("utf-8", "surrogatepass")


class _HTTPSConnection(_GoRequestLine, http.client.HTTPSConnection):
    """An HTTPS connection whose TLS server name may differ from the host."""

    def __init__(self, host: str, port: int | None, *, timeout: float | None, context: ssl.SSLContext, sni: str | None):
        super().__init__(host, port, timeout=timeout, context=context)
        self._sni = sni

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout, getattr(self, "source_address", None))
        self.sock = self._context.wrap_socket(sock, server_hostname=self._sni or self.host)  # type: ignore[attr-defined]


def _env(name: str) -> str:
    return os.environ.get(name, "")


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise BuiltinError(f"open {path}: {exc.strerror.lower() if exc.strerror else exc}")


def _load_client_cert(ctx: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    if not pem_blocks(cert):
        raise BuiltinError("tls: failed to find any PEM data in certificate input")
    if not pem_blocks(key):
        raise BuiltinError("tls: failed to find any PEM data in key input")
    with tempfile.TemporaryDirectory() as tmp:
        cpath = os.path.join(tmp, "cert.pem")
        kpath = os.path.join(tmp, "key.pem")
        with open(cpath, "wb") as f:
            f.write(cert)
        with open(kpath, "wb") as f:
            f.write(key)
        try:
            ctx.load_cert_chain(cpath, kpath)
        except ssl.SSLError:
            raise BuiltinError("tls: private key does not match public key")


class _Request:
    """The parsed options of one http.send request."""

    def __init__(self, req: dict[Any, Any], allow: Any) -> None:
        self.method = "GET"
        self.url = ""
        self.body: bytes | None = None
        self.raw_body: bytes | None = None
        self.headers: dict[str, str] = {}
        self.timeout = DEFAULT_TIMEOUT_S
        self.redirect = False
        self.server_name: str | None = None
        self.allow = allow
        opts: dict[str, Any] = {}
        for k, v in req.items():
            key = thaw(k)
            if type(key) is not str:
                raise BuiltinError(f"invalid parameter {go_json_marshal(key)}")
            if key in _STRING_KEYS and type(v) is not str:
                raise BuiltinError(f'"{key}" must be a string')
            sval = v.strip('"') if type(v) is str else ""
            if key == "method":
                self.method = sval.upper()
            elif key == "url":
                self._check_host(sval)
                self.url = sval
            elif key == "enable_redirect":
                self.redirect = _parse_bool_text(v)
            elif key == "body":
                self.body = go_json_marshal(v).encode("utf-8", "surrogatepass")
            elif key == "raw_body":
                self.raw_body = sval.encode("utf-8", "surrogatepass")
            elif key in ("tls_use_system_certs", "tls_insecure_skip_verify"):
                opts[key] = _parse_bool_text(v)
            elif key == "headers":
                if type(v) is not dict:
                    raise BuiltinError("invalid type for headers key")
                for hk, hv in v.items():
                    name = thaw(hk)
                    if type(hv) is not str:
                        raise BuiltinError(f"invalid type for headers value {_go_quoted(hv)}")
                    self.headers[_canonical_header(str(name))] = hv
            elif key == "timeout":
                self.timeout = parse_timeout(v)
            elif key.startswith("tls_"):
                opts[key] = sval
        # Go's http.NewRequest parses the URL first: a malformed one fails before any connection.
        parse_url(self.url)
        self.ssl_context, tls_forced = self._tls(opts)
        if "Host" in self.headers:
            self.server_name = self.headers["Host"]
        if opts.get("tls_server_name"):
            self.server_name = opts["tls_server_name"]
        self.tls_forced = tls_forced

    def _check_host(self, url: str) -> None:
        if isinstance(self.allow, list | tuple | set | frozenset):
            host = (urlsplit(url).netloc.rsplit("@", 1)[-1]).split(":")[0]
            if host not in self.allow:
                raise BuiltinError(f"unallowed host: {host}")

    def _tls(self, opts: dict[str, Any]) -> tuple[ssl.SSLContext, bool]:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        custom = False
        cadata: list[bytes] = []
        if opts.get("tls_use_system_certs"):
            ctx.load_default_certs()
            custom = True
        if opts.get("tls_ca_cert"):
            cadata.append(opts["tls_ca_cert"].replace("\\n", "\n").encode())
        if opts.get("tls_ca_cert_file"):
            cadata.append(_read_file(opts["tls_ca_cert_file"]))
        if opts.get("tls_ca_cert_env_variable"):
            data = _env(opts["tls_ca_cert_env_variable"]).encode()
            if not pem_blocks(data):
                raise BuiltinError(
                    f'could not add CA certificates from envvar "{opts["tls_ca_cert_env_variable"]}": '
                    "could not append certificates"
                )
            cadata.append(data)
        for data in cadata:
            certs = [b for b in pem_blocks(data) if b.type == "CERTIFICATE"]
            if not certs:
                raise BuiltinError("could not append certificates")
            for b in certs:
                ctx.load_verify_locations(cadata=b.data)
            custom = True
        if not custom:
            ctx.load_default_certs()
        pairs = [
            (opts.get("tls_client_cert", "").encode(), opts.get("tls_client_key", "").encode()),
        ]
        if opts.get("tls_client_cert_file") and opts.get("tls_client_key_file"):
            pairs.append((_read_file(opts["tls_client_cert_file"]), _read_file(opts["tls_client_key_file"])))
        if opts.get("tls_client_cert_env_variable") and opts.get("tls_client_key_env_variable"):
            pairs.append(
                (
                    _env(opts["tls_client_cert_env_variable"]).encode(),
                    _env(opts["tls_client_key_env_variable"]).encode(),
                )
            )
        for cert, key in pairs:
            if cert and key:
                _load_client_cert(ctx, cert, key)
        if opts.get("tls_insecure_skip_verify"):
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx, custom

    def execute(self, deadline: float | None) -> tuple[int, str, dict[str, list[str]], bytes]:
        url = self.url
        method = self.method
        body = self.raw_body if self.raw_body is not None else (self.body or b"")
        for _ in range(11):
            status, reason, headers, data, location = self._once(method, url, body, deadline)
            if not self.redirect or status not in (301, 302, 303, 307, 308) or not location:
                return status, reason, headers, data
            url = urljoin(url, location)
            self._check_host(url)
            if status in (301, 302, 303) and method not in ("GET", "HEAD"):
                method, body = "GET", b""
        raise NetworkError(self.method, url, "stopped after 10 redirects")

    def _once(
        self, method: str, url: str, body: bytes, deadline: float | None
    ) -> tuple[int, str, dict[str, list[str]], bytes, str | None]:
        parts = urlsplit(url)
        try:
            parsed: URL | None = parse_url(url)
        except BuiltinError:  # (a redirect's location Go would not parse)
            parsed = None
        if parsed is not None:
            url = parsed.text(hide_password=True)  # (Go's errors show the URL written out again from its parts)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            if not scheme:
                raise NetworkError(method, url, f"unsupported protocol scheme {json.dumps(scheme)}")
            raise NetworkError(method, url, f"unsupported protocol scheme {json.dumps(scheme)}")
        if not parts.hostname:
            raise NetworkError(method, url, "http: no Host in request URL")
        timeout = None
        if deadline is not None:
            timeout = max(deadline - time.monotonic(), 0.001)
        try:
            port = parts.port
        except ValueError:
            raise NetworkError(method, url, f'invalid port "{parts.netloc.rsplit(":", 1)[-1]}" after host')
        conn: http.client.HTTPConnection
        if scheme == "https":
            conn = _HTTPSConnection(
                parts.hostname, port, timeout=timeout, context=self.ssl_context, sni=self.server_name
            )
        else:
            conn = _GoRequestLine(parts.hostname, port, timeout=timeout)
        if parsed is not None:
            target = parsed.request_uri()
        else:
            target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
        try:
            conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", self.headers.get("Host") or parts.netloc.rsplit("@", 1)[-1])
            sent_ua = False
            for k, v in self.headers.items():
                if k == "Host":
                    continue
                conn.putheader(k, v)
                sent_ua = sent_ua or k == "User-Agent"
            if not sent_ua:
                conn.putheader("User-Agent", USER_AGENT if self.headers else "Go-http-client/1.1")
            if body or method in ("POST", "PUT", "PATCH"):
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body or None)
            resp = conn.getresponse()
            data = _read_body(conn, resp, deadline, method, url)
            headers: dict[str, list[str]] = {}
            for name, value in resp.getheaders():
                lname = name.lower()
                if lname == "transfer-encoding":
                    continue
                headers.setdefault(lname, []).append(value)
            return resp.status, resp.reason, headers, data, resp.getheader("Location")
        except TimeoutError:
            raise NetworkError(
                method, url, "context deadline exceeded (Client.Timeout exceeded while awaiting headers)", timeout=True
            )
        except ConnectionRefusedError:
            dialed = _dialed_address(parts.hostname, port or _default_port(scheme))
            raise NetworkError(method, url, f"dial tcp {dialed}: connect: connection refused")
        except ssl.SSLCertVerificationError as exc:
            reason = exc.verify_message or str(exc)
            if "self-signed" in reason or "unable to get local issuer" in reason:
                reason = "x509: certificate signed by unknown authority"
            elif "Hostname mismatch" in reason or "IP address mismatch" in reason:
                reason = f"x509: certificate is valid for other names, not {self.server_name or parts.hostname}"
            raise NetworkError(method, url, f"tls: failed to verify certificate: {reason}")
        except ssl.SSLError as exc:
            if getattr(exc, "reason", None) != "WRONG_VERSION_NUMBER":
                raise NetworkError(method, url, str(exc))
            # (a server answering in plain HTTP)
            raise NetworkError(method, url, "tls: first record does not look like a TLS handshake")
        except socket.gaierror:
            raise NetworkError(method, url, f"dial tcp: lookup {parts.hostname}: no such host")
        except (OSError, http.client.HTTPException) as exc:
            raise NetworkError(method, url, str(exc) or type(exc).__name__)
        finally:
            conn.close()


def _default_port(scheme: str) -> int:
    return 443 if scheme == "https" else 80


def _dialed_address(host: str, port: int) -> str:
    """The address a refused connection went to, as Go's dial error names it:
    the first resolved IP (the one both Go and Python try first), not the host name."""
    try:
        family, _, _, _, sockaddr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, IndexError):
        return f"{host}:{port}"
    ip = str(sockaddr[0])
    return f"[{ip}]:{port}" if family == socket.AF_INET6 else f"{ip}:{port}"


def _is_json(headers: dict[str, list[str]]) -> bool:
    ctype = headers.get("content-type", [""])[0]
    media = ctype.split(";", 1)[0].strip().lower()
    if not media or "/" not in media:
        return False
    major, _, minor = media.partition("/")
    return major == "application" and (minor == "json" or minor.endswith("+json"))


def _read_body(
    conn: http.client.HTTPConnection, resp: http.client.HTTPResponse, deadline: float | None, method: str, url: str
) -> bytes:
    """The response body, read before ``deadline`` (a socket timeout alone
    restarts with every chunk a slow server sends)."""
    if deadline is None:
        return resp.read()
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise NetworkError(
                method,
                url,
                "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
                timeout=True,
            )
        if conn.sock is not None:
            conn.sock.settimeout(left)
        try:
            chunk = resp.read1(1 << 16)
        except TimeoutError:
            raise NetworkError(
                method,
                url,
                "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
                timeout=True,
            ) from None
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _decode_body(data: bytes, as_json: bool, as_yaml: bool) -> Any:
    text = data.decode("utf-8", "replace")
    if as_json:
        return _first_json_value(text)
    if as_yaml:
        try:
            from pyrego.yaml_safe import load

            return _yaml_value(load(text))
        except Exception:
            return None
    return None


_JSON_DECODER = json.JSONDecoder(parse_float=parse_number, parse_constant=reject_json_constant)


def _first_json_value(text: str) -> Any:
    """The body's first JSON value, as Go's ``json.Decoder`` reads it: what
    follows the value is not looked at (``{"a": 1} x`` is ``{"a": 1}``),
    except that a number must not go on as a malformed one (``1.``, ``1e``);
    None where there is no valid first value."""
    start = len(text) - len(text.lstrip(" \t\r\n"))
    try:
        value, end = _JSON_DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    if type(value) is not bool and isinstance(value, int | float | Decimal):
        number, after = text[start:end], text[end : end + 1]
        if after == "." and not any(c in number for c in ".eE"):
            return None
        if after in ("e", "E") and not any(c in number for c in "eE"):
            return None
    return value


def _yaml_value(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k) if not isinstance(k, str) else k: _yaml_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_yaml_value(x) for x in v]
    if isinstance(v, bool | int | str) or v is None:
        return v
    if isinstance(v, float):
        return parse_number(repr(v)) if v == v and v not in (float("inf"), float("-inf")) else str(v)
    return str(v)


def _response(
    status: int, reason: str, headers: dict[str, list[str]], data: bytes, force_json: bool, force_yaml: bool
) -> dict[str, Any]:
    as_json = force_json or _is_json(headers)
    ctype = headers.get("content-type", [""])[0]
    as_yaml = not as_json and (force_yaml or "application/yaml" in ctype or "application/x-yaml" in ctype)
    return {
        "status": f"{status} {reason}".rstrip() if reason else str(status),
        "status_code": status,
        "body": _decode_body(data, as_json, as_yaml),
        "raw_body": data.decode("utf-8", "replace"),
        "headers": {k: list(v) for k, v in headers.items()},
    }


def _error_result(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, NetworkError):
        return {"status_code": 0, "error": {"code": NETWORK_ERR, "message": str(exc)}}
    # OPA wraps other failures as topdown errors, whose text carries their code and the builtin name.
    code = exc.code if isinstance(exc, BuiltinError) else "eval_builtin_error"
    return {"status_code": 0, "error": {"code": INTERNAL_ERR, "message": f"{code}: http.send: {exc}"}}


def _raise(exc: Exception) -> Any:
    if isinstance(exc, NetworkError) and exc.timeout:
        raise BuiltinError(f"{exc.op} {exc.url}: request timed out")
    if isinstance(exc, BuiltinError):
        raise exc
    raise BuiltinError(str(exc))


def _retries(req: dict[Any, Any]) -> int:
    v = req.get("max_retry_attempts")
    if v is None:
        return 0
    if type(v) is bool or type(v) not in (int, float) or (type(v) is float and not v.is_integer()) or v < 0:
        raise BuiltinError(f'invalid value {go_json_marshal(v)} for field "max_retry_attempts"')
    return int(v)


def _force_cache_seconds(req: dict[Any, Any]) -> int | None:
    if not _bool_field(req, "force_cache"):
        return None
    if "force_cache_duration_seconds" not in req:
        raise BuiltinError("'force_cache' set but 'force_cache_duration_seconds' parameter is missing")
    v = req["force_cache_duration_seconds"]
    text = go_json_marshal(v)
    try:
        n = int(text, 10)
    except ValueError:
        raise BuiltinError(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    if not -(2**31) <= n < 2**31:
        raise BuiltinError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return n


def _send(ctx: Any, req: dict[Any, Any]) -> dict[str, Any]:
    allow = ctx.options.get("allow_net", True) if ctx is not None else True
    if allow is False:
        raise BuiltinError("network access is disabled")
    key = _cache_key(req)
    cache = ctx.cache_for("http.send") if ctx is not None else {}
    hit = cache.get(key)
    if hit is not None:
        kind, value = hit
        if kind == "err":
            raise value
        return value  # type: ignore[no-any-return]
    force_json = _bool_field(req, "force_json_decode")
    force_yaml = _bool_field(req, "force_yaml_decode")
    use_cache = _bool_field(req, "cache")
    force_seconds = _force_cache_seconds(req)
    inter = use_cache or force_seconds is not None
    now = ctx.now_ns / 1e9 if ctx is not None else time.time()
    if inter:
        stored = INTER_QUERY_CACHE.get(key, now)
        if stored is not None:
            s_status, s_reason, s_headers, s_data = stored
            result = _response(s_status, s_reason, s_headers, s_data, force_json, force_yaml)
            cache[key] = ("ok", result)
            return result
    eval_deadline = ctx.deadline if ctx is not None else None
    try:
        request = _Request(req, allow)
        retries = _retries(req)
        attempt = 0
        while True:
            deadline = time.monotonic() + request.timeout if request.timeout > 0 else None
            cut = eval_deadline is not None and (deadline is None or eval_deadline <= deadline)
            if cut:
                deadline = eval_deadline
                if time.monotonic() >= eval_deadline:  # type: ignore[operator]
                    raise BuiltinCancel(f"{request.method} {request.url}: evaluation timed out")
            try:
                status, reason, headers, data = request.execute(deadline)
                break
            except NetworkError as exc:
                if cut and (exc.timeout or time.monotonic() >= eval_deadline):  # type: ignore[operator]
                    raise BuiltinCancel(f"{request.method} {request.url}: evaluation timed out") from None
                if attempt >= retries:
                    raise
                pause = min(0.1 * (1.6**attempt), 60.0)
                if eval_deadline is not None and time.monotonic() + pause >= eval_deadline:
                    raise BuiltinCancel(f"{request.method} {request.url}: evaluation timed out") from None
                time.sleep(pause)
                attempt += 1
    except (NetworkError, BuiltinError) as exc:
        cache[key] = ("err", exc)
        raise
    result = _response(status, reason, headers, data, force_json, force_yaml)
    if status in _CACHEABLE or inter:
        cache[key] = ("ok", result)
    if inter and status in _CACHEABLE:
        expires = now + force_seconds if force_seconds is not None and force_seconds > 0 else _expiry(headers, now)
        if expires > now:
            INTER_QUERY_CACHE.put(key, (status, reason, headers, data), expires)
    return result


@builtin("http.send", 1, needs_context=True)
def http_send(ctx: Any, request: Any) -> Any:
    if type(request) is not dict:
        raise operand_error(1, request, "object")
    raise_error = True
    if "raise_error" in request:
        if type(request["raise_error"]) is not bool:
            raise BuiltinError("invalid value for raise_error field")
        raise_error = request["raise_error"]
    try:
        req = validate_request(request, 1)
        return _send(ctx, req)
    except (NetworkError, BuiltinError) as exc:
        if raise_error:
            return _raise(exc)
        return _error_result(exc)
