"""net.* builtins (OPA's ``cidr.go`` and ``net.go``) with Go's ``net`` semantics.

Go keeps IPv4 addresses inside IPv6 as ``::ffff:a.b.c.d`` and treats such
"v4-mapped" addresses and networks as IPv4 when comparing (``To4``). Here a
network is normalised the same way: ``(first address, bits, prefix)`` with
bits 32 for IPv4 (v4-mapped included) and 128 for other IPv6.

``net.cidr_expand`` stops at the evaluation's deadline, as OPA's does, and
refuses networks of more than :data:`~.limits.MAX_CIDR_EXPAND` addresses;
``net.cidr_merge`` and ``net.cidr_contains_matches`` stop at the deadline.
``net.lookup_ip_addr`` waits for the resolver no longer than the time left.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import threading
from collections.abc import Iterator
from typing import Any

from pyrego.builtins.limits import MAX_CIDR_EXPAND, Deadline
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import BuiltinCancel, BuiltinError
from pyrego.runtime.context import EvalContext
from pyrego.runtime.values import freeze, make_set, sorted_values, thaw

_V4_MAPPED = 0xFFFF << 32


class _Net:
    __slots__ = ("first", "bits", "prefix")

    def __init__(self, first: int, bits: int, prefix: int) -> None:
        self.first = first
        self.bits = bits
        self.prefix = prefix

    @property
    def last(self) -> int:
        return self.first | ((1 << (self.bits - self.prefix)) - 1)

    def contains(self, value: int, bits: int) -> bool:
        if bits != self.bits:
            return False
        shift = self.bits - self.prefix
        return value >> shift == self.first >> shift


def _parse_addr(s: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Go's ``netip.ParseAddr`` without zones (``net.ParseIP``)."""
    if "%" in s or not s.isascii():
        return None
    try:
        return ipaddress.ip_address(s)
    except ValueError:
        return None


def _to4(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> tuple[int, int]:
    """(value, bits) as Go compares an IP: v4-mapped IPv6 counts as IPv4."""
    if addr.version == 4:
        return int(addr), 32
    v = int(addr)
    if v >> 32 == 0xFFFF:
        return v & 0xFFFFFFFF, 32
    return v, 128


@functools.lru_cache(maxsize=4096)
def parse_ip(s: str) -> tuple[int, int] | None:
    addr = _parse_addr(s)
    return None if addr is None else _to4(addr)


@functools.lru_cache(maxsize=4096)
def parse_cidr(s: str) -> _Net:
    """Go's ``net.ParseCIDR``; raises Go's error text (results are cached: parsing is slow)."""
    addr_text, sep, mask = s.partition("/")
    addr = _parse_addr(addr_text) if sep else None
    if addr is None or not mask or not mask.isdigit() or not mask.isascii():
        raise BuiltinError(f"invalid CIDR address: {s}")
    bits = 32 if addr.version == 4 else 128
    prefix = int(mask)
    if prefix > bits:
        raise BuiltinError(f"invalid CIDR address: {s}")
    first = int(addr) & ~((1 << (bits - prefix)) - 1)
    if bits == 128 and first >> 32 == 0xFFFF:
        # a v4-mapped network (prefix >= 96) behaves as IPv4
        return _Net(first & 0xFFFFFFFF, 32, prefix - 96)
    return _Net(first, bits, prefix)


def _net_operand(x: Any) -> _Net:
    # OPA names every CIDR operand "operand 1" in type errors.
    if type(x) is not str:
        raise operand_error(1, x, "string")
    return parse_cidr(x)


def _ip_string(value: int, bits: int) -> str:
    if bits == 32:
        return str(ipaddress.IPv4Address(value))
    if value >> 32 == 0xFFFF:
        return str(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    return ipaddress.IPv6Address(value).compressed


def _contains(a: _Net, b: Any) -> bool:
    """net.cidr_contains: b is an IP or a CIDR."""
    if type(b) is not str:
        raise operand_error(1, b, "string")
    ip = parse_ip(b)
    if ip is not None:
        return a.contains(*ip)
    try:
        nb = parse_cidr(b)
    except BuiltinError:
        raise BuiltinError(f"not a valid textual representation of an IP address or CIDR: {b}") from None
    return a.contains(nb.first, nb.bits) and a.contains(nb.last, nb.bits)


@builtin("net.cidr_contains", 2)
def net_cidr_contains(cidr: Any, cidr_or_ip: Any) -> bool:
    return _contains(_net_operand(cidr), cidr_or_ip)


@builtin("net.cidr_overlap", 2)
def net_cidr_overlap(cidr: Any, cidr_or_ip: Any) -> bool:
    return _contains(_net_operand(cidr), cidr_or_ip)


@builtin("net.cidr_intersects", 2)
def net_cidr_intersects(a: Any, b: Any) -> bool:
    na = _net_operand(a)
    nb = _net_operand(b)
    return na.contains(nb.first, nb.bits) or nb.contains(na.first, na.bits)


@builtin("net.cidr_is_valid", 1)
def net_cidr_is_valid(x: Any) -> bool:
    if type(x) is not str:
        return False
    try:
        parse_cidr(x)
    except BuiltinError:
        return False
    return True


@builtin("net.cidr_expand", 1, cancellable=True)
def net_cidr_expand(ctx: EvalContext, x: Any) -> frozenset[Any]:
    if type(x) is not str:
        raise operand_error(1, x, "string")
    n = parse_cidr(x)
    size = 1 << (n.bits - n.prefix)
    if size > MAX_CIDR_EXPAND:
        raise BuiltinError(f"{x} has {size} addresses, more than the limit of {MAX_CIDR_EXPAND} to expand")
    deadline = Deadline(ctx, "timed out before generating all IP addresses")
    out: set[str] = set()
    step = 1 << 12
    for start in range(n.first, n.first + size, step):
        deadline.tick(step)
        stop = min(start + step, n.first + size)
        if n.bits == 32:
            out.update(f"{v >> 24}.{v >> 16 & 255}.{v >> 8 & 255}.{v & 255}" for v in range(start, stop))
        else:
            out.update(_ip_string(v, 128) for v in range(start, stop))
    return frozenset(out)


def _match_items(operand: int, x: Any) -> Iterator[tuple[Any, Any]]:
    """(cidr, index) pairs of a cidr_contains_matches operand, met as OPA meets
    them: lazily (an element's error shows when it is reached), sets in order."""

    def cidr_of(v: Any) -> Any:
        if type(v) is str:
            return v
        if type(v) is list and v:
            return v[0]
        raise BuiltinError(f"operand {operand}: element must be string or non-empty array")

    t = type(x)
    if t is str:
        yield x, x
    elif t is list:
        for i, v in enumerate(x):
            yield cidr_of(v), i
    elif t is set or t is frozenset:
        for v in sorted_values(x):
            yield cidr_of(v), v
    elif t is dict:
        for k in sorted_values(x.keys()):  # (OPA walks an object's keys in order too)
            yield cidr_of(x[freeze(k)]), k


@builtin("net.cidr_contains_matches", 2, cancellable=True)
def net_cidr_contains_matches(ctx: EvalContext, cidrs: Any, cidrs_or_ips: Any) -> frozenset[Any]:
    # OPA walks the second operand once per element of the first: with no
    # first elements the second is never looked at.
    out = set()
    nets: dict[Any, _Net] = {}
    deadline = Deadline(ctx)
    right: list[tuple[Any, Any]] | None = None  # the second operand's items, once met in full
    for c1, i1 in _match_items(1, cidrs):
        key = freeze(c1)
        met: list[tuple[Any, Any]] = []
        for c2, i2 in _match_items(2, cidrs_or_ips) if right is None else right:
            met.append((c2, i2))
            deadline.tick(1)
            n1 = nets.get(key)
            if n1 is None:
                n1 = nets[key] = _net_operand(c1)
            if _contains(n1, c2):
                out.add(freeze([i1, i2]))
        right = met
    return frozenset(out)


# ---------------------------------------------------------------- cidr_merge


class _Range:
    __slots__ = ("first", "last", "text")

    def __init__(self, first: int, last: int, text: str | None) -> None:
        self.first = first
        self.last = last
        self.text = text  # the network as written back when nothing merges with it


def _merge_item(x: Any) -> _Range:
    """A network as a range of 128-bit addresses (IPv4 in ::ffff:0:0/96)."""
    if type(x) is not str:
        raise BuiltinError("element must be string")
    addr = _parse_addr(x)
    if addr is None:
        n = parse_cidr(x)
        base = _V4_MAPPED if n.bits == 32 else 0
        return _Range(base | n.first, base | n.last, f"{_ip_string(n.first, n.bits)}/{n.prefix}")
    value, bits = _to4(addr)
    if bits != 32:
        raise BuiltinError("IPv6 invalid: needs prefix length")
    # Go gives a lone IPv4 address its classful default mask (/8, /16, /24),
    # and prints the address itself, unmasked, with it.
    prefix = 8 if value >> 31 == 0 else (16 if value >> 30 == 0b10 else 24)
    host = (1 << (32 - prefix)) - 1
    return _Range(_V4_MAPPED | (value & ~host), _V4_MAPPED | value | host, f"{_ip_string(value, 32)}/{prefix}")


def _range_to_cidrs(first: int, last: int) -> list[str]:
    """The fewest CIDRs covering [first, last] (IPv4 when first is v4-mapped)."""
    if first >> 32 == 0xFFFF and last >> 32 == 0xFFFF:
        lo, hi, bits = first & 0xFFFFFFFF, last & 0xFFFFFFFF, 32
    else:
        lo, hi, bits = first, last, 128
    out = []
    while lo <= hi:
        size = (lo & -lo).bit_length() - 1 if lo else bits
        while size > 0 and lo + (1 << size) - 1 > hi:
            size -= 1
        prefix = bits - size
        if bits == 128 and lo >> 32 == 0xFFFF and prefix >= 96:
            out.append(f"{_ip_string(lo, 128)}/{prefix - 96}")
        else:
            out.append(f"{_ip_string(lo, bits)}/{prefix}")
        lo += 1 << size
    return out


@builtin("net.cidr_merge", 1, cancellable=True)
def net_cidr_merge(ctx: EvalContext, x: Any) -> frozenset[Any]:
    t = type(x)
    if t is list:
        items = x
    elif t is set or t is frozenset:
        items = [thaw(k) for k in x]
    else:
        raise BuiltinError("operand must be an array")
    deadline = Deadline(ctx)
    ranges = []
    for v in items:
        deadline.tick(16)  # parsing a network is the costly step
        ranges.append(_merge_item(v))
    ranges.sort(key=lambda r: (r.last, r.first))
    # merge right to left, as OPA does: a range that touches or overlaps the
    # previous one (in order of last address) absorbs it (collected on a
    # stack: deleting from the list would make this quadratic)
    merged: list[_Range] = []
    if ranges:
        cur = ranges[-1]
        for prev in reversed(ranges[:-1]):
            before = cur.first if cur.first in (0, _V4_MAPPED) else cur.first - 1
            if before <= prev.last:
                cur = _Range(min(prev.first, cur.first), cur.last, None)
            else:
                merged.append(cur)
                cur = prev
        merged.append(cur)
        merged.reverse()
    out: list[str] = []
    for r in merged:
        deadline.tick()
        out.extend([r.text] if r.text is not None else _range_to_cidrs(r.first, r.last))
    return make_set(out)


# ---------------------------------------------------------------- lookup


def _resolve(ctx: EvalContext, name: str) -> list[Any]:
    """``getaddrinfo``, given up at the evaluation's deadline (the resolver
    itself cannot be interrupted: it finishes in a thread of its own)."""
    if ctx.deadline is None:
        return socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    left = Deadline(ctx, f"lookup {name}: evaluation timed out").seconds_left()
    box: dict[str, Any] = {}

    def lookup() -> None:
        try:
            box["infos"] = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    worker = threading.Thread(target=lookup, daemon=True)
    worker.start()
    worker.join(left)
    if worker.is_alive():
        raise BuiltinCancel(f"lookup {name}: evaluation timed out")
    if "error" in box:
        raise box["error"]
    return box["infos"]  # type: ignore[no-any-return]


@builtin("net.lookup_ip_addr", 1, needs_context=True)
def net_lookup_ip_addr(ctx: EvalContext, name: Any) -> frozenset[Any]:
    if type(name) is not str:
        raise operand_error(1, name, "string")
    allow = ctx.options.get("allow_net", True)
    if allow is not True and (allow is False or allow is None or name not in allow):
        raise BuiltinError(f"unallowed host: {name}: network access is disabled")
    cache = ctx.cache_for("net.lookup_ip_addr")
    hit = cache.get(name)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    try:
        infos = _resolve(ctx, name)
    except (socket.gaierror, UnicodeError) as e:
        if isinstance(e, socket.gaierror) and e.errno in (socket.EAI_NONAME, getattr(socket, "EAI_NODATA", -5)):
            raise BuiltinError(f"lookup {name}: no such host") from None
        raise BuiltinError(f"lookup {name}: {e}") from None
    addrs = set()
    for family, _, _, _, sockaddr in infos:
        host = str(sockaddr[0])
        if family == socket.AF_INET6:
            addr = _parse_addr(host.partition("%")[0])
            if addr is not None and _to4(addr)[1] == 32:
                host = _ip_string(*_to4(addr))
        addrs.add(host)
    result = make_set(addrs)
    cache[name] = result
    return result
