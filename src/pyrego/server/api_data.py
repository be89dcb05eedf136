"""OPA's Data API: ``/v1/data`` (read, evaluate, write), ``/v0/data`` and ``POST /``.

Reads evaluate the document at the path on the current snapshot's engine
(:mod:`pyrego.server.runtime`) in the evaluation pool; writes go through
:meth:`ServerRuntime.write_data`, which compiles the result before making it
current. Bodies, status codes and messages are OPA's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pyrego.errors import ArgumentError, EvalError, RegoError
from pyrego.runtime.values import UNDEF
from pyrego.server import errors, store
from pyrego.server.common import (
    INLINE_CAP,
    InlineTooSlow,
    bool_param,
    eval_key,
    header,
    json_response,
    path_segments,
    pretty,
    read_body,
    running_inline,
)
from pyrego.server.common import decision_id as new_decision_id
from pyrego.server.jsonio import BodyError, loads
from pyrego.server.render import render
from pyrego.version import __version__

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from pyrego.server.app import Server
    from pyrego.server.runtime import Snapshot

NO_INPUT: Any = object()


def rule_text(path: Sequence[str]) -> str:
    """``data`` and the path's keys as a ref (a segment of digits is an array index, as in OPA)."""
    out = ["data"]
    for seg in path:
        if '"' in seg:
            raise errors.APIError(400, errors.INVALID_PARAMETER, f"invalid path: invalid ref term '{seg}'")
        out.append(f"[{int(seg)}]" if seg.isdigit() and (seg == "0" or seg[0] != "0") else f"[{json.dumps(seg)}]")
    return "".join(out)


#: :func:`rule_text` of the paths asked lately (a path that is not valid raises and is not kept).
_RULE_TEXTS: dict[tuple[str, ...], str] = {}


def ref_text(path: Sequence[str]) -> str:
    """The ref as OPA prints it in messages (``data.a.b``, ``data.a["b-c"]``)."""
    out = ["data"]
    for seg in path:
        if seg.isdigit():
            out.append(f"[{seg}]")
        elif seg.isidentifier() and seg.isascii():
            out.append("." + seg)
        else:
            out.append(f"[{json.dumps(seg)}]")
    return "".join(out)


def explanation(trace: Any, pretty: bool) -> list[Any]:
    """OPA's ``explanation``: the pretty trace's lines with ``?pretty``, else the events
    (``op`` lower-cased as OPA writes them; ``node`` is the expression's text, not its AST)."""
    if pretty:
        return trace.pretty().strip("\n").split("\n")  # type: ignore[no-any-return]
    out = []
    for event in trace.events:
        doc = event.to_json()
        doc["op"] = doc["op"].lower()
        out.append(doc)
    return out


def evaluate(
    server: Server,
    snap: Snapshot,
    path: Sequence[str],
    input: Any,
    *,
    strict: bool = False,
    explain: str | None = None,
    pretty_trace: bool = False,
) -> tuple[bool, Any, dict[str, int], list[Any] | None]:
    """Evaluate the document at ``path`` (in the pool's thread): ``(defined, value, timers, explanation)``."""
    inline = running_inline()
    engine = snap.engine_for(strict, INLINE_CAP if inline else None)
    key = tuple(path)
    text = _RULE_TEXTS.get(key)
    if text is None:
        text = rule_text(path)
        if len(_RULE_TEXTS) >= 4096:
            _RULE_TEXTS.clear()
        _RULE_TEXTS[key] = text
    kw = {} if input is NO_INPUT else {"input": input}
    start = time.perf_counter_ns()
    started = time.monotonic()  # (the evaluation's deadline counts from about here)
    explained = None
    try:
        if explain is not None:
            trace = engine.eval_rule_with_trace(text, explain=explain, **kw)
            value = trace.result
            explained = explanation(trace, pretty_trace)
        else:
            value = engine.eval_rule(text, **kw)
    except ArgumentError as err:
        raise errors.APIError(400, errors.INVALID_PARAMETER, f"invalid path: {err.message}") from None
    except EvalError as err:
        if inline and err.code == "eval_cancel_error":
            raise InlineTooSlow() from None  # (evaluated again on the pool, under the server's own limit)
        raise errors.eval_error(err) from None
    except RegoError as err:
        raise errors.APIError(500, errors.INTERNAL, str(err)) from None
    timers = {"timer_rego_query_eval_ns": time.perf_counter_ns() - start}
    if value is UNDEF:
        return False, None, timers, explained
    if value is True or value is False:
        return True, value, timers, explained
    # The value's JSON is made under the evaluation's own time limit (a value
    # with shared parts can be far larger written out than in memory).
    limit = server.runtime.eval_timeout
    if inline:
        limit = INLINE_CAP if limit is None else min(limit, INLINE_CAP)
    try:
        tree = render(value, None if limit is None else started + limit)
    except EvalError as err:
        if inline and err.code == "eval_cancel_error":
            raise InlineTooSlow() from None
        raise errors.eval_error(err) from None
    return True, tree, timers, explained


def _provenance(snap: Snapshot) -> dict[str, Any]:
    out: dict[str, Any] = {"version": __version__, "build_commit": "", "build_timestamp": "", "build_hostname": ""}
    out["bundles"] = {name: {"revision": rev} for name, rev in sorted(snap.bundles.items())}
    return out


def _parse_input_param(request: Request) -> Any:
    values = request.query_params.getlist("input")
    if not values:
        return NO_INPUT
    try:
        return loads(values[-1])
    except BodyError as exc:
        raise errors.APIError(400, errors.INVALID_PARAMETER, f"parameter contains malformed input document: {exc}") from None


async def _parse_input_body(server: Server, request: Request) -> Any:
    body = await read_body(request, server.options.max_body, server.options.gzip_max_body)
    if not body.strip():
        return NO_INPUT
    try:
        doc = _load_body(request, body)
    except BodyError as exc:
        raise errors.APIError(400, errors.INVALID_PARAMETER, f"body contains malformed input document: {exc}") from None
    if isinstance(doc, dict) and "input" in doc:
        return doc["input"]
    return NO_INPUT


def _load_body(request: Request, body: bytes) -> Any:
    if b"yaml" in header(request, b"content-type"):
        from pyrego.yaml_safe import load_yaml

        try:
            return load_yaml(body.decode("utf-8"))
        except Exception as exc:  # noqa: BLE001 - the YAML reader raises many kinds
            raise BodyError(str(exc)) from None
    return loads(body)


async def v1_data(server: Server, request: Request) -> Response:
    """``/v1/data[/{path}]``: GET and POST evaluate, PUT, PATCH and DELETE write."""
    method = request.method
    path = path_segments(request, "/v1/data")
    if method in ("GET", "POST"):
        return await _read(server, request, path)
    if method in ("PUT", "PATCH", "DELETE"):
        return await _write(server, request, path)
    return await not_allowed(server, request)


async def not_allowed(server: Server, request: Request) -> Response:
    """405 with no body, as OPA's catch-all handlers."""
    from starlette.responses import Response

    return Response(status_code=405)


async def _read(server: Server, request: Request, path: list[str]) -> Response:
    start = time.perf_counter_ns()
    if request.method == "GET":
        input = _parse_input_param(request)
    else:
        input = await _parse_input_body(server, request)
    parsed = time.perf_counter_ns()
    explain: str | None = None
    strict = with_metrics = with_provenance = is_pretty = False
    if request.scope.get("query_string"):  # (most decisions have none: no parameter to look for)
        explain = request.query_params.get("explain")
        explain = explain if explain in ("notes", "fails", "full", "debug") else None
        strict = bool_param(request, "strict-builtin-errors")
        with_metrics = bool_param(request, "metrics") or bool_param(request, "instrument")
        with_provenance = bool_param(request, "provenance")
        is_pretty = pretty(request)
    snap = server.runtime.snapshot
    decision_id = new_decision_id()
    logging = server.runtime.decision_logger is not None

    def run() -> tuple[bool, Any, dict[str, int], list[Any] | None]:
        if not logging:
            return evaluate(server, snap, path, input, strict=strict, explain="full" if explain == "debug" else explain, pretty_trace=is_pretty)
        client = request.client
        requested_by = f"{client.host}:{client.port}" if client else ""
        try:
            outcome = evaluate(server, snap, path, input, strict=strict, explain="full" if explain == "debug" else explain, pretty_trace=is_pretty)
        except errors.APIError as err:
            _log(server, snap, decision_id, path, input, None, err.body(), requested_by, {})
            raise
        _log(server, snap, decision_id, path, input, outcome, None, requested_by, outcome[2])
        return outcome

    key = eval_key(request, "data", snap.revision, strict, *path) if explain is None else None
    defined, value, timers, explained = await server.worker.run(request, run, key)
    result: dict[str, Any] = {"decision_id": decision_id}
    if with_metrics:
        timers["timer_rego_input_parse_ns"] = parsed - start
        timers["timer_server_handler_ns"] = time.perf_counter_ns() - start
        timers["counter_server_query_cache_hit"] = 0
        result["metrics"] = dict(sorted(timers.items()))
    if with_provenance:
        result["provenance"] = _provenance(snap)
    if defined:
        result["result"] = value
    if input is NO_INPUT and request.method == "POST":
        result["warning"] = {"code": errors.API_USAGE_WARNING, "message": errors.MSG_INPUT_KEY_MISSING}
    if explained is not None and (defined or explain == "full"):
        result["explanation"] = explained
    return json_response(result, pretty=is_pretty)


def _log(
    server: Server,
    snap: Snapshot,
    decision_id: str,
    path: Sequence[str],
    input: Any,
    outcome: tuple[bool, Any, dict[str, int], Any] | None,
    error: dict[str, Any] | None,
    requested_by: str,
    metrics: dict[str, int],
) -> None:
    runtime = server.runtime
    if runtime.decision_logger is None:
        return
    event = runtime.decision_event(
        decision_id,
        snap,
        path="/".join(path),
        input=None if input is NO_INPUT else input,
        has_input=input is not NO_INPUT,
        result=outcome[1] if outcome else None,
        has_result=bool(outcome and outcome[0]),
        error=error,
        metrics=metrics,
        requested_by=requested_by,
    )
    runtime.log_decision(event)


def refuse_if_owned(server: Server, path: Sequence[str]) -> None:
    """A write to a path a bundle owns is refused, with OPA's messages (400)."""
    from pyrego.server.runtime import ScopeError

    try:
        server.runtime.check_path_scope(path)
    except ScopeError as err:
        raise errors.APIError(400, errors.INVALID_PARAMETER, err.message) from None


def refuse_if_read_only(server: Server) -> None:
    """Writes through the API are refused when several worker processes serve (they could not agree)."""
    if server.runtime.read_only:
        raise errors.APIError(
            400,
            errors.INVALID_OPERATION,
            "writes through the REST API are disabled: this server runs several worker processes, each with its own "
            "copy of policies and data (load them at start-up, or run one worker)",
        )


async def _write(server: Server, request: Request, path: list[str]) -> Response:
    from starlette.responses import Response

    refuse_if_read_only(server)
    refuse_if_owned(server, path)
    method = request.method
    ops: list[tuple[str, list[str], Any]]
    if method == "DELETE":
        ops = [("remove", path, None)]
    else:
        body = await read_body(request, server.options.max_body, server.options.gzip_max_body)
        try:
            value = _load_body(request, body)
        except BodyError as exc:
            raise errors.APIError(400, errors.INVALID_PARAMETER, str(exc)) from None
        if method == "PUT":
            ops = [("add", path, value)]
        else:
            ops = _patch_ops(path, value)
    runtime = server.runtime

    def run() -> bool:
        try:
            if method == "DELETE":
                store.read(runtime.snapshot.data, path)
            return runtime.write_data(ops, make_dirs=method == "PUT", if_none_match=method == "PUT" and request.headers.get("if-none-match") == "*")
        except store.StorageError as err:
            if err.code == store.INVALID_PATCH:
                raise errors.APIError(400, errors.INVALID_PARAMETER, str(err)) from None
            if err.code == store.WRITE_CONFLICT:
                raise errors.APIError(404, errors.RESOURCE_CONFLICT, str(err)) from None
            raise errors.APIError(404, errors.RESOURCE_NOT_FOUND, str(err)) from None
        except RegoError as err:
            raise errors.APIError(400, errors.INVALID_PARAMETER, errors.errors_text(errors.every_error(err))) from None

    start = time.perf_counter_ns()
    written = await server.worker.run(request, run)
    if not written:
        return Response(status_code=304)
    if bool_param(request, "metrics"):  # (as OPA: 200 with the metrics instead of 204)
        return json_response({"metrics": {"timer_server_handler_ns": time.perf_counter_ns() - start}})
    return Response(status_code=204)


def _patch_ops(root: list[str], patches: Any) -> list[tuple[str, list[str], Any]]:
    if not isinstance(patches, list):
        raise errors.APIError(400, errors.INVALID_PARAMETER, "json: cannot unmarshal object into Go value of type []types.PatchV1")
    ops = []
    for p in patches:
        if not isinstance(p, dict):
            raise errors.APIError(400, errors.INVALID_PARAMETER, "json: cannot unmarshal into Go value of type types.PatchV1")
        op = p.get("op")
        if op not in ("add", "remove", "replace"):
            raise errors.APIError(400, errors.INVALID_PARAMETER, f"bad patch operation: {op if isinstance(op, str) else ''}")
        raw = p.get("path")
        raw = raw if isinstance(raw, str) else ""
        segs = [s.replace("~1", "/").replace("~0", "~") for s in raw.strip("/").split("/") if s]
        ops.append((op, root + segs, p.get("value")))
    return ops


async def v0_data(server: Server, request: Request) -> Response:
    """``POST /v0/data[/{path}]``: the body is the input; the bare value, or 404 ``undefined_document``."""
    if request.method != "POST":
        return await not_allowed(server, request)
    return await _v0(server, request, path_segments(request, "/v0/data"))


async def index(server: Server, request: Request) -> Response:
    """``POST /``: the default decision (``data.system.main``) with the body as input; ``GET /``: a page."""
    if request.method == "POST":
        return await _v0(server, request, list(server.options.default_decision))
    if request.method == "GET":
        from starlette.responses import HTMLResponse

        return HTMLResponse(f"<html><body><pre>pyrego {__version__}: an OPA-compatible policy server</pre></body></html>")
    return await not_allowed(server, request)


async def _v0(server: Server, request: Request, path: list[str]) -> Response:
    body = await read_body(request, server.options.max_body, server.options.gzip_max_body)
    input: Any = NO_INPUT
    if body.strip():
        try:
            input = _load_body(request, body)
        except BodyError as exc:
            raise errors.APIError(
                400, errors.INVALID_PARAMETER, f"unexpected parse error for input: body contains malformed input document: {exc}"
            ) from None
    snap = server.runtime.snapshot
    decision_id = new_decision_id()
    client = request.client
    requested_by = f"{client.host}:{client.port}" if client else ""

    def run() -> tuple[bool, Any, dict[str, int], Any]:
        outcome = evaluate(server, snap, path, input)
        _log(server, snap, decision_id, path, input, outcome, None, requested_by, outcome[2])
        return outcome

    defined, value, _, _ = await server.worker.run(request, run, eval_key(request, "data", snap.revision, False, *path))
    if not defined:
        has_rules = _has_rules(snap, path)
        message = errors.MSG_FOUND_UNDEFINED if has_rules else errors.MSG_MISSING
        raise errors.APIError(404, errors.UNDEFINED_DOCUMENT, f"{message}: {ref_text(path)}")
    return json_response(value, pretty=pretty(request))


def _has_rules(snap: Snapshot, path: Sequence[str]) -> bool:
    """Whether a rule defines the document at ``path``."""
    try:
        code = snap.engine.program().code
    except RegoError:
        return False
    key = tuple(int(s) if s.isdigit() else s for s in path)
    return key in getattr(code, "rule_functions", {})
