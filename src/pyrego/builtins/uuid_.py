"""uuid.rfc4122 and uuid.parse (OPA's ``uuid.go`` over google/uuid)."""

from __future__ import annotations

import os
from typing import Any

from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import UNDEF, freeze

_HEX = frozenset("0123456789abcdefABCDEF")
_G1582_NS100 = 122192928000000000  # 100ns ticks from 1582-10-15 to 1970-01-01
_DOMAINS = {0: "Person", 1: "Group", 2: "Org"}


@builtin("uuid.rfc4122", 1, needs_context=True)
def uuid_rfc4122(ctx: EvalContext, key: Any) -> str:
    # One random version 4 UUID per key and query, as OPA caches it.
    cache = ctx.cache_for("uuid.rfc4122")
    k = freeze(key)
    value = cache.get(k)
    if value is None:
        b = bytearray(os.urandom(16))
        b[8] = (b[8] & 0x3F) | 0x80
        b[6] = (b[6] & 0x0F) | 0x40
        h = b.hex()
        value = cache[k] = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return value  # type: ignore[no-any-return]


def _parse(s: str) -> bytes | None:
    """google/uuid's ``Parse``: plain, ``{...}``, ``urn:uuid:...`` or 32 hex digits."""
    n = len(s)
    if n == 36 + 9:
        if s[:9].lower() != "urn:uuid:":
            return None
        s = s[9:]
    elif n == 38:
        if s[0] != "{" or s[-1] != "}":
            return None
        s = s[1:-1]
    elif n == 32:
        return bytes.fromhex(s) if _HEX.issuperset(s) else None
    elif n != 36:
        return None
    if s[8] != "-" or s[13] != "-" or s[18] != "-" or s[23] != "-":
        return None
    h = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
    return bytes.fromhex(h) if _HEX.issuperset(h) else None


def _variant(b: int) -> str:
    if b & 0xC0 == 0x80:
        return "RFC4122"
    if b & 0xE0 == 0xE0:
        return "Future"
    if b & 0xE0 == 0xC0:
        return "Microsoft"
    return "Reserved"


def _int64(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def _go_divmod(a: int, b: int) -> tuple[int, int]:
    # Go's / and % truncate toward zero
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return q, a - q * b


def _mac_variables(first: int) -> str:
    if first & 0b11 == 0b11:
        return "local:multicast"
    if first & 0b01:
        return "global:multicast"
    if first & 0b10:
        return "local:unicast"
    return "global:unicast"


@builtin("uuid.parse", 1)
def uuid_parse(x: Any) -> Any:
    if type(x) is not str:
        raise operand_error(1, x, "string")
    u = _parse(x) if x.isascii() else None
    if u is None:
        return UNDEF
    version = u[6] >> 4
    out: dict[str, Any] = {"version": version, "variant": _variant(u[8])}
    if version in (1, 2):
        ticks = (
            int.from_bytes(u[0:4], "big")
            | int.from_bytes(u[4:6], "big") << 32
            | (int.from_bytes(u[6:8], "big") & 0xFFF) << 48
        )
        sec = ticks - _G1582_NS100
        sec, rem = _go_divmod(sec, 10_000_000)
        out["time"] = _int64(sec * 1_000_000_000 + rem * 100)
        out["nodeid"] = "-".join(f"{b:02x}" for b in u[10:16])
        out["macvariables"] = _mac_variables(u[10])
        out["clocksequence"] = int.from_bytes(u[8:10], "big") & 0x3FFF
        if version == 2:
            out["id"] = int.from_bytes(u[0:4], "big")
            out["domain"] = _DOMAINS.get(u[9], f"Domain{u[9]}")
    return out
