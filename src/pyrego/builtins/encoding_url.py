"""urlquery.* and uri.* builtins, following Go's ``net/url`` as OPA uses it."""

from __future__ import annotations

import ipaddress
from typing import Any

from pyrego.builtins._goutil import from_bytes, go_quote, to_bytes
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import BuiltinError, OperandTypeError
from pyrego.runtime.convert import to_json_value

# Go's encoding modes of net/url.
_PATH, _PATH_SEGMENT, _HOST, _ZONE, _USER, _QUERY, _FRAGMENT = range(1, 8)

_HEXDIGITS = frozenset(b"0123456789abcdefABCDEF")
_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


class _UrlError(Exception):
    pass


def _should_escape(c: int, mode: int) -> bool:
    if c in _ALNUM:
        return False
    ch = chr(c)
    if mode in (_HOST, _ZONE) and ch in "!$&'()*+,;=:[]<>\"":
        return False
    if ch in "-_.~":
        return False
    if ch in "$&+,/:;=?@":
        if mode == _PATH:
            return ch == "?"
        if mode == _PATH_SEGMENT:
            return ch in "/;,?"
        if mode == _USER:
            return ch in "@/?:"
        if mode == _QUERY:
            return True
        if mode == _FRAGMENT:
            return False
    if mode == _FRAGMENT and ch in "!()*":
        return False
    return True


def _escape_error(s: bytes) -> _UrlError:
    return _UrlError("invalid URL escape " + go_quote(from_bytes(s)))


def _unescape(s: bytes, mode: int) -> bytes:
    """Go's ``url.unescape``: validates every %XX (and host characters)."""
    n = len(s)
    i = 0
    has_escape = False
    while i < n:
        c = s[i]
        if c == 0x25:  # %
            has_escape = True
            if i + 2 >= n or s[i + 1] not in _HEXDIGITS or s[i + 2] not in _HEXDIGITS:
                raise _escape_error(s[i : i + 3])
            if mode == _HOST and int(s[i + 1 : i + 2], 16) < 8 and s[i : i + 3] != b"%25":
                raise _escape_error(s[i : i + 3])
            if mode == _ZONE:
                v = int(s[i + 1 : i + 3], 16)
                if s[i : i + 3] != b"%25" and v != 0x20 and _should_escape(v, _HOST):
                    raise _escape_error(s[i : i + 3])
            i += 3
        else:
            if c == 0x2B:
                has_escape = has_escape or mode == _QUERY
            elif mode in (_HOST, _ZONE) and c < 0x80 and _should_escape(c, mode):
                raise _UrlError("invalid character " + go_quote(chr(c)) + " in host name")
            i += 1
    if not has_escape:
        return s
    out = bytearray()
    i = 0
    while i < n:
        c = s[i]
        if c == 0x25:
            out.append(int(s[i + 1 : i + 3], 16))
            i += 3
            continue
        out.append(0x20 if c == 0x2B and mode == _QUERY else c)
        i += 1
    return bytes(out)


def _escape(s: bytes, mode: int) -> bytes:
    out = bytearray()
    for c in s:
        if c == 0x20 and mode == _QUERY:
            out.append(0x2B)
        elif _should_escape(c, mode):
            out += b"%%%02X" % c
        else:
            out.append(c)
    return bytes(out)


def query_escape(s: str) -> str:
    return _escape(to_bytes(s), _QUERY).decode("ascii")


def _string(x: Any) -> str:
    if type(x) is not str:
        raise operand_error(1, x, "string")
    return x


@builtin("urlquery.encode", 1)
def urlquery_encode(x: Any) -> str:
    return query_escape(_string(x))


@builtin("urlquery.decode", 1)
def urlquery_decode(x: Any) -> str:
    try:
        return from_bytes(_unescape(to_bytes(_string(x)), _QUERY))
    except _UrlError as e:
        raise BuiltinError(str(e)) from None


_ENCODE_OBJECT_ERR = "operand 1 values must be string, array[string], or set[string]"


@builtin("urlquery.encode_object", 1)
def urlquery_encode_object(x: Any) -> str:
    if type(x) is not dict:
        raise operand_error(1, x, "object")
    params: dict[str, list[str]] = {}
    for k, v in to_json_value(x).items():
        if type(v) is str:
            params[k] = [v]
        elif type(v) is list:
            if any(type(e) is not str for e in v):
                raise OperandTypeError(_ENCODE_OBJECT_ERR)
            params[k] = v
        else:
            raise OperandTypeError(_ENCODE_OBJECT_ERR)
    # Go's url.Values.Encode: keys sorted by bytes, values in order
    parts = []
    for k in sorted(params, key=to_bytes):
        ek = query_escape(k)
        for v in params[k]:
            parts.append(ek + "=" + query_escape(v))
    return "&".join(parts)


def parse_query(query: str) -> tuple[dict[str, list[str]], str | None]:
    """Go's ``url.ParseQuery``: every valid pair, and the error to report."""
    out: dict[str, list[str]] = {}
    err: str | None = None
    for part in query.split("&"):
        if ";" in part:
            err = "invalid semicolon separator in query"
            continue
        if not part:
            continue
        key, _, value = part.partition("=")
        try:
            k = from_bytes(_unescape(to_bytes(key), _QUERY))
            v = from_bytes(_unescape(to_bytes(value), _QUERY))
        except _UrlError as e:
            if err is None:
                err = str(e)
            continue
        out.setdefault(k, []).append(v)
    return out, err


@builtin("urlquery.decode_object", 1)
def urlquery_decode_object(x: Any) -> dict[Any, Any]:
    params, err = parse_query(_string(x))
    if err is not None:
        raise BuiltinError(err)
    return dict(params)


# ---------------------------------------------------------------- uri


class URL:
    __slots__ = ("scheme", "opaque", "user", "host", "path", "raw_path", "raw_query", "force_query", "fragment", "raw_fragment")

    def __init__(self) -> None:
        self.scheme = ""
        self.opaque = ""
        self.user: tuple[str, str | None] | None = None
        self.host = ""
        self.path = ""
        self.raw_path = ""
        self.raw_query = ""
        self.force_query = False
        self.fragment = ""
        self.raw_fragment = ""

    def hostname(self) -> str:
        return _split_host_port(self.host)[0]

    def port(self) -> str:
        return _split_host_port(self.host)[1]

    def escaped_path(self) -> str:
        """Go's ``URL.EscapedPath``: the path as written where that is a valid
        encoding of it, else the path escaped."""
        if self.raw_path and _valid_encoded_path(self.raw_path):
            try:
                written = from_bytes(_unescape(to_bytes(self.raw_path), _PATH))
            except _UrlError:
                written = None
            if written == self.path:
                return self.raw_path
        if self.path == "*":
            return "*"
        return _escape(to_bytes(self.path), _PATH).decode("ascii")

    def text(self, hide_password: bool = False) -> str:
        """Go's ``URL.String`` (with ``hide_password``, the client's errors'
        form of it: a password written as ``***``)."""
        out = [self.scheme + ":"] if self.scheme else []
        if self.opaque:
            out.append(self.opaque)
        else:
            if self.scheme or self.host or self.user is not None:
                if self.host or self.path or self.user is not None:
                    out.append("//")
                if self.user is not None:
                    name, password = self.user
                    out.append(_escape(to_bytes(name), _USER).decode("ascii"))
                    if password is not None:
                        out.append(":***" if hide_password else ":" + _escape(to_bytes(password), _USER).decode("ascii"))
                    out.append("@")
                if self.host:
                    out.append(_escape(to_bytes(self.host), _HOST).decode("ascii"))
            path = self.escaped_path()
            if path and path[0] != "/" and self.host:
                out.append("/")
            if not out and ":" in path.partition("/")[0]:
                out.append("./")
            out.append(path)
        if self.force_query or self.raw_query:
            out.append("?" + self.raw_query)
        if self.fragment:
            out.append("#" + self._escaped_fragment())
        return "".join(out)

    def _escaped_fragment(self) -> str:
        raw = self.raw_fragment
        if raw and all(c in _PATH_KEEPS or not _should_escape(c, _FRAGMENT) for c in to_bytes(raw)):
            try:
                if from_bytes(_unescape(to_bytes(raw), _FRAGMENT)) == self.fragment:
                    return raw
            except _UrlError:
                pass
        return _escape(to_bytes(self.fragment), _FRAGMENT).decode("ascii")

    def request_uri(self) -> str:
        """Go's ``URL.RequestURI``: what an HTTP request line asks for."""
        result = self.opaque
        if not result:
            result = self.escaped_path() or "/"
        elif result.startswith("//"):
            result = self.scheme + ":" + result
        if self.force_query or self.raw_query:
            result += "?" + self.raw_query
        return result


# Characters a written path may keep unescaped (RFC 3986's sub-delims, ":", "@",
# brackets, and "%" of an escape), besides those Go's escaping leaves alone.
_PATH_KEEPS = frozenset(b"!$&'()*+,;=:@[]%")


def _valid_encoded_path(raw: str) -> bool:
    return all(c in _PATH_KEEPS or not _should_escape(c, _PATH) for c in to_bytes(raw))


def _split_host_port(hostport: str) -> tuple[str, str]:
    host, port = hostport, ""
    colon = host.rfind(":")
    if colon != -1 and _valid_optional_port(host[colon:]):
        host, port = host[:colon], host[colon + 1 :]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _valid_optional_port(port: str) -> bool:
    if port == "":
        return True
    return port[0] == ":" and all("0" <= c <= "9" for c in port[1:])


def _get_scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if "a" <= c <= "z" or "A" <= c <= "Z":
            continue
        if "0" <= c <= "9" or c in "+-.":
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise _UrlError("missing protocol scheme")
            return raw[:i], raw[i + 1 :]
        return "", raw
    return "", raw


def parse_url(raw: str) -> URL:
    """Go's ``url.Parse``; raises :class:`BuiltinError` with Go's message."""
    rest, sep, frag = raw.partition("#")
    try:
        u = _parse(rest)
    except _UrlError as e:
        raise BuiltinError(f"parse {go_quote(rest)}: {e}") from None
    if sep and frag:
        try:
            u.fragment = from_bytes(_unescape(to_bytes(frag), _FRAGMENT))
            u.raw_fragment = frag
        except _UrlError as e:
            raise BuiltinError(f"parse {go_quote(raw)}: {e}") from None
    return u


def _parse(raw: str) -> URL:
    if any(ord(c) < 0x20 or c == "\x7f" for c in raw):
        raise _UrlError("net/url: invalid control character in URL")
    u = URL()
    if raw == "*":
        u.path = "*"
        return u
    scheme, rest = _get_scheme(raw)
    u.scheme = scheme.lower()
    if rest.endswith("?") and rest.count("?") == 1:
        u.force_query = True
        rest = rest[:-1]
    else:
        rest, _, u.raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if u.scheme:
            u.opaque = rest  # a rootless path: opaque
            return u
        if ":" in rest.partition("/")[0]:
            raise _UrlError("first path segment in URL cannot contain colon")
    if (u.scheme or not rest.startswith("///")) and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        u.user, u.host = _parse_authority(authority)
    escaped = to_bytes(rest)
    unescaped = _unescape(escaped, _PATH)
    u.path = from_bytes(unescaped)
    u.raw_path = "" if _escape(unescaped, _PATH) == escaped else rest
    return u


_USERINFO_OK = frozenset("-._:~!$&'()*+,;=%@")


def _parse_authority(authority: str) -> tuple[tuple[str, str | None] | None, str]:
    i = authority.rfind("@")
    host = _parse_host(authority if i < 0 else authority[i + 1 :])
    if i < 0:
        return None, host
    info = authority[:i]
    if not all(c.isascii() and (c.isalnum() or c in _USERINFO_OK) for c in info):
        raise _UrlError("net/url: invalid userinfo")
    name, colon, password = info.partition(":")
    user = from_bytes(_unescape(to_bytes(name), _USER))
    pw = from_bytes(_unescape(to_bytes(password), _USER)) if colon else None
    return (user, pw), host


def _parse_host(host: str) -> str:
    bracket = host.rfind("[")
    if bracket > 0:
        raise _UrlError("invalid IP-literal")
    if bracket == 0:
        close = host.rfind("]")
        if close < 0:
            raise _UrlError("missing ']' in host")
        colon_port = host[close + 1 :]
        if not _valid_optional_port(colon_port):
            raise _UrlError(f"invalid port {go_quote(colon_port)} after host")
        name = host[1:close]
        zone = name.find("%25")
        if zone >= 0:
            unescaped = from_bytes(_unescape(to_bytes(name[:zone]), _HOST) + _unescape(to_bytes(name[zone:]), _ZONE))
        else:
            unescaped = from_bytes(_unescape(to_bytes(name), _HOST))
        # Only an IPv6 address may be written in brackets.
        try:
            addr = ipaddress.ip_address(unescaped)
        except ValueError:
            raise _UrlError(f"invalid host: ParseAddr({go_quote(unescaped)}): unable to parse IP") from None
        if addr.version == 4:
            raise _UrlError("invalid IP-literal")
        return "[" + unescaped + "]" + colon_port
    i = host.find(":")
    if i != -1 and not _valid_optional_port(host[i:]):
        raise _UrlError(f"invalid port {go_quote(host[i:])} after host")
    return from_bytes(_unescape(to_bytes(host), _HOST))


@builtin("uri.is_valid", 1)
def uri_is_valid(x: Any) -> bool:
    if type(x) is not str or x == "":
        return False
    try:
        parse_url(x)
    except BuiltinError:
        return False
    return True


@builtin("uri.parse", 1)
def uri_parse(x: Any) -> dict[Any, Any]:
    u = parse_url(_string(x))
    fields = {
        "scheme": u.scheme,
        "hostname": u.hostname(),
        "port": u.port(),
        "path": u.path,
        "raw_path": u.raw_path or u.path,
        "raw_query": u.raw_query,
        "fragment": u.fragment,
    }
    return {k: v for k, v in fields.items() if v}
