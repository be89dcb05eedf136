"""The ``decision_logs`` section of OPA's configuration, checked as OPA checks it.

OPA's defaults: uploads every 300 to 600 seconds, 32 KiB (compressed) per
upload, a buffer of unlimited bytes (``buffer_type: size``) or 10000 events
(``buffer_type: event``), the mask and drop decisions at
``/system/log/mask`` and ``/system/log/drop``, the resource ``/logs``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

DEFAULT_MIN_DELAY_SECONDS = 300.0
DEFAULT_MAX_DELAY_SECONDS = 600.0
DEFAULT_UPLOAD_SIZE_LIMIT_BYTES = 32768
DEFAULT_BUFFER_SIZE_LIMIT_BYTES = 0  # unlimited
DEFAULT_BUFFER_SIZE_LIMIT_EVENTS = 10000
DEFAULT_MASK_DECISION = "/system/log/mask"
DEFAULT_DROP_DECISION = "/system/log/drop"
DEFAULT_RESOURCE = "/logs"


class DecisionLogConfigError(ValueError):
    """An invalid ``decision_logs`` (or ``services``) configuration; the message is OPA's."""


@dataclass(frozen=True)
class ServiceConfig:
    """One entry of OPA's ``services``: where uploads go and how they authenticate.

    Supported keys: ``url``, ``headers``, ``credentials.bearer`` (``token`` or
    ``token_path``, ``scheme``, default ``Bearer``), ``response_header_timeout_seconds``
    (default 10), ``allow_insecure_tls``."""

    name: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    bearer_token: str | None = None
    bearer_token_path: str | None = None
    bearer_scheme: str = "Bearer"
    timeout_seconds: float = 10.0
    allow_insecure_tls: bool = False

    def authorization(self) -> str | None:
        """The ``Authorization`` header's value, reading ``token_path`` each time (tokens rotate)."""
        token = self.bearer_token
        if self.bearer_token_path is not None:
            with open(self.bearer_token_path, encoding="utf-8") as f:
                token = f.read().strip()
        if token is None:
            return None
        return f"{self.bearer_scheme} {token}"


@dataclass(frozen=True)
class DecisionLogConfig:
    """The checked ``decision_logs`` section, defaults filled in as OPA fills them.

    Delays are in seconds; OPA takes whole seconds, fractions are accepted here."""

    service: ServiceConfig | None = None
    console: bool = False
    resource: str = DEFAULT_RESOURCE
    buffer_type: str = "size"
    buffer_size_limit_bytes: int = DEFAULT_BUFFER_SIZE_LIMIT_BYTES
    buffer_size_limit_events: int = DEFAULT_BUFFER_SIZE_LIMIT_EVENTS
    upload_size_limit_bytes: int = DEFAULT_UPLOAD_SIZE_LIMIT_BYTES
    min_delay_seconds: float = DEFAULT_MIN_DELAY_SECONDS
    max_delay_seconds: float = DEFAULT_MAX_DELAY_SECONDS
    max_decisions_per_second: float | None = None
    mask_decision: str = DEFAULT_MASK_DECISION
    drop_decision: str = DEFAULT_DROP_DECISION
    nd_builtin_cache: bool = False
    #: ``request_context.http.headers``: the request headers an event records.
    request_headers: tuple[str, ...] = ()

    @property
    def mask_query(self) -> str:
        """The query of the mask decision (``data["system"]["log"]["mask"]``)."""
        return data_path_query(self.mask_decision)

    @property
    def drop_query(self) -> str:
        """The query of the drop decision."""
        return data_path_query(self.drop_decision)


def data_path_query(path: str) -> str:
    """The query of a slash-separated path under ``data`` (OPA's ``ref.ParseDataPath``):
    every segment a string key, so no text of the path is read as Rego."""
    parts = [p for p in path.strip().lstrip("/").split("/")]
    if parts == [""]:
        return "data"
    if any(p == "" for p in parts):
        raise DecisionLogConfigError(f"invalid path {path!r}: empty segment")
    return "data" + "".join(f"[{json.dumps(p)}]" for p in parts)


def parse_services(services: Any) -> dict[str, ServiceConfig]:
    """OPA's ``services``: a mapping of name to settings, or a list of settings with ``name``."""
    if services is None:
        return {}
    if isinstance(services, list):
        items = []
        for entry in services:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise DecisionLogConfigError("services: a list entry needs a name")
            items.append((entry["name"], entry))
    elif isinstance(services, dict):
        items = list(services.items())
    else:
        raise DecisionLogConfigError("services: expected an object or an array")
    out: dict[str, ServiceConfig] = {}
    for name, cfg in items:
        if not isinstance(cfg, dict):
            raise DecisionLogConfigError(f"services.{name}: expected an object")
        url = cfg.get("url")
        if not isinstance(url, str) or not url:
            raise DecisionLogConfigError(f"services.{name}: missing url")
        if urlsplit(url).scheme not in ("http", "https"):
            raise DecisionLogConfigError(f"services.{name}: url must be http or https: {url!r}")
        creds = cfg.get("credentials") or {}
        bearer = creds.get("bearer") if isinstance(creds, dict) else None
        token = token_path = None
        scheme = "Bearer"
        if isinstance(bearer, dict):
            token = bearer.get("token")
            token_path = bearer.get("token_path")
            scheme = bearer.get("scheme") or "Bearer"
        headers = cfg.get("headers") or {}
        timeout = cfg.get("response_header_timeout_seconds", 10)
        out[str(name)] = ServiceConfig(
            name=str(name),
            url=url.rstrip("/"),
            headers={str(k): str(v) for k, v in headers.items()},
            bearer_token=None if token is None else str(token),
            bearer_token_path=None if token_path is None else str(token_path),
            bearer_scheme=str(scheme),
            timeout_seconds=float(timeout),
            allow_insecure_tls=bool(cfg.get("allow_insecure_tls", False)),
        )
    return out


def _number(reporting: dict[str, Any], key: str) -> float | None:
    value = reporting.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DecisionLogConfigError(f"invalid decision_log config, {key!r} must be a number")
    return float(value)


def parse_config(config: dict[str, Any] | None, services: Any = None) -> DecisionLogConfig | None:
    """Check ``decision_logs`` against ``services`` as OPA does; ``None`` when there is
    nothing to do (no service, no console output), as OPA then starts no plugin.

    As OPA: without ``service`` and without ``console``, the first service is used."""
    if config is None:
        return None
    if not isinstance(config, dict):
        raise DecisionLogConfigError("decision_logs: expected an object")
    svcs = parse_services(services)
    console = bool(config.get("console", False))
    service_name = config.get("service") or ""
    if not service_name and not svcs and not console:
        return None
    if config.get("plugin") is not None:
        raise DecisionLogConfigError(f"invalid plugin name {json.dumps(config['plugin'])} in decision_logs")
    service: ServiceConfig | None = None
    if not service_name and svcs and not console:
        service = next(iter(svcs.values()))
    elif service_name:
        if service_name not in svcs:
            raise DecisionLogConfigError(f"invalid service name {json.dumps(service_name)} in decision_logs")
        service = svcs[service_name]

    reporting = config.get("reporting") or {}
    if not isinstance(reporting, dict):
        raise DecisionLogConfigError("decision_logs.reporting: expected an object")
    lo = _number(reporting, "min_delay_seconds")
    hi = _number(reporting, "max_delay_seconds")
    if lo is not None and hi is not None:
        if hi < lo:
            raise DecisionLogConfigError("max reporting delay must be >= min reporting delay in decision_logs")
    elif lo is not None:
        raise DecisionLogConfigError("reporting configuration missing 'max_delay_seconds' in decision_logs")
    elif hi is not None:
        raise DecisionLogConfigError("reporting configuration missing 'min_delay_seconds' in decision_logs")
    else:
        lo, hi = DEFAULT_MIN_DELAY_SECONDS, DEFAULT_MAX_DELAY_SECONDS

    upload = _number(reporting, "upload_size_limit_bytes")
    buffer_type = reporting.get("buffer_type") or "size"
    if buffer_type not in ("size", "event"):
        raise DecisionLogConfigError(f'invalid buffer type "{buffer_type}", expected "event" or "size"')
    limit_bytes = _number(reporting, "buffer_size_limit_bytes")
    limit_events = _number(reporting, "buffer_size_limit_events")
    rate = _number(reporting, "max_decisions_per_second")
    if buffer_type == "event" and limit_bytes is not None:
        raise DecisionLogConfigError(
            "invalid decision_log config, 'buffer_size_limit_bytes' isn't supported for the event buffer type"
        )
    if buffer_type == "size" and limit_events is not None:
        raise DecisionLogConfigError(
            "invalid decision_log config, 'buffer_size_limit_events' isn't supported for the size buffer type"
        )
    if limit_bytes is not None and rate is not None:
        raise DecisionLogConfigError(
            "invalid decision_log config, specify either 'buffer_size_limit_bytes' or 'max_decisions_per_second'"
        )
    if limit_bytes is not None and limit_bytes <= 0:
        raise DecisionLogConfigError("invalid decision_log config, 'buffer_size_limit_bytes' must be higher than 0")
    if limit_events is not None and limit_events <= 0:
        raise DecisionLogConfigError("invalid decision_log config, 'buffer_size_limit_entries' must be higher than 0")
    if upload is not None and upload <= 0:
        raise DecisionLogConfigError("invalid decision_log config, 'upload_size_limit_bytes' must be higher than 0")

    mask = config.get("mask_decision")
    drop = config.get("drop_decision")
    mask = DEFAULT_MASK_DECISION if mask is None else str(mask)
    drop = DEFAULT_DROP_DECISION if drop is None else str(drop)
    for name, path in (("mask_decision", mask), ("drop_decision", drop)):
        try:
            data_path_query(path)
        except DecisionLogConfigError as err:
            raise DecisionLogConfigError(f"invalid {name} in decision_logs: {err}") from None

    partition = config.get("partition_name") or ""
    resource = config.get("resource")
    if partition:
        resource = f"/logs/{partition}"
    elif resource is None:
        resource = DEFAULT_RESOURCE
    resource = str(resource)

    return DecisionLogConfig(
        service=service,
        console=console,
        resource=resource,
        buffer_type=buffer_type,
        buffer_size_limit_bytes=int(limit_bytes) if limit_bytes is not None else DEFAULT_BUFFER_SIZE_LIMIT_BYTES,
        buffer_size_limit_events=int(limit_events) if limit_events is not None else DEFAULT_BUFFER_SIZE_LIMIT_EVENTS,
        upload_size_limit_bytes=int(upload) if upload is not None else DEFAULT_UPLOAD_SIZE_LIMIT_BYTES,
        min_delay_seconds=lo,
        max_delay_seconds=hi,
        max_decisions_per_second=rate,
        mask_decision=mask,
        drop_decision=drop,
        nd_builtin_cache=bool(config.get("nd_builtin_cache", False)),
        request_headers=_request_headers(config.get("request_context")),
    )


def _request_headers(rctx: Any) -> tuple[str, ...]:
    """``request_context.http.headers``: the header names events record."""
    if rctx is None:
        return ()
    http = rctx.get("http") if isinstance(rctx, dict) else None
    headers = http.get("headers") if isinstance(http, dict) else None
    if headers is None:
        headers = []
    if not isinstance(headers, list) or not all(isinstance(h, str) for h in headers):
        raise DecisionLogConfigError("decision_logs.request_context.http.headers: expected an array of strings")
    return tuple(headers)
