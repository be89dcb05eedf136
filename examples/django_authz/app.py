"""A one-file Django project whose requests are authorized by Rego policies, in process.

Run it::

    python app.py runserver 8000
    curl -H 'Authorization: Bearer bob-token' localhost:8000/finance/salary/alice   # 200: bob manages alice
    curl -H 'Authorization: Bearer alice-token' localhost:8000/finance/salary/bob   # 403
    curl -H 'Authorization: Bearer dora-token' localhost:8000/reports/payroll       # 403, with the reasons

- Every request but ``/healthz`` goes through
  :class:`pyrego.integrations.django.PolicyMiddleware` (``PYREGO_DECISION``:
  ``data.httpapi.authz.allow``, ``../fastapi_authz/policy/authz.rego``).
- ``/reports/<report_id>`` and ``/whoami`` also have a decision of their own,
  through the view decorator ``@policy_required(...)`` (``../fastapi_authz/policy/reports.rego``).
- The policies and their data (``PYREGO_POLICY_DIR``: the FastAPI example's ``policy/``) are
  loaded once; ``POST /admin/reload`` (allowed to admins by the policy) loads
  them again, the engine swapped whole.

The caller is who their bearer token names in ``TOKENS`` (``PYREGO_IDENTIFY``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import path

from pyrego.integrations.django import policy_required, reload_policies

# The same policies as the FastAPI example: one service, two frameworks.
POLICY = Path(__file__).resolve().parent.parent / "fastapi_authz" / "policy"

#: Bearer token -> identity (``input.identity``).
TOKENS: dict[str, dict[str, Any]] = {
    "alice-token": {"user": "alice", "roles": ["employee"]},
    "bob-token": {"user": "bob", "roles": ["employee", "manager"]},
    "carol-token": {"user": "carol", "roles": ["manager", "admin"]},
    "dora-token": {"user": "dora", "roles": ["auditor"]},
    "erin-token": {"user": "erin", "roles": ["auditor", "clearance"]},
    "zoe-token": {"user": "zoë", "roles": ["employee"]},
}

SALARIES = {"alice": 5200, "bob": 6100, "carol": 7400, "dora": 5800, "erin": 6000, "zoë": 5100}


def identify(token: str | None) -> dict[str, Any] | None:
    """``input.identity``: who the bearer token names (``None``: nobody)."""
    return TOKENS.get(token) if token is not None else None


#: The project's settings (``configure()`` installs them).
SETTINGS: dict[str, Any] = {
    "DEBUG": False,
    "SECRET_KEY": "an example, not a secret",
    "ALLOWED_HOSTS": ["127.0.0.1", "localhost"],
    "ROOT_URLCONF": __name__,
    "MIDDLEWARE": ["pyrego.integrations.django.PolicyMiddleware"],
    "INSTALLED_APPS": [],
    "PYREGO_POLICY_DIR": str(POLICY),
    "PYREGO_DECISION": "data.httpapi.authz.allow",
    "PYREGO_EXEMPT_PATHS": ["/healthz"],
    "PYREGO_IDENTIFY": identify,
}


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


def salary(request: HttpRequest, user: str) -> JsonResponse:
    decision = request.policy_decision  # type: ignore[attr-defined]
    return JsonResponse({"user": user, "salary": SALARIES.get(user), "allowed": decision.allowed})


@policy_required("data.httpapi.reports.decision")
def report(request: HttpRequest, report_id: str) -> JsonResponse:
    return JsonResponse({"report": report_id, "decision": request.policy_decision.value})  # type: ignore[attr-defined]


@policy_required("data.httpapi.reports.whoami")
async def whoami(request: HttpRequest) -> JsonResponse:  # (async views are checked too)
    return JsonResponse(request.policy_decision.value)  # type: ignore[attr-defined]


def admin_reload(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        return JsonResponse({"error": "POST only"}, status=405)
    return JsonResponse({"reloaded": reload_policies()})


urlpatterns = [
    path("healthz", healthz),
    path("finance/salary/<str:user>", salary),
    path("reports/<str:report_id>", report),
    path("whoami", whoami),
    path("admin/reload", admin_reload),
]


def configure() -> None:
    """Install :data:`SETTINGS` and set Django up (once per process)."""
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(**SETTINGS)
        django.setup()


def wsgi_application() -> Any:
    """The WSGI application (``gunicorn 'app:wsgi_application()'``)."""
    configure()
    from django.core.wsgi import get_wsgi_application

    return get_wsgi_application()


def asgi_application() -> Any:
    """The ASGI application (``uvicorn --factory app:asgi_application``)."""
    configure()
    from django.core.asgi import get_asgi_application

    return get_asgi_application()


if __name__ == "__main__":
    configure()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
