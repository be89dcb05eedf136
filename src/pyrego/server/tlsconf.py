"""TLS of the policy server, as ``opa run --server`` sets it up.

- :class:`TLSSettings`: the certificate and key, the CA file client
  certificates are verified against (``--tls-ca-cert-file``), whether client
  certificates are required (``--authentication=tls``), the lowest TLS
  version (``--min-tls-version``, OPA's default 1.2) and the TLS 1.0–1.2
  cipher suites (``--tls-cipher-suites``, IANA names as Go's ``crypto/tls``
  knows them); :meth:`TLSSettings.context` builds the ``ssl.SSLContext``.
- :class:`ReloadingContext`: the certificate, key and CA files read again
  when they change (``--tls-cert-refresh-period``), as OPA does.
- :func:`subject_identity`: a client certificate's subject as OPA writes
  ``input.identity`` (Go's ``Name.ToRDNSequence().String()``), which
  :mod:`pyrego.server.tlsproto` puts in each request's scope.

Limits of Python's ``ssl`` (OpenSSL): TLS 1.3 cipher suites cannot be chosen
(Go cannot either: OPA refuses them); the RC4 and 3DES suites Go lists as
insecure are not in OpenSSL 3's default provider and are refused here; TLS
1.0 and 1.1 need OpenSSL's security level 0, which this module sets only when
``--min-tls-version`` asks for them.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass, field


class TLSConfigError(ValueError):
    """A TLS flag cannot be honoured (unknown version or suite, unreadable file)."""


#: ``--min-tls-version`` values, as OPA's flag takes them.
TLS_VERSIONS = {
    "1.0": ssl.TLSVersion.TLSv1,
    "1.1": ssl.TLSVersion.TLSv1_1,
    "1.2": ssl.TLSVersion.TLSv1_2,
    "1.3": ssl.TLSVersion.TLSv1_3,
}

#: Go's TLS 1.0–1.2 cipher suites (``tls.CipherSuites()`` and ``tls.InsecureCipherSuites()``)
#: by IANA name, with OpenSSL's name of the same suite.
CIPHER_SUITES = {
    "TLS_RSA_WITH_AES_128_CBC_SHA": "AES128-SHA",
    "TLS_RSA_WITH_AES_256_CBC_SHA": "AES256-SHA",
    "TLS_RSA_WITH_AES_128_GCM_SHA256": "AES128-GCM-SHA256",
    "TLS_RSA_WITH_AES_256_GCM_SHA384": "AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA": "ECDHE-ECDSA-AES128-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA": "ECDHE-ECDSA-AES256-SHA",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA": "ECDHE-RSA-AES128-SHA",
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA": "ECDHE-RSA-AES256-SHA",
    "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256": "ECDHE-ECDSA-AES128-GCM-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": "ECDHE-ECDSA-AES256-GCM-SHA384",
    "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256": "ECDHE-RSA-AES128-GCM-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": "ECDHE-RSA-AES256-GCM-SHA384",
    "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-ECDSA-CHACHA20-POLY1305",
    "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256": "ECDHE-RSA-CHACHA20-POLY1305",
    # (Go's insecure ones)
    "TLS_RSA_WITH_AES_128_CBC_SHA256": "AES128-SHA256",
    "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256": "ECDHE-ECDSA-AES128-SHA256",
    "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256": "ECDHE-RSA-AES128-SHA256",
    "TLS_RSA_WITH_3DES_EDE_CBC_SHA": "DES-CBC3-SHA",
    "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA": "ECDHE-RSA-DES-CBC3-SHA",
    "TLS_RSA_WITH_RC4_128_SHA": "RC4-SHA",
    "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA": "ECDHE-ECDSA-RC4-SHA",
    "TLS_ECDHE_RSA_WITH_RC4_128_SHA": "ECDHE-RSA-RC4-SHA",
}

#: Go's TLS 1.3 suites: known names, but not configurable.
TLS13_SUITES = ("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256")


@dataclass
class TLSSettings:
    """The server's TLS flags (``opa run --tls-*``, ``--authentication=tls``, ``--min-tls-version``)."""

    cert_file: str
    key_file: str
    ca_cert_file: str | None = None
    client_certificates: bool = False
    min_version: str = "1.2"
    cipher_suites: list[str] = field(default_factory=list)
    refresh_period: float = 0.0  # (seconds between checks of the files; 0: every second)

    def check(self) -> None:
        """Raise :class:`TLSConfigError` for a flag that cannot be honoured (before anything is served)."""
        self.context()

    def context(self) -> ssl.SSLContext:
        """The server's ``ssl.SSLContext``."""
        if self.min_version not in TLS_VERSIONS:
            raise TLSConfigError(f"--min-tls-version {self.min_version}: one of 1.0, 1.1, 1.2, 1.3 expected")
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as exc:
            raise TLSConfigError(f"tls: {self.cert_file}, {self.key_file}: {exc}") from None
        if self.min_version in ("1.0", "1.1"):
            # (OpenSSL 3 refuses TLS 1.0 and 1.1 above security level 0)
            ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
        ctx.minimum_version = TLS_VERSIONS[self.min_version]
        if self.cipher_suites:
            ctx.set_ciphers(":".join(openssl_ciphers(self.cipher_suites)) + (":@SECLEVEL=0" if self.min_version in ("1.0", "1.1") else ""))
        if self.client_certificates:
            ctx.verify_mode = ssl.CERT_REQUIRED
            if self.ca_cert_file:
                try:
                    ctx.load_verify_locations(cafile=self.ca_cert_file)
                except (OSError, ssl.SSLError) as exc:
                    raise TLSConfigError(f"failed to parse CA cert {self.ca_cert_file!r}: {exc}") from None
            else:
                ctx.load_default_certs(ssl.Purpose.CLIENT_AUTH)  # (Go verifies against the system's roots then)
        elif self.ca_cert_file:
            _read_ca(self.ca_cert_file)
        return ctx


def _read_ca(path: str) -> None:
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as exc:
        raise TLSConfigError(f"read CA cert file: {exc.strerror or exc}") from None
    if b"-----BEGIN CERTIFICATE-----" not in text:
        raise TLSConfigError(f"failed to parse CA cert {path!r}")


def openssl_ciphers(names: Sequence[str]) -> list[str]:
    """OpenSSL's names of the IANA-named TLS 1.0–1.2 cipher suites ``names`` (as ``--tls-cipher-suites`` takes them)."""
    out = []
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    for name in names:
        if name in TLS13_SUITES:
            raise TLSConfigError(f'TLS 1.3 cipher suite "{name}" is not configurable')
        openssl = CIPHER_SUITES.get(name)
        if openssl is None:
            raise TLSConfigError(f"invalid cipher suite {name}")
        try:
            probe.set_ciphers(openssl + ":@SECLEVEL=0")
        except ssl.SSLError:
            raise TLSConfigError(f"cipher suite {name} is not available in this OpenSSL ({ssl.OPENSSL_VERSION})") from None
        out.append(openssl)
    return out


#: The subject attributes Go's ``pkix.Name`` keeps, in the order ``ToRDNSequence`` writes them
#: (``String`` then writes the sequence backwards).
_NAME_FIELDS = (
    ("2.5.4.6", "C"),
    ("2.5.4.8", "ST"),
    ("2.5.4.7", "L"),
    ("2.5.4.9", "STREET"),
    ("2.5.4.17", "POSTALCODE"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.3", "CN"),
    ("2.5.4.5", "SERIALNUMBER"),
)
_SINGLE = ("2.5.4.3", "2.5.4.5")  # (Go keeps the last common name and serial number only)


def subject_identity(der: bytes) -> str:
    """The subject of the DER certificate ``der`` as OPA's TLS authentication sets ``input.identity``:
    Go's ``Subject.ToRDNSequence().String()`` (``CN=client,O=Example``; other attributes dropped)."""
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    values: dict[str, list[str]] = {}
    for attr in cert.subject:
        if isinstance(attr.value, str):
            oid = attr.oid.dotted_string
            if oid in _SINGLE:
                values[oid] = [attr.value]
            else:
                values.setdefault(oid, []).append(attr.value)
    rdns = []
    for oid, name in _NAME_FIELDS:
        vals = [v for v in values.get(oid, []) if v or oid not in _SINGLE]
        if vals:
            rdns.append("+".join(f"{name}={_escape(v)}" for v in vals))
    return ",".join(reversed(rdns))


def _escape(value: str) -> str:
    out = []
    last = len(value) - 1
    for i, c in enumerate(value):
        if c in ',+"\\<>;' or (c == " " and (i == 0 or i == last)) or (c == "#" and i == 0):
            out.append("\\")
        out.append(c)
    return "".join(out)


def parse_duration(text: str) -> float:
    """Seconds of a Go duration (``--tls-cert-refresh-period 30s``, ``1m30s``, ``500ms``; ``0``: none)."""
    import re

    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    if text in ("0", ""):
        return 0.0
    parts = re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text)
    if text.replace(".", "", 1).isdigit():
        raise TLSConfigError(f'invalid argument "{text}" for "--tls-cert-refresh-period" flag: time: missing unit in duration "{text}"')
    if not parts or "".join(n + u for n, u in parts) != text:
        raise TLSConfigError(f'invalid argument "{text}" for "--tls-cert-refresh-period" flag: time: invalid duration "{text}"')
    return sum(float(n) * units[u] for n, u in parts)


class ReloadingContext:
    """The server's TLS context, with the certificate, key and CA files read again when they change
    (as OPA watches them): :attr:`context` is given to the listeners once; each handshake is
    switched (in OpenSSL's server-name callback, called for every client hello) to the context
    built from the files' latest readable contents. :meth:`start` checks the files every
    ``period`` seconds on a daemon thread. A file that cannot be read or a key that does not
    match leaves the previous context serving (logged)."""

    def __init__(self, settings: TLSSettings) -> None:
        self.settings = settings
        self.digest = self._digest()
        self.context = settings.context()
        self.current = self.context
        self.context.sni_callback = self._switch

    def _switch(self, ssl_object: ssl.SSLObject, server_name: str | None, ctx: ssl.SSLContext) -> None:
        current = self.current
        if current is not ctx:
            ssl_object.context = current

    def _digest(self) -> bytes:
        import hashlib

        h = hashlib.sha256()
        for path in (self.settings.cert_file, self.settings.key_file, self.settings.ca_cert_file):
            if path:
                try:
                    with open(path, "rb") as f:
                        h.update(f.read())
                except OSError:
                    h.update(b"\0unreadable")
            h.update(b"\0")
        return h.digest()

    def check(self) -> bool:
        """Read the files again if they changed; True when a new context now serves."""
        import logging

        digest = self._digest()
        if digest == self.digest:
            return False
        self.digest = digest
        try:
            self.current = self.settings.context()
        except TLSConfigError as exc:
            logging.getLogger("pyrego.server").error("TLS files changed but cannot be used, the previous ones still serve: %s", exc)
            return False
        logging.getLogger("pyrego.server").info("TLS certificate, key or CA files changed: reloaded")
        return True

    def start(self, period: float = 0.0) -> None:
        """Check the files every ``period`` seconds (0: the settings' ``refresh_period``, else
        every second), on a daemon thread."""
        import threading
        import time

        period = period or self.settings.refresh_period or 1.0

        def loop() -> None:
            while True:
                time.sleep(period)
                self.check()

        threading.Thread(target=loop, name="pyrego-tls-reload", daemon=True).start()
