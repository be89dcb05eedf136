"""A FastAPI dependency that asks a policy about a request, per route.

.. code-block:: python

    guard = PolicyGuard(engine, "data.app.allow")

    @app.get("/reports/{report_id}")
    def report(report_id: str, decision: Decision = Depends(guard)) -> dict:
        ...  # only reached when allowed; decision.value is the rule's value

    Allowed = Annotated[Decision, Depends(guard)]   # or once, as a type

The input is the request's (:func:`~pyrego.integrations.decisions.request_input`)
with the route's path parameters in ``input.params``; ``input_builder``
replaces it (``input_builder(request)``, plain or async, returns the whole
input document). A denial raises ``HTTPException(403)`` whose detail is
``{"error": "forbidden", "reasons": [...]}``; a failed evaluation raises
``HTTPException(500)`` (fail closed).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Union

from fastapi import HTTPException, Request

from pyrego.integrations.decisions import (
    Decision,
    EngineSource,
    Identify,
    PolicyEvaluationError,
    denied_body,
    error_body,
    evaluate,
    request_input,
)

__all__ = ["Decision", "PolicyGuard", "fastapi_input"]

InputBuilder = Callable[[Request], Union[Any, Awaitable[Any]]]


def fastapi_input(request: Request, *, identify: Identify | None = None) -> dict[str, Any]:
    """The input document of ``request``, with its path parameters in ``params``."""
    doc = request_input(
        request.method,
        request.scope.get("path") or "/",
        request.headers.items(),
        request.query_params.multi_items(),
        identify=identify,
    )
    doc["params"] = dict(request.path_params)
    return doc


class PolicyGuard:
    """A dependency (``Depends(PolicyGuard(engine, "data.app.allow"))``) returning the
    :class:`~pyrego.integrations.decisions.Decision` when allowed.

    ``engine``: an engine or an engine source (see
    :class:`~pyrego.integrations.reload.PolicyDirectory`). ``identify(token)``:
    ``input.identity``. ``input_builder(request)``: the whole input instead
    of :func:`fastapi_input`. ``deny_status``/``deny_body(decision)``: the
    denial's status and detail. ``in_thread``: evaluate in a worker thread
    (for slow policies; inline by default). ``expose_errors``: the engine's
    message in the 500's detail."""

    def __init__(
        self,
        engine: EngineSource,
        decision: str,
        *,
        input_builder: InputBuilder | None = None,
        identify: Identify | None = None,
        deny_status: int = 403,
        deny_body: Callable[[Decision], Any] = denied_body,
        in_thread: bool = False,
        expose_errors: bool = False,
    ) -> None:
        self.engine = engine
        self.decision = decision
        self.input_builder = input_builder
        self.identify = identify
        self.deny_status = deny_status
        self.deny_body = deny_body
        self.in_thread = in_thread
        self.expose_errors = expose_errors

    async def __call__(self, request: Request) -> Decision:
        try:
            if self.input_builder is not None:
                doc = self.input_builder(request)
                if inspect.isawaitable(doc):
                    doc = await doc
            else:
                doc = fastapi_input(request, identify=self.identify)
            if self.in_thread:
                import anyio.to_thread

                decision = await anyio.to_thread.run_sync(evaluate, self.engine, self.decision, doc)
            else:
                decision = evaluate(self.engine, self.decision, doc)
        except PolicyEvaluationError as err:
            raise HTTPException(500, detail=error_body(err, expose=self.expose_errors)) from None
        except HTTPException:
            raise
        except Exception as exc:  # a failing builder: fail closed
            raise HTTPException(500, detail=error_body(PolicyEvaluationError(self.decision, exc), expose=self.expose_errors)) from None
        if not decision.allowed:
            raise HTTPException(self.deny_status, detail=self.deny_body(decision))
        return decision
