"""Logging the decisions of an in-process ``Engine``, as OPA's Data API logs its own."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pyrego.plugins.logs.encode import make_decision_event, new_decision_id

if TYPE_CHECKING:
    from pyrego.engine import Engine
    from pyrego.plugins.logs.logger import DecisionLogger

_NO_INPUT: Any = object()


def _slash_path(path: str) -> list[str | int]:
    """The keys of ``path``: ``"authz/allow"``, ``"authz.allow"`` or ``"data.authz.allow"``."""
    if "/" in path or "." not in path and "[" not in path:
        keys: list[str | int] = [p for p in path.strip("/").split("/") if p]
        if keys[:1] == ["data"]:
            keys = keys[1:]
        return keys
    from pyrego.engine_support import rule_path

    return list(rule_path(path))


def logged_eval(
    engine: Engine,
    logger: DecisionLogger | None,
    path: str,
    input: Any = _NO_INPUT,
    *,
    requested_by: str | None = None,
    bundles: Mapping[str, Any] | None = None,
    decision_id: str | None = None,
) -> dict[str, Any]:
    """Evaluate the document at ``path`` and log the decision to ``logger``.

    ``path``: ``"authz/allow"`` (as in OPA's ``/v1/data/authz/allow``) or a
    rule path as :meth:`Engine.eval_rule` takes it (``"authz.allow"``).
    Returns OPA's Data API answer: ``{"decision_id": ..., "result": value}``,
    without ``result`` when the document is undefined (values JSON-ready,
    sets as sorted arrays). An evaluation error is logged (the event's
    ``error``) and raised. ``logger`` may be ``None`` (nothing is logged)."""
    keys = _slash_path(path)
    query = "data" + "".join(f"[{json.dumps(k)}]" for k in keys)
    did = decision_id or new_decision_id()
    has_input = input is not _NO_INPUT
    t0 = time.perf_counter_ns()
    try:
        rs = engine.eval_query(query, input=input) if has_input else engine.eval_query(query)
    except Exception as err:
        if logger is not None:
            code = getattr(err, "code", "internal_error")
            logger.log(
                make_decision_event(
                    "/".join(str(k) for k in keys),
                    input if has_input else None,
                    has_input=has_input,
                    has_result=False,
                    decision_id=did,
                    requested_by=requested_by,
                    bundles=bundles,
                    error={"code": code, "message": str(getattr(err, "message", err))},
                )
            )
        raise
    elapsed = time.perf_counter_ns() - t0
    results = rs.get("result") or []
    answer: dict[str, Any] = {"decision_id": did}
    if results:
        answer["result"] = results[0]["expressions"][0]["value"]
    if logger is not None:
        logger.log(
            make_decision_event(
                "/".join(str(k) for k in keys),
                input if has_input else None,
                answer.get("result"),
                has_input=has_input,
                has_result="result" in answer,
                decision_id=did,
                requested_by=requested_by,
                bundles=bundles,
                metrics={"timer_rego_query_eval_ns": elapsed},
            )
        )
    return answer
