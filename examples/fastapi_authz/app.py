"""A FastAPI service whose requests are authorized by Rego policies, in process.

Run it::

    uvicorn --factory app:create_app --port 8000
    curl -H 'Authorization: Bearer bob-token' localhost:8000/finance/salary/alice   # 200: bob manages alice
    curl -H 'Authorization: Bearer alice-token' localhost:8000/finance/salary/bob   # 403
    curl -H 'Authorization: Bearer dora-token' localhost:8000/reports/payroll       # 403, with the reasons

- Every request but ``/healthz`` goes through
  :class:`pyrego.integrations.asgi.PolicyMiddleware` (decision
  ``data.httpapi.authz.allow``, ``policy/authz.rego``).
- ``/reports/{report_id}`` and ``/whoami`` also have a decision of their own,
  through the dependency :class:`pyrego.integrations.fastapi.PolicyGuard`
  (``policy/reports.rego``): objects with the reasons of a denial.
- The policies and their data (``policy/``) are loaded by a
  :class:`pyrego.integrations.reload.PolicyDirectory`; ``POST
  /admin/reload`` (allowed to admins by the policy) loads them again, the
  engine swapped whole.

The caller is who their bearer token names in ``TOKENS`` (a real service
would verify a signed token here, or in the policy with ``io.jwt.decode_verify``).
"""

# (No ``from __future__ import annotations``: FastAPI reads the route
# signatures' types, and ``Whoami`` below is local to create_app.)
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request

from pyrego.integrations.asgi import PolicyMiddleware
from pyrego.integrations.fastapi import Decision, PolicyGuard
from pyrego.integrations.reload import PolicyDirectory

POLICY = Path(__file__).with_name("policy")

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


def create_app(
    policy_dir: str | Path = POLICY,
    *,
    extend: Callable[[Any, dict], Any] | None = None,
    in_thread: bool = False,
) -> FastAPI:
    """The service on the policies in ``policy_dir``; ``extend(scope, input)``
    adds to the middleware's input (tests record it there)."""
    policies = PolicyDirectory(policy_dir, decisions=["data.httpapi.authz.allow"])
    app = FastAPI()
    app.state.policies = policies

    report_guard = PolicyGuard(policies, "data.httpapi.reports.decision", identify=identify, in_thread=in_thread)
    Whoami = Annotated[Decision, Depends(PolicyGuard(policies, "data.httpapi.reports.whoami", identify=identify))]

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {"ok": True, "policies": policies.generation}

    @app.get("/finance/salary/{user}")
    def salary(user: str, request: Request) -> dict[str, Any]:
        decision: Decision = request.state.policy_decision
        return {"user": user, "salary": SALARIES.get(user), "allowed": decision.allowed}

    @app.get("/reports/{report_id}")
    def report(report_id: str, decision: Annotated[Decision, Depends(report_guard)]) -> dict[str, Any]:
        return {"report": report_id, "decision": decision.value}

    @app.get("/whoami")
    def whoami(decision: Whoami) -> Any:
        return decision.value

    @app.post("/admin/reload")
    def reload() -> dict[str, Any]:
        policies.reload()
        return {"policies": policies.generation}

    app.add_middleware(
        PolicyMiddleware,
        engine=policies,
        decision="data.httpapi.authz.allow",
        exempt_paths=["/healthz"],
        identify=identify,
        extend=extend,
        in_thread=in_thread,
    )
    return app
