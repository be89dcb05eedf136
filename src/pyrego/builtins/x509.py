"""X.509 objects rendered as OPA renders them: the JSON of Go's ``x509.Certificate``.

OPA returns ``json.Marshal`` of Go's structs, so field names are Go's
("Subject", "NotBefore", "DNSNames"...), byte slices are base64 strings,
nil slices are ``null``, enums are Go's integer constants and big integers
are plain numbers. No builtins are registered here (see ``crypto.py``).
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
from typing import Any
from urllib.parse import unquote, urlsplit

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed448, ed25519, rsa, x448, x25519
from cryptography.x509.oid import ExtensionOID

# ---------------------------------------------------------------- DER walking


def _tlv(data: bytes, pos: int) -> tuple[int, int, int, int]:
    """(tag, header start, content start, end) of the DER element at ``pos``."""
    if pos + 2 > len(data):
        raise ValueError("x509: malformed certificate")
    tag = data[pos]
    length = data[pos + 1]
    start = pos + 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or start + count > len(data):
            raise ValueError("x509: malformed certificate")
        length = int.from_bytes(data[start : start + count], "big")
        start += count
    end = start + length
    if end > len(data):
        raise ValueError("x509: malformed certificate")
    return tag, pos, start, end


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int, int]]:
    out = []
    pos = start
    while pos < end:
        t = _tlv(data, pos)
        out.append(t)
        pos = t[3]
    return out


def _decode_oid(body: bytes) -> list[int]:
    arcs: list[int] = []
    value = 0
    for b in body:
        value = (value << 7) | (b & 0x7F)
        if not b & 0x80:
            arcs.append(value)
            value = 0
    if not arcs:
        return arcs
    first = arcs[0]
    head = [0, first] if first < 40 else ([1, first - 40] if first < 80 else [2, first - 80])
    return head + arcs[1:]


def der_certificate_length(data: bytes) -> int:
    """Length of the first DER element of ``data`` (to split concatenated certificates)."""
    return _tlv(data, 0)[3]


class _RawCert:
    """The raw DER pieces Go keeps on a certificate (TBS, SPKI, names, extensions)."""

    def __init__(self, der: bytes) -> None:
        _, _, cs, ce = _tlv(der, 0)
        parts = _children(der, cs, ce)
        tbs = parts[0]
        self.tbs = der[tbs[1] : tbs[3]]
        fields = _children(der, tbs[2], tbs[3])
        i = 0
        if fields and fields[0][0] == 0xA0:
            i = 1
        # serial, signature, issuer, validity, subject, spki
        issuer = fields[i + 2]
        subject = fields[i + 4]
        spki = fields[i + 5]
        self.issuer = der[issuer[1] : issuer[3]]
        self.subject = der[subject[1] : subject[3]]
        self.spki = der[spki[1] : spki[3]]
        self.extensions: list[tuple[list[int], bool, bytes]] = []
        for f in fields[i + 6 :]:
            if f[0] == 0xA3:
                seq = _children(der, f[2], f[3])
                if seq:
                    for ext in _children(der, seq[0][2], seq[0][3]):
                        self.extensions.append(_raw_extension(der, ext))


def _raw_extension(der: bytes, ext: tuple[int, int, int, int]) -> tuple[list[int], bool, bytes]:
    items = _children(der, ext[2], ext[3])
    oid = _decode_oid(der[items[0][2] : items[0][3]])
    critical = False
    value_item = items[-1]
    if len(items) == 3:
        critical = der[items[1][2] : items[1][3]] != b"\x00"
    return oid, critical, der[value_item[2] : value_item[3]]


# ---------------------------------------------------------------- Go enums

_SIG_ALGS = {
    "1.2.840.113549.1.1.2": 1,
    "1.2.840.113549.1.1.4": 2,
    "1.2.840.113549.1.1.5": 3,
    "1.2.840.113549.1.1.11": 4,
    "1.2.840.113549.1.1.12": 5,
    "1.2.840.113549.1.1.13": 6,
    "1.2.840.10040.4.3": 7,
    "2.16.840.1.101.3.4.3.2": 8,
    "1.2.840.10045.4.1": 9,
    "1.2.840.10045.4.3.2": 10,
    "1.2.840.10045.4.3.3": 11,
    "1.2.840.10045.4.3.4": 12,
    "1.3.101.112": 16,
}
_PSS_BY_HASH = {"sha256": 13, "sha384": 14, "sha512": 15}

EXT_KEY_USAGES = {
    "2.5.29.37.0": 0,
    "1.3.6.1.5.5.7.3.1": 1,
    "1.3.6.1.5.5.7.3.2": 2,
    "1.3.6.1.5.5.7.3.3": 3,
    "1.3.6.1.5.5.7.3.4": 4,
    "1.3.6.1.5.5.7.3.5": 5,
    "1.3.6.1.5.5.7.3.6": 6,
    "1.3.6.1.5.5.7.3.7": 7,
    "1.3.6.1.5.5.7.3.8": 8,
    "1.3.6.1.5.5.7.3.9": 9,
    "1.3.6.1.4.1.311.10.3.3": 10,
    "2.16.840.1.113730.4.1": 11,
    "1.3.6.1.4.1.311.2.1.22": 12,
    "1.3.6.1.4.1.311.61.1.1": 13,
}

# pkix.Name fields filled from RDN attributes
_NAME_FIELDS = {
    "2.5.4.6": "Country",
    "2.5.4.10": "Organization",
    "2.5.4.11": "OrganizationalUnit",
    "2.5.4.7": "Locality",
    "2.5.4.8": "Province",
    "2.5.4.9": "StreetAddress",
    "2.5.4.17": "PostalCode",
}


def _oid_ints(dotted: str) -> list[int]:
    return [int(p) for p in dotted.split(".")]


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _signature_algorithm(oid: str, hash_name: str | None) -> int:
    if oid == "1.2.840.113549.1.1.10":
        return _PSS_BY_HASH.get(hash_name or "", 0)
    return _SIG_ALGS.get(oid, 0)


def go_time(t: datetime.datetime) -> str:
    """Go's RFC 3339 (nano) rendering of a UTC time."""
    t = t.astimezone(datetime.timezone.utc)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += ("." + f"{t.microsecond:06d}").rstrip("0")
    return text + "Z"


def pkix_name(name: x509.Name) -> dict[str, Any]:
    """Go's ``pkix.Name`` as JSON."""
    out: dict[str, Any] = {
        "Country": None,
        "Organization": None,
        "OrganizationalUnit": None,
        "Locality": None,
        "Province": None,
        "StreetAddress": None,
        "PostalCode": None,
        "SerialNumber": "",
        "CommonName": "",
        "Names": None,
        "ExtraNames": None,
    }
    names: list[dict[str, Any]] = []
    for rdn in name.rdns:
        for attr in rdn:
            oid = attr.oid.dotted_string
            value: Any = attr.value
            if isinstance(value, bytes):
                value = value.decode("utf-8", "replace")
            names.append({"Type": _oid_ints(oid), "Value": value})
            if type(value) is not str:
                continue
            if oid == "2.5.4.3":
                out["CommonName"] = value
            elif oid == "2.5.4.5":
                out["SerialNumber"] = value
            elif oid in _NAME_FIELDS:
                field = _NAME_FIELDS[oid]
                if out[field] is None:
                    out[field] = []
                out[field].append(value)
    if names:
        out["Names"] = names
    return out


def public_key_json(key: Any) -> Any:
    """Go's JSON of a public key: RSA {N, E}, ECDSA {Curve, X, Y}, Ed25519 bytes."""
    if isinstance(key, rsa.RSAPublicKey):
        n = key.public_numbers()
        return {"N": n.n, "E": n.e}
    if isinstance(key, ec.EllipticCurvePublicKey):
        en = key.public_numbers()
        return {"Curve": {}, "X": en.x, "Y": en.y}
    if isinstance(key, ed25519.Ed25519PublicKey):
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        return _b64(key.public_bytes(Encoding.Raw, PublicFormat.Raw))
    if isinstance(key, dsa.DSAPublicKey):
        dn = key.public_numbers()
        p = dn.parameter_numbers
        return {"P": p.p, "Q": p.q, "G": p.g, "Y": dn.y}
    return None


def public_key_algorithm(key: Any) -> int:
    if isinstance(key, rsa.RSAPublicKey):
        return 1
    if isinstance(key, dsa.DSAPublicKey):
        return 2
    if isinstance(key, ec.EllipticCurvePublicKey):
        return 3
    if isinstance(key, ed25519.Ed25519PublicKey):
        return 4
    return 0


def private_key_json(key: Any) -> Any:
    """Go's JSON of a private key (``crypto.parse_private_keys``)."""
    if isinstance(key, rsa.RSAPrivateKey):
        n = key.private_numbers()
        pub = n.public_numbers
        return {
            "N": pub.n,
            "E": pub.e,
            "D": n.d,
            "Primes": [n.p, n.q],
            "Precomputed": {"Dp": n.dmp1, "Dq": n.dmq1, "Qinv": n.iqmp, "CRTValues": []},
        }
    if isinstance(key, ec.EllipticCurvePrivateKey):
        en = key.private_numbers()
        return {"Curve": {}, "X": en.public_numbers.x, "Y": en.public_numbers.y, "D": en.private_value}
    if isinstance(key, ed25519.Ed25519PrivateKey):
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

        seed = key.private_bytes_raw()
        raw_pub = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        return _b64(seed + raw_pub)
    if isinstance(key, x25519.X25519PrivateKey | x448.X448PrivateKey | ed448.Ed448PrivateKey):
        return {}
    return None


def _url_json(text: str) -> dict[str, Any]:
    """Go's ``url.URL`` struct as JSON (for the ``URIs`` field)."""
    parts = urlsplit(text)
    user: Any = None
    host = parts.netloc
    if "@" in host:
        user = {}
        host = host.rsplit("@", 1)[1]
    path = unquote(parts.path)
    opaque = ""
    if parts.scheme and not text[len(parts.scheme) + 1 :].startswith("/") and not parts.netloc:
        opaque, path = parts.path, ""
    return {
        "Scheme": parts.scheme,
        "Opaque": opaque,
        "User": user,
        "Host": host,
        "Path": path,
        "RawPath": "" if unquote(parts.path) == parts.path or path == "" else parts.path,
        "OmitHost": False,
        "ForceQuery": text.endswith("?") and not parts.query,
        "RawQuery": parts.query,
        "Fragment": unquote(parts.fragment),
        "RawFragment": "",
    }


def _ip_net_json(net: ipaddress.IPv4Network | ipaddress.IPv6Network) -> dict[str, Any]:
    return {"IP": str(net.network_address), "Mask": _b64(net.netmask.packed)}


def certificate_json(cert: x509.Certificate, *, uri_strings: bool = True) -> dict[str, Any]:
    """Go's ``x509.Certificate`` (plus OPA's ``URIStrings``) as a JSON-like dict."""
    from cryptography.hazmat.primitives.serialization import Encoding

    der = cert.public_bytes(Encoding.DER)
    raw = _RawCert(der)
    try:
        pub = cert.public_key()
    except (ValueError, UnsupportedAlgorithm):
        pub = None
    hash_alg = cert.signature_hash_algorithm if _has_hash(cert) else None
    out: dict[str, Any] = {
        "Raw": _b64(der),
        "RawTBSCertificate": _b64(raw.tbs),
        "RawSubjectPublicKeyInfo": _b64(raw.spki),
        "RawSubject": _b64(raw.subject),
        "RawIssuer": _b64(raw.issuer),
        "Signature": _b64(cert.signature),
        "SignatureAlgorithm": _signature_algorithm(
            cert.signature_algorithm_oid.dotted_string, hash_alg.name if hash_alg else None
        ),
        "PublicKeyAlgorithm": public_key_algorithm(pub),
        "PublicKey": public_key_json(pub),
        "Version": cert.version.value + 1,
        "SerialNumber": cert.serial_number,
        "Issuer": pkix_name(cert.issuer),
        "Subject": pkix_name(cert.subject),
        "NotBefore": go_time(cert.not_valid_before_utc),
        "NotAfter": go_time(cert.not_valid_after_utc),
        "KeyUsage": 0,
        "Extensions": None,
        "ExtraExtensions": None,
        "UnhandledCriticalExtensions": None,
        "ExtKeyUsage": None,
        "UnknownExtKeyUsage": None,
        "BasicConstraintsValid": False,
        "IsCA": False,
        "MaxPathLen": 0,
        "MaxPathLenZero": False,
        "SubjectKeyId": None,
        "AuthorityKeyId": None,
        "OCSPServer": None,
        "IssuingCertificateURL": None,
        "DNSNames": None,
        "EmailAddresses": None,
        "IPAddresses": None,
        "URIs": None,
        "PermittedDNSDomainsCritical": False,
        "PermittedDNSDomains": None,
        "ExcludedDNSDomains": None,
        "PermittedIPRanges": None,
        "ExcludedIPRanges": None,
        "PermittedEmailAddresses": None,
        "ExcludedEmailAddresses": None,
        "PermittedURIDomains": None,
        "ExcludedURIDomains": None,
        "CRLDistributionPoints": None,
        "PolicyIdentifiers": None,
        "Policies": None,
        "InhibitAnyPolicy": 0,
        "InhibitAnyPolicyZero": False,
        "InhibitPolicyMapping": 0,
        "InhibitPolicyMappingZero": False,
        "RequireExplicitPolicy": 0,
        "RequireExplicitPolicyZero": False,
        "PolicyMappings": None,
    }
    if raw.extensions:
        out["Extensions"] = [{"Id": oid, "Critical": crit, "Value": _b64(val)} for oid, crit, val in raw.extensions]
    _apply_extensions(cert, out)
    if uri_strings:
        uris = out["URIs"]
        out["URIStrings"] = None if uris is None else [_uri_text(u) for u in _san_uris(cert)]
    return out


def _has_hash(cert: x509.Certificate) -> bool:
    try:
        return cert.signature_hash_algorithm is not None
    except UnsupportedAlgorithm:
        return False


def _san_uris(cert: x509.Certificate) -> list[str]:
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return []
    return list(san.get_values_for_type(x509.UniformResourceIdentifier))


def _uri_text(u: str) -> str:
    return u


_HANDLED = {
    ExtensionOID.KEY_USAGE,
    ExtensionOID.EXTENDED_KEY_USAGE,
    ExtensionOID.BASIC_CONSTRAINTS,
    ExtensionOID.SUBJECT_KEY_IDENTIFIER,
    ExtensionOID.AUTHORITY_KEY_IDENTIFIER,
    ExtensionOID.AUTHORITY_INFORMATION_ACCESS,
    ExtensionOID.SUBJECT_ALTERNATIVE_NAME,
    ExtensionOID.NAME_CONSTRAINTS,
    ExtensionOID.CRL_DISTRIBUTION_POINTS,
    ExtensionOID.CERTIFICATE_POLICIES,
    ExtensionOID.INHIBIT_ANY_POLICY,
    ExtensionOID.POLICY_CONSTRAINTS,
    ExtensionOID.POLICY_MAPPINGS,
}


def _apply_extensions(cert: x509.Certificate | x509.CertificateSigningRequest, out: dict[str, Any]) -> None:
    try:
        exts = list(cert.extensions)
    except (ValueError, x509.DuplicateExtension):
        return
    unhandled: list[list[int]] = []
    for ext in exts:
        v = ext.value
        oid = ext.oid
        if oid not in _HANDLED and ext.critical:
            unhandled.append(_oid_ints(oid.dotted_string))
        if isinstance(v, x509.KeyUsage):
            bits = [
                v.digital_signature,
                v.content_commitment,
                v.key_encipherment,
                v.data_encipherment,
                v.key_agreement,
                v.key_cert_sign,
                v.crl_sign,
                v.key_agreement and v.encipher_only,
                v.key_agreement and v.decipher_only,
            ]
            out["KeyUsage"] = sum(1 << i for i, b in enumerate(bits) if b)
        elif isinstance(v, x509.ExtendedKeyUsage):
            known = []
            unknown = []
            for u in v:
                if u.dotted_string in EXT_KEY_USAGES:
                    known.append(EXT_KEY_USAGES[u.dotted_string])
                else:
                    unknown.append(_oid_ints(u.dotted_string))
            out["ExtKeyUsage"] = known or None
            out["UnknownExtKeyUsage"] = unknown or None
        elif isinstance(v, x509.BasicConstraints):
            out["BasicConstraintsValid"] = True
            out["IsCA"] = v.ca
            out["MaxPathLen"] = -1 if v.path_length is None else v.path_length
            out["MaxPathLenZero"] = v.path_length == 0
        elif isinstance(v, x509.SubjectKeyIdentifier):
            out["SubjectKeyId"] = _b64(v.digest)
        elif isinstance(v, x509.AuthorityKeyIdentifier):
            out["AuthorityKeyId"] = _b64(v.key_identifier)
        elif isinstance(v, x509.AuthorityInformationAccess):
            for desc in v:
                if not isinstance(desc.access_location, x509.UniformResourceIdentifier):
                    continue
                field = {"1.3.6.1.5.5.7.48.1": "OCSPServer", "1.3.6.1.5.5.7.48.2": "IssuingCertificateURL"}.get(
                    desc.access_method.dotted_string
                )
                if field:
                    out[field] = (out[field] or []) + [desc.access_location.value]
        elif isinstance(v, x509.SubjectAlternativeName):
            _apply_san(v, out)
        elif isinstance(v, x509.NameConstraints):
            out["PermittedDNSDomainsCritical"] = ext.critical
            _apply_constraints(v.permitted_subtrees, out, "Permitted")
            _apply_constraints(v.excluded_subtrees, out, "Excluded")
        elif isinstance(v, x509.CRLDistributionPoints):
            for dp in v:
                for gn in dp.full_name or []:
                    if isinstance(gn, x509.UniformResourceIdentifier):
                        out["CRLDistributionPoints"] = (out["CRLDistributionPoints"] or []) + [gn.value]
        elif isinstance(v, x509.CertificatePolicies):
            ids = [p.policy_identifier.dotted_string for p in v]
            out["PolicyIdentifiers"] = [_oid_ints(i) for i in ids] or None
            out["Policies"] = ids or None
        elif isinstance(v, x509.InhibitAnyPolicy):
            out["InhibitAnyPolicy"] = v.skip_certs
            out["InhibitAnyPolicyZero"] = v.skip_certs == 0
        elif isinstance(v, x509.PolicyConstraints):
            if v.inhibit_policy_mapping is not None:
                out["InhibitPolicyMapping"] = v.inhibit_policy_mapping
                out["InhibitPolicyMappingZero"] = v.inhibit_policy_mapping == 0
            if v.require_explicit_policy is not None:
                out["RequireExplicitPolicy"] = v.require_explicit_policy
                out["RequireExplicitPolicyZero"] = v.require_explicit_policy == 0
    if unhandled:
        out["UnhandledCriticalExtensions"] = unhandled


def _apply_san(v: x509.SubjectAlternativeName, out: dict[str, Any]) -> None:
    dns = v.get_values_for_type(x509.DNSName)
    emails = v.get_values_for_type(x509.RFC822Name)
    ips = v.get_values_for_type(x509.IPAddress)
    uris = v.get_values_for_type(x509.UniformResourceIdentifier)
    out["DNSNames"] = list(dns) or None
    out["EmailAddresses"] = list(emails) or None
    out["IPAddresses"] = [str(ip) for ip in ips] or None
    out["URIs"] = [_url_json(u) for u in uris] or None


def _apply_constraints(trees: Any, out: dict[str, Any], prefix: str) -> None:
    for gn in trees or []:
        if isinstance(gn, x509.DNSName):
            key = prefix + "DNSDomains"
            out[key] = (out[key] or []) + [gn.value]
        elif isinstance(gn, x509.IPAddress):
            key = prefix + "IPRanges"
            out[key] = (out[key] or []) + [_ip_net_json(gn.value)]  # type: ignore[arg-type,operator]
        elif isinstance(gn, x509.RFC822Name):
            key = prefix + "EmailAddresses"
            out[key] = (out[key] or []) + [gn.value]
        elif isinstance(gn, x509.UniformResourceIdentifier):
            key = prefix + "URIDomains"
            out[key] = (out[key] or []) + [gn.value]


def csr_json(csr: x509.CertificateSigningRequest) -> dict[str, Any]:
    """Go's ``x509.CertificateRequest`` as JSON."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    der = csr.public_bytes(Encoding.DER)
    _, _, cs, ce = _tlv(der, 0)
    info = _children(der, cs, ce)[0]
    fields = _children(der, info[2], info[3])
    subject = fields[1]
    try:
        pub = csr.public_key()
        spki = pub.public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    except (ValueError, UnsupportedAlgorithm):
        pub = None
        spki_t = fields[2]
        spki = der[spki_t[1] : spki_t[3]]
    try:
        hash_alg = csr.signature_hash_algorithm
    except UnsupportedAlgorithm:
        hash_alg = None
    out: dict[str, Any] = {
        "Raw": _b64(der),
        "RawTBSCertificateRequest": _b64(der[info[1] : info[3]]),
        "RawSubjectPublicKeyInfo": _b64(spki),
        "RawSubject": _b64(der[subject[1] : subject[3]]),
        "Version": 0,
        "Signature": _b64(csr.signature),
        "SignatureAlgorithm": _signature_algorithm(
            csr.signature_algorithm_oid.dotted_string, hash_alg.name if hash_alg else None
        ),
        "PublicKeyAlgorithm": public_key_algorithm(pub),
        "PublicKey": public_key_json(pub),
        "Subject": pkix_name(csr.subject),
        "Attributes": None,
        "Extensions": None,
        "ExtraExtensions": None,
        "DNSNames": None,
        "EmailAddresses": None,
        "IPAddresses": None,
        "URIs": None,
    }
    if len(fields) > 3 and fields[3][0] == 0xA0:
        out["Attributes"] = _csr_attributes(der, fields[3]) or None
    try:
        exts = list(csr.extensions)
    except (ValueError, x509.DuplicateExtension):
        exts = []
    if exts:
        out["Extensions"] = [
            {"Id": _oid_ints(e.oid.dotted_string), "Critical": e.critical, "Value": _b64(_ext_der(e))} for e in exts
        ]
        for e in exts:
            if isinstance(e.value, x509.SubjectAlternativeName):
                _apply_san(e.value, out)
    return out


def _asn1_any(der: bytes, item: tuple[int, int, int, int]) -> Any:
    """Go's asn1.Unmarshal into ``any`` for the simple types a CSR attribute holds."""
    tag, _, start, end = item
    body = der[start:end]
    if tag == 0x01:
        return body != b"\x00"
    if tag == 0x02:
        return int.from_bytes(body, "big", signed=True)
    if tag == 0x04:
        return _b64(body)
    if tag == 0x06:
        return _decode_oid(body)
    if tag in (0x0C, 0x13, 0x16, 0x14, 0x1E, 0x12):
        return body.decode("utf-8", "replace") if tag != 0x1E else body.decode("utf-16-be", "replace")
    raise ValueError("unsupported")


def _csr_attributes(der: bytes, attrs: tuple[int, int, int, int]) -> list[dict[str, Any]]:
    """CSR attributes that parse as Go's pkix.AttributeTypeAndValueSET (others are skipped)."""
    out = []
    for attr in _children(der, attrs[2], attrs[3]):
        try:
            parts = _children(der, attr[2], attr[3])
            if len(parts) != 2 or parts[0][0] != 0x06 or parts[1][0] != 0x31:
                continue
            values = []
            for seq in _children(der, parts[1][2], parts[1][3]):
                if seq[0] != 0x30:
                    raise ValueError("not a sequence")
                inner = []
                for atv in _children(der, seq[2], seq[3]):
                    items = _children(der, atv[2], atv[3])
                    if atv[0] != 0x30 or len(items) < 2 or items[0][0] != 0x06:
                        raise ValueError("not an attribute")
                    inner.append(
                        {"Type": _decode_oid(der[items[0][2] : items[0][3]]), "Value": _asn1_any(der, items[1])}
                    )
                values.append(inner)
            out.append({"Type": _decode_oid(der[parts[0][2] : parts[0][3]]), "Value": values})
        except ValueError:
            continue
    return out


def _ext_der(ext: x509.Extension[Any]) -> bytes:
    try:
        return ext.value.public_bytes()
    except (NotImplementedError, AttributeError):
        return b""
