"""Policy decisions in a Django project: a middleware and a view decorator.

Settings:

- ``PYREGO_ENGINE``: the engine: an :class:`~pyrego.Engine`, an engine
  source (a callable returning the engine in use, e.g. a
  :class:`~pyrego.integrations.reload.PolicyDirectory`), or the dotted path
  of either (``"myproject.policy.engine"``); or, instead,
- ``PYREGO_POLICY_DIR``: a folder of policies and data, loaded once into a
  :class:`~pyrego.integrations.reload.PolicyDirectory` (:func:`reload_policies`
  loads it again);
- ``PYREGO_DECISION``: the middleware's decision (``"data.httpapi.authz.allow"``);
- ``PYREGO_EXEMPT_PATHS``: paths the middleware does not check (exact, or
  prefixes ending with ``/``);
- ``PYREGO_IDENTIFY``: ``identify(token)`` for ``input.identity`` (a callable
  or its dotted path);
- ``PYREGO_EXTEND_INPUT``: ``extend(request, input)`` returning more input
  (or ``None`` to keep it), a callable or its dotted path;
- ``PYREGO_EXPOSE_ERRORS``: the engine's message in a 500's body (default off).

The input is the request's (:func:`~pyrego.integrations.decisions.request_input`,
on ``request.path_info``, what the URL resolver matches); the decorator adds
the view's URL parameters as ``input.params``. A denial is a 403 with
``{"error": "forbidden", "reasons": [...]}``; a failed evaluation a 500 (fail
closed). The decision allowed is in ``request.policy_decision``.

A REST framework permission class is not provided.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.module_loading import import_string

from pyrego.integrations.decisions import (
    Decision,
    EngineSource,
    ExemptPaths,
    PolicyEvaluationError,
    denied_body,
    error_body,
    evaluate,
    request_input,
)

__all__ = ["Decision", "PolicyMiddleware", "django_input", "get_engine", "policy_required", "reload_policies"]

View = TypeVar("View", bound=Callable[..., Any])

_lock = threading.Lock()
_engines: dict[Any, EngineSource] = {}


def _setting(name: str, default: Any = None) -> Any:
    value = getattr(settings, name, default)
    return import_string(value) if isinstance(value, str) else value


def get_engine() -> EngineSource:
    """The engine source the settings name (made once per setting's value)."""
    engine = getattr(settings, "PYREGO_ENGINE", None)
    folder = getattr(settings, "PYREGO_POLICY_DIR", None)
    key = (engine if isinstance(engine, str) else id(engine), str(folder))
    found = _engines.get(key)
    if found is not None:
        return found
    with _lock:
        found = _engines.get(key)
        if found is None:
            if engine is not None:
                found = import_string(engine) if isinstance(engine, str) else engine
            elif folder is not None:
                from pyrego.integrations.reload import PolicyDirectory

                found = PolicyDirectory(folder)
            else:
                from django.core.exceptions import ImproperlyConfigured

                raise ImproperlyConfigured("set PYREGO_ENGINE or PYREGO_POLICY_DIR for pyrego's policy checks")
            _engines[key] = found
    return found


def reload_policies() -> bool:
    """Load ``PYREGO_POLICY_DIR`` (or a :class:`~pyrego.integrations.reload.PolicyDirectory`
    given as ``PYREGO_ENGINE``) again; returns whether there was one to reload.
    A folder that does not load raises, and the engine in use stays."""
    source = get_engine()
    reload = getattr(source, "reload", None)
    if reload is None:
        return False
    reload()
    return True


def django_input(request: HttpRequest, params: dict[str, Any] | None = None) -> dict[str, Any]:
    """The input document of ``request``, with ``params`` (a view's URL
    parameters) when given; ``PYREGO_IDENTIFY`` and ``PYREGO_EXTEND_INPUT`` applied."""
    doc = request_input(
        request.method or "GET",
        request.path_info,
        request.headers.items(),
        ((k, v) for k, values in request.GET.lists() for v in values),
        identify=_setting("PYREGO_IDENTIFY"),
    )
    if params is not None:
        doc["params"] = params
    extend = _setting("PYREGO_EXTEND_INPUT")
    if extend is not None:
        more = extend(request, doc)
        if more is not None:
            doc = more
    return doc


def _check(request: HttpRequest, engine: EngineSource, decision: str, build: Callable[[], Any]) -> HttpResponse | None:
    """None when allowed (the decision kept in ``request.policy_decision``), else the response."""
    expose = bool(getattr(settings, "PYREGO_EXPOSE_ERRORS", False))
    try:
        found = evaluate(engine, decision, build())
    except PolicyEvaluationError as err:
        return JsonResponse(error_body(err, expose=expose), status=500, json_dumps_params={"ensure_ascii": False})
    except Exception as exc:
        # A failing hook; Django's own refusals (too many fields, bad host) keep their 400.
        from django.core.exceptions import SuspiciousOperation

        if isinstance(exc, SuspiciousOperation):
            raise
        return JsonResponse(error_body(PolicyEvaluationError(decision, exc), expose=expose), status=500)
    if not found.allowed:
        return JsonResponse(denied_body(found), status=403, json_dumps_params={"ensure_ascii": False})
    request.policy_decision = found  # type: ignore[attr-defined]
    return None


class PolicyMiddleware:
    """Checks every request not exempt against ``PYREGO_DECISION`` (synchronous views)."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.decision: str = getattr(settings, "PYREGO_DECISION", "data.httpapi.authz.allow")
        self.exempt = ExemptPaths(getattr(settings, "PYREGO_EXEMPT_PATHS", ()))

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not (self.exempt and self.exempt(request.path_info)):
            refused = _check(request, get_engine(), self.decision, lambda: django_input(request))
            if refused is not None:
                return refused
        return self.get_response(request)


def policy_required(decision: str, *, engine: EngineSource | None = None) -> Callable[[View], View]:
    """A view decorator: the view runs only when ``decision`` allows the request.

    The input is :func:`django_input`'s with the view's URL parameters in
    ``params``. ``engine``: the engine source (default: the settings')."""

    def wrap(view: View) -> View:
        @functools.wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            def build() -> Any:
                return django_input(request, {**{str(i): a for i, a in enumerate(args)}, **kwargs})

            refused = _check(request, engine if engine is not None else get_engine(), decision, build)
            if refused is not None:
                return refused
            return view(request, *args, **kwargs)

        return checked  # type: ignore[return-value]

    return wrap

