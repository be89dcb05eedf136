"""Policy decisions in a Django project: a middleware and a view decorator.

Settings:

- ``PYREGO_ENGINE``: the engine: an :class:`~pyrego.Engine`, a
  :class:`~pyrego.integrations.reload.PolicyDirectory`, or a factory called
  once (with no arguments) to make either (or any callable returning the
  engine in use), or the dotted path of one of these
  (``"myproject.policy.make_engine"``); or, instead,
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

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
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
                found = _engine_source(import_string(engine) if isinstance(engine, str) else engine)
            elif folder is not None:
                from pyrego.integrations.reload import PolicyDirectory

                found = PolicyDirectory(folder)
            else:
                from django.core.exceptions import ImproperlyConfigured

                raise ImproperlyConfigured("set PYREGO_ENGINE or PYREGO_POLICY_DIR for pyrego's policy checks")
            _engines[key] = found
    return found


def _engine_source(value: Any) -> EngineSource:
    """``PYREGO_ENGINE``'s value as an engine source (a factory called now)."""
    from pyrego.engine import Engine
    from pyrego.integrations.reload import PolicyDirectory

    if isinstance(value, (Engine, PolicyDirectory)):
        return value
    made = value() if callable(value) else None
    if isinstance(made, Engine) or callable(made):
        return made  # type: ignore[no-any-return]
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured(f"PYREGO_ENGINE: not an engine, a PolicyDirectory or a factory of one: {value!r}")


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


def _check(request: HttpRequest, engine: EngineSource | None, decision: str, build: Callable[[], Any]) -> HttpResponse | None:
    """None when allowed (the decision kept in ``request.policy_decision``), else the
    response. ``engine`` None: the settings' (loaded now if not yet: a failure is a 500)."""
    expose = bool(getattr(settings, "PYREGO_EXPOSE_ERRORS", False))
    try:
        found = evaluate(engine if engine is not None else get_engine(), decision, build())
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
    """Checks every request not exempt against ``PYREGO_DECISION`` (sync and async
    stacks alike: the evaluation runs inline, it takes microseconds)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.decision: str = getattr(settings, "PYREGO_DECISION", "data.httpapi.authz.allow")
        self.exempt = ExemptPaths(getattr(settings, "PYREGO_EXEMPT_PATHS", ()))
        get_engine()  # the policies loaded (and checked) at start-up
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        refused = self._refused(request)
        if refused is not None:
            return refused
        return self.get_response(request)

    async def _acall(self, request: HttpRequest) -> Any:
        refused = self._refused(request)
        if refused is not None:
            return refused
        return await self.get_response(request)

    def _refused(self, request: HttpRequest) -> HttpResponse | None:
        if self.exempt and self.exempt(request.path_info):
            return None
        return _check(request, None, self.decision, lambda: django_input(request))


def policy_required(decision: str, *, engine: EngineSource | None = None) -> Callable[[View], View]:
    """A view decorator (plain or ``async`` views): the view runs only when
    ``decision`` allows the request.

    The input is :func:`django_input`'s with the view's URL parameters in
    ``params``. ``engine``: the engine source (default: the settings')."""

    def refused(request: HttpRequest, args: tuple[Any, ...], kwargs: dict[str, Any]) -> HttpResponse | None:
        def build() -> Any:
            return django_input(request, {**{str(i): a for i, a in enumerate(args)}, **kwargs})

        return _check(request, engine, decision, build)

    def wrap(view: View) -> View:
        if iscoroutinefunction(view):

            @functools.wraps(view)
            async def checked_async(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
                response = refused(request, args, kwargs)
                return response if response is not None else await view(request, *args, **kwargs)

            return checked_async  # type: ignore[return-value]

        @functools.wraps(view)
        def checked(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            response = refused(request, args, kwargs)
            return response if response is not None else view(request, *args, **kwargs)

        return checked  # type: ignore[return-value]

    return wrap

