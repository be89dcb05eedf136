"""Posting a batch to the decision log service, and OPA's retry delays.

httpx is imported when the first upload is made, never with the package.
"""

from __future__ import annotations

import random
from typing import Any

from pyrego.plugins.logs.config import ServiceConfig
from pyrego.version import __version__

#: The least delay after a failed upload (OPA's ``minRetryDelay``).
MIN_RETRY_DELAY_SECONDS = 0.1


class UploadError(Exception):
    """A failed upload: ``http_code`` is the service's status, ``None`` when no answer came."""

    def __init__(self, message: str, http_code: int | None = None) -> None:
        super().__init__(message)
        self.http_code = http_code


def retry_delay(retries: int, max_delay: float, *, base: float = MIN_RETRY_DELAY_SECONDS) -> float:
    """OPA's ``util.DefaultBackoff``: ``base`` times 1.6 per retry, at most
    ``max_delay``, with 20% jitter either way (no jitter on the first retry)."""
    if retries <= 0:
        return base
    delay = base
    while delay < max_delay and retries > 0:
        delay *= 1.6
        retries -= 1
    delay = min(delay, max_delay)
    delay *= 1 + 0.2 * (random.random() * 2 - 1)
    return max(0.0, delay)


_STATUS_TEXT = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    413: "Request Entity Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class Uploader:
    """POSTs gzip batches to ``service.url + resource`` with an httpx client made on first use."""

    def __init__(self, service: ServiceConfig, resource: str) -> None:
        self.service = service
        self.url = service.url + "/" + resource.lstrip("/")
        self._client: Any = None

    def post(self, body: bytes, timeout: float | None = None) -> None:
        """Upload one batch; :class:`UploadError` unless the service answers 2xx.
        ``timeout``: seconds for this request (default: the service's)."""
        import httpx

        if self._client is None:
            self._client = httpx.Client(
                timeout=self.service.timeout_seconds, verify=not self.service.allow_insecure_tls
            )
        headers = dict(self.service.headers)
        headers["Content-Type"] = "application/json"
        headers["Content-Encoding"] = "gzip"
        headers.setdefault("User-Agent", f"pyrego/{__version__}")
        try:
            auth = self.service.authorization()
        except OSError as err:
            raise UploadError(f"log upload failed: reading the bearer token: {err}") from None
        if auth is not None:
            headers["Authorization"] = auth
        try:
            if timeout is None:
                response = self._client.post(self.url, content=body, headers=headers)
            else:
                response = self._client.post(self.url, content=body, headers=headers, timeout=max(0.01, timeout))
        except httpx.HTTPError as err:
            raise UploadError(f"log upload failed: {err}") from None
        code = response.status_code
        if code < 200 or code >= 300:
            raise UploadError(
                f"log upload failed, server replied with HTTP {code} {_STATUS_TEXT.get(code, '')}".rstrip(), code
            )

    def close(self) -> None:
        """Close the HTTP client's connections."""
        if self._client is not None:
            self._client.close()
            self._client = None
