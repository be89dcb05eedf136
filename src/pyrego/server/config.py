"""The policy server's configuration: OPA's configuration file, ``--set`` overrides, defaults.

What the server reads from it (OPA's keys):

- ``default_decision``: the decision ``POST /`` answers (default ``/system/main``);
- ``default_authorization_decision``: the decision ``--authorization=basic``
  asks (default ``/system/authz/allow``);
- ``labels``: added to decision events and ``GET /v1/config``;
- ``server.decoding.max_length``: the largest request body in bytes (default
  256 MiB, as OPA).

pyrego's own, under ``server`` too: ``eval_timeout`` (seconds, per
evaluation) and ``max_concurrency`` (evaluations at once).
Other keys (services, bundles, decision_logs, ...) are kept for the plugins
that read them and shown (credentials and keys removed) by ``GET /v1/config``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

DEFAULT_DECISION = "/system/main"
DEFAULT_AUTHORIZATION_DECISION = "/system/authz/allow"
DEFAULT_MAX_LENGTH = 268_435_456


class ConfigError(ValueError):
    """The configuration file or a ``--set`` cannot be read."""


def load_config(path: str | None, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The configuration in the file at ``path`` (YAML or JSON; None: empty) with
    ``overrides`` (``a.b.c=value``, as ``opa run --set``) applied."""
    config: dict[str, Any] = {}
    if path is not None:
        from pyrego.yaml_safe import load_yaml

        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: {exc.strerror or exc}") from None
        try:
            loaded = load_yaml(text) if text.strip() else {}
        except Exception as exc:  # noqa: BLE001 - the YAML reader raises many kinds
            raise ConfigError(f"{path}: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the configuration must be an object")
        config = loaded
    for item in overrides:
        set_value(config, item)
    return config


def set_value(config: dict[str, Any], item: str) -> None:
    """Apply one ``--set a.b=value``: a scalar (``true``, a number, else a string) or ``{a,b}`` list."""
    key, sep, raw = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {item}: key=value expected")
    node = config
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[parts[-1]] = _scalar(raw)


def _scalar(raw: str) -> Any:
    if raw.startswith("{") and raw.endswith("}"):
        return [_scalar(x) for x in raw[1:-1].split(",") if x]
    if raw in ("true", "false"):
        return raw == "true"
    if raw == "null":
        return None
    try:
        return int(raw)
    except ValueError:
        pass
    try:
        return float(raw)
    except ValueError:
        return raw


def decision_path(config: Mapping[str, Any], key: str, default: str) -> list[str]:
    """A decision named in the configuration (``/system/main`` or ``system.main``) as path segments."""
    value = config.get(key) or default
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a string")
    text = value.strip("/")
    sep = "/" if "/" in text or "." not in text else "."
    if text.startswith("data."):
        text = text[5:]
    return [p for p in text.split(sep) if p]


def server_setting(config: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    """``config["server"][keys...]`` (``default`` when any level is missing)."""
    node: Any = config.get("server")
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return default
        node = node[key]
    return node


def active_config(config: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    """What ``GET /v1/config`` shows: the configuration with credentials and keys
    removed, the labels (with the instance's id and version) and the decisions filled in."""
    out = copy.deepcopy(dict(config))
    out.pop("keys", None)
    services = out.get("services")
    if isinstance(services, dict):
        for svc in services.values():
            if isinstance(svc, dict):
                svc.pop("credentials", None)
    elif isinstance(services, list):
        for svc in services:
            if isinstance(svc, dict):
                svc.pop("credentials", None)
    out["labels"] = {**(out.get("labels") or {}), **labels}
    out.setdefault("default_decision", DEFAULT_DECISION)
    out.setdefault("default_authorization_decision", DEFAULT_AUTHORIZATION_DECISION)
    return out
