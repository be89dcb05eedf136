"""X.509 chain verification as Go's ``Certificate.Verify`` does it for OPA (no builtins here)."""

from __future__ import annotations

import datetime
import ipaddress

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm

from pyrego.builtins.x509 import EXT_KEY_USAGES


class VerifyError(Exception):
    pass


def verify_chain(
    certs: list[x509.Certificate],
    *,
    dns_name: str = "",
    now: datetime.datetime | None = None,
    key_usages: list[int] | None = None,
) -> list[x509.Certificate]:
    """Verify as OPA does: first cert is the root, last the leaf, others intermediates.

    Returns the chain leaf-first, as Go's ``Certificate.Verify`` does.
    """
    if len(certs) < 2:
        raise VerifyError("operand 1 must supply at least two certificates to be able to verify")
    root = certs[0]
    intermediates = certs[1:-1]
    leaf = certs[-1]
    when = now or datetime.datetime.now(datetime.timezone.utc)
    _check_validity(leaf, when)
    if dns_name:
        _verify_hostname(leaf, dns_name)
    usages = key_usages if key_usages else [1]
    chain = _build(leaf, [root], intermediates, when, [leaf], 0)
    if chain is None:
        raise VerifyError("x509: certificate signed by unknown authority")
    if 0 not in usages and not _eku_ok(chain, usages):
        raise VerifyError("x509: certificate specifies an incompatible key usage")
    return chain


def _check_validity(cert: x509.Certificate, when: datetime.datetime) -> None:
    if when < cert.not_valid_before_utc or when > cert.not_valid_after_utc:
        raise VerifyError("x509: certificate has expired or is not yet valid")


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        bc = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        return False
    return bc.ca


def _can_sign(parent: x509.Certificate) -> bool:
    try:
        bc = parent.extensions.get_extension_for_class(x509.BasicConstraints).value
        if not bc.ca:
            return False
    except x509.ExtensionNotFound:
        if parent.version == x509.Version.v3:
            return False
    try:
        ku = parent.extensions.get_extension_for_class(x509.KeyUsage).value
        if not ku.key_cert_sign:
            return False
    except x509.ExtensionNotFound:
        pass
    return True


def _signed_by(child: x509.Certificate, parent: x509.Certificate) -> bool:
    if child.issuer.public_bytes() != parent.subject.public_bytes():
        return False
    if not _can_sign(parent):
        return False
    try:
        hash_alg = child.signature_hash_algorithm
    except UnsupportedAlgorithm:
        return False
    # Go refuses SHA-1 (and MD5) signatures when building chains.
    if hash_alg is not None and hash_alg.name in ("sha1", "md5"):
        return False
    try:
        child.verify_directly_issued_by(parent)
    except (ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return False
    return True


def _build(
    cert: x509.Certificate,
    roots: list[x509.Certificate],
    intermediates: list[x509.Certificate],
    when: datetime.datetime,
    chain: list[x509.Certificate],
    depth: int,
) -> list[x509.Certificate] | None:
    if depth > 10:
        return None
    for root in roots:
        if root == cert:
            return chain
    for root in roots:
        # Go's isValid checks every candidate's validity period, roots included.
        if when < root.not_valid_before_utc or when > root.not_valid_after_utc:
            continue
        if _signed_by(cert, root):
            return chain + [root]
    for inter in intermediates:
        if inter in chain or not _is_ca(inter):
            continue
        if when < inter.not_valid_before_utc or when > inter.not_valid_after_utc:
            continue
        if _signed_by(cert, inter):
            found = _build(inter, roots, intermediates, when, chain + [inter], depth + 1)
            if found is not None:
                return found
    return None


def _ekus(cert: x509.Certificate) -> list[int] | None:
    try:
        eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        return None
    return [EXT_KEY_USAGES.get(u.dotted_string, -1) for u in eku]


def _eku_ok(chain: list[x509.Certificate], usages: list[int]) -> bool:
    remaining = set(usages)
    for cert in chain:
        ekus = _ekus(cert)
        if ekus is None or 0 in ekus:
            continue
        remaining &= set(ekus)
        if not remaining:
            return False
    return True


def _verify_hostname(cert: x509.Certificate, host: str) -> None:
    host = host.strip("[]")
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        raise VerifyError("x509: certificate is not valid for any names")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        ip = None
    if ip is not None:
        if ip in san.get_values_for_type(x509.IPAddress):
            return
        raise VerifyError(f"x509: certificate is not valid for {host}")
    want = host.lower().rstrip(".")
    for pattern in san.get_values_for_type(x509.DNSName):
        if _match_host(pattern.lower(), want):
            return
    raise VerifyError(f"x509: certificate is valid for other names, not {host}")


def _match_host(pattern: str, host: str) -> bool:
    if pattern == host:
        return True
    if pattern.startswith("*."):
        head, _, rest = host.partition(".")
        return bool(head) and rest == pattern[2:]
    return False
