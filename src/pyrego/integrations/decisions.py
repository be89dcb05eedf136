"""What every service integration shares, whatever its framework.

- :func:`request_input`: the OPA-style input document of an HTTP request
  (``method``, ``path`` as a list of segments, lower-cased ``headers``,
  ``query`` parameters, the bearer ``token`` and an ``identity``).
- :func:`evaluate`: one decision on a shared engine, for one request's input
  (``engine.eval_rule(path, input=...)``: nothing is stored in the engine),
  read as a :class:`Decision`; any failure raises
  :class:`PolicyEvaluationError`, which integrations answer with a 500
  (they fail closed: an error never allows).
- :class:`ExemptPaths`: the request paths that are not checked.

No web framework is imported here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from pyrego.runtime.convert import json_ready
from pyrego.runtime.values import UNDEFINED

if TYPE_CHECKING:
    from pyrego.engine import Engine

__all__ = [
    "Decision",
    "EngineSource",
    "ExemptPaths",
    "Identify",
    "PolicyEvaluationError",
    "current_engine",
    "denied_body",
    "error_body",
    "evaluate",
    "path_segments",
    "request_input",
]

log = logging.getLogger("pyrego.integrations")

#: An engine, or a callable returning the engine to use now (a
#: :class:`~pyrego.integrations.reload.PolicyDirectory`, whose engine a reload
#: replaces): called once per request, so that one request sees one engine.
EngineSource = Union["Engine", Callable[[], "Engine"]]

#: From the bearer token (``None``: no ``Authorization: Bearer`` header) to
#: ``input.identity``; returns ``None`` for no identity.
Identify = Callable[[Union[str, None]], Any]


@dataclass(frozen=True)
class Decision:
    """A policy decision, read from the value of the decision rule.

    ``allowed`` is true only when the value is ``true``, or an object whose
    ``allow`` (or ``allowed``) member is ``true``: an undefined decision,
    ``false``, ``null``, any other value, or an object without that member
    denies. ``value`` is the rule's value as plain JSON-compatible Python
    (``None`` when undefined); ``reasons`` the object's ``reasons``
    (``deny``, ``reason``) member as a list of messages, when it has one."""

    allowed: bool
    value: Any = None
    reasons: list[Any] = field(default_factory=list)
    defined: bool = True

    @classmethod
    def from_value(cls, value: Any) -> Decision:
        """The decision a rule's value (as ``Engine.eval_rule`` returns it) gives."""
        if value is UNDEFINED:
            return cls(False, None, [], defined=False)
        value = json_ready(value)
        if isinstance(value, dict):
            flag = value.get("allow", value.get("allowed"))
            return cls(flag is True, value, _reasons(value))
        return cls(value is True, value, [])


def _reasons(obj: Mapping[str, Any]) -> list[Any]:
    for key in ("reasons", "deny", "reason"):
        if key in obj:
            found = obj[key]
            return list(found) if isinstance(found, list) else [found]
    return []


class PolicyEvaluationError(Exception):
    """The decision could not be made (the engine raised); answered with a 500.

    ``code``: the engine's error code (``eval_conflict_error``, ...), or
    ``internal_error`` for an exception that is not pyrego's."""

    def __init__(self, path: str, cause: BaseException) -> None:
        self.path = path
        self.cause = cause
        self.code: str = getattr(cause, "code", None) or "internal_error"
        super().__init__(f"{path}: {cause}")


def current_engine(source: EngineSource) -> Engine:
    """The engine ``source`` stands for now (itself, or what calling it returns)."""
    return source() if callable(source) else source


def evaluate(source: EngineSource, path: str, input: Any) -> Decision:
    """The decision ``path`` gives for ``input`` on ``source``'s engine.

    Thread-safe: the input is given to this evaluation only
    (``eval_rule(path, input=...)``). Raises :class:`PolicyEvaluationError`
    for whatever goes wrong (a conflict, a builtin error, a time limit, a
    policy that does not compile, an input that is not a Rego value)."""
    try:
        engine = current_engine(source)
        return Decision.from_value(engine.eval_rule(path, input=input))
    except Exception as exc:  # fail closed: every failure is an error, never a decision
        raise PolicyEvaluationError(path, exc) from exc


def path_segments(path: str) -> list[str]:
    """``/finance/salary/alice`` -> ``["finance", "salary", "alice"]``.

    As OPA's HTTP API authorization examples split a URL path: the slashes
    at both ends are trimmed and the rest split on ``/`` (``/`` gives
    ``[""]``, ``/a//b`` gives ``["a", "", "b"]``). ``path`` is the decoded
    path the application routes on, so that the policy sees the segments
    the router sees."""
    return path.strip("/").split("/")


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive)."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def request_input(
    method: str,
    path: str,
    headers: Iterable[tuple[str, str]],
    query: Iterable[tuple[str, str]],
    *,
    identify: Identify | None = None,
) -> dict[str, Any]:
    """The input document of one request.

    ``{"method": "GET", "path": ["finance", "salary", "alice"], "path_string":
    "/finance/salary/alice", "headers": {"authorization": "Bearer ...", ...},
    "query": {"q": ["a", "b"]}, "token": "...", "identity": ...}``.

    Header names are lower-cased; a header sent more than once has its
    values joined with ``", "`` (as HTTP allows). Query parameters keep every
    value, in order, as a list. ``token`` is the bearer token (absent when
    there is none); ``identity`` what ``identify(token)`` returns (absent
    without ``identify`` or when it returns ``None``). The token is not
    checked here: a policy checks it (``io.jwt.decode_verify``) or
    ``identify`` does."""
    hdrs: dict[str, str] = {}
    for name, value in headers:
        name = name.lower()
        hdrs[name] = f"{hdrs[name]}, {value}" if name in hdrs else value
    params: dict[str, list[str]] = {}
    for name, value in query:
        params.setdefault(name, []).append(value)
    doc: dict[str, Any] = {
        "method": method.upper(),
        "path": path_segments(path),
        "path_string": path,
        "headers": hdrs,
        "query": params,
    }
    token = bearer_token(hdrs.get("authorization"))
    if token is not None:
        doc["token"] = token
    if identify is not None:
        identity = identify(token)
        if identity is not None:
            doc["identity"] = identity
    return doc


class ExemptPaths:
    """Request paths that are not checked (health checks, static files).

    Each entry is a path matched exactly (``/healthz``), or, ending with
    ``/``, a prefix (``/static/`` matches ``/static/app.css``, not
    ``/static`` itself nor ``/staticx``); or a callable taking the path and
    returning whether it is exempt."""

    def __init__(self, entries: Iterable[str | Callable[[str], bool]] = ()) -> None:
        self.exact: set[str] = set()
        self.prefixes: tuple[str, ...] = ()
        self.tests: list[Callable[[str], bool]] = []
        prefixes = []
        for entry in entries:
            if callable(entry):
                self.tests.append(entry)
            elif not isinstance(entry, str) or not entry.startswith("/"):
                raise ValueError(f"an exempt path starts with '/': {entry!r}")
            elif entry.endswith("/") and entry != "/":
                prefixes.append(entry)
            else:
                self.exact.add(entry)
        self.prefixes = tuple(prefixes)

    def __call__(self, path: str) -> bool:
        """Whether ``path`` is exempt."""
        if path in self.exact or (self.prefixes and path.startswith(self.prefixes)):
            return True
        return any(test(path) for test in self.tests)

    def __bool__(self) -> bool:
        return bool(self.exact or self.prefixes or self.tests)


def denied_body(decision: Decision) -> dict[str, Any]:
    """The default JSON body of a denial: ``{"error": "forbidden", "reasons": [...]}``."""
    return {"error": "forbidden", "reasons": decision.reasons}


def error_body(err: PolicyEvaluationError, *, expose: bool = False) -> dict[str, Any]:
    """The JSON body of a failed evaluation: ``{"error": "policy evaluation failed",
    "code": ...}``, with the engine's message when ``expose`` (it may show the
    policy's text and the input to the client: off by default). The error is
    logged (logger ``pyrego.integrations``) in full either way."""
    log.error("policy evaluation failed: %s", err, exc_info=err.cause)
    body: dict[str, Any] = {"error": "policy evaluation failed", "code": err.code}
    if expose:
        body["message"] = str(err.cause)
    return body
