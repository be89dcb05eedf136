"""OPA's Policy, Query, Compile, Health, Config and Status APIs, and ``/metrics``."""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING, Any

from pyrego.errors import EvalError, RegoCompileError, RegoError, RegoParseError
from pyrego.server import errors
from pyrego.server.api_data import NO_INPUT, evaluate, explanation, not_allowed, refuse_if_owned, refuse_if_read_only
from pyrego.server.common import bool_param, json_response, path_segments, pretty, read_body, route_path
from pyrego.server.jsonio import BodyError, loads
from pyrego.server.render import unshared

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from pyrego.server.app import Server

__all__ = ["compile_filters", "compile_partial", "config", "health", "health_policy", "metrics", "not_allowed", "policies", "query", "status"]


# -- policies ----------------------------------------------------------------------------


def _policy_id(request: Request) -> str:
    from urllib.parse import unquote

    return unquote(route_path(request)[len("/v1/policies/") :])


def policy_json(policy_id: str, text: str, rego_v0: bool) -> dict[str, Any]:
    """OPA's ``PolicyV1``: ``{"id", "raw", "ast"}`` (the AST in OPA's JSON form)."""
    from pyrego.ast.opa_json import ModuleJSON
    from pyrego.parse.parser import parse_module

    try:
        module = parse_module(text, policy_id, rego_v1=not rego_v0)
        tree: Any = ModuleJSON(module, text, False).module(False)
    except Exception:  # noqa: BLE001 - the AST is informative; the policy itself is served
        tree = None
    return {"id": policy_id, "raw": text, "ast": tree}


async def policies(server: Server, request: Request) -> Response:
    """``GET /v1/policies``, ``GET|PUT|DELETE /v1/policies/{id}``."""
    method = request.method
    runtime = server.runtime
    path = route_path(request)
    if path == "/v1/policies" or (method == "GET" and path == "/v1/policies/"):
        # (``GET /v1/policies/`` lists too: OPA's REST clients ask it so)
        if method != "GET":
            return await not_allowed(server, request)
        snap = runtime.snapshot
        listed = [policy_json(pid, snap.policies[pid], runtime.rego_v0) for pid in sorted(snap.policies)]
        return json_response({"result": listed}, pretty=pretty(request))
    policy_id = _policy_id(request)
    if method == "GET":
        text = runtime.snapshot.policies.get(policy_id)
        if text is None:
            raise _policy_not_found(policy_id)
        return json_response({"result": policy_json(policy_id, text, runtime.rego_v0)}, pretty=pretty(request))
    if method == "PUT":
        refuse_if_read_only(server)
        body = await read_body(request, server.options.max_body, server.options.gzip_max_body)
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            raise errors.APIError(400, errors.INVALID_PARAMETER, "policy text is not valid UTF-8") from None
        if not text.strip():
            raise errors.APIError(400, errors.INVALID_PARAMETER, "empty module")
        if runtime.snapshot.roots:
            _refuse_owned_package(server, policy_id, text)
            old = runtime.snapshot.policies.get(policy_id)
            if old is not None:
                _refuse_owned_package(server, policy_id, old)

        def put() -> None:
            try:
                runtime.put_policy(policy_id, text)
            except RegoError as err:
                raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_COMPILE_MODULE) from None

        start = time.perf_counter_ns()
        await server.worker.run(request, put)
        return json_response(_write_metrics(request, start), pretty=pretty(request))
    if method == "DELETE":
        refuse_if_read_only(server)
        old = runtime.snapshot.policies.get(policy_id)
        if old is not None and runtime.snapshot.roots:
            _refuse_owned_package(server, policy_id, old)

        def delete() -> None:
            try:
                runtime.delete_policy(policy_id)
            except KeyError:
                raise _policy_not_found(policy_id) from None
            except RegoError as err:
                raise errors.from_rego(err, 400, errors.INVALID_OPERATION, errors.MSG_COMPILE_MODULE) from None

        start = time.perf_counter_ns()
        await server.worker.run(request, delete)
        return json_response(_write_metrics(request, start), pretty=pretty(request))
    return await not_allowed(server, request)


def _refuse_owned_package(server: Server, policy_id: str, text: str) -> None:
    """OPA's ``checkPolicyPackageScope``: a module whose package lies in a bundle's roots is the bundle's."""
    from pyrego.bundle.reader import package_path
    from pyrego.parse.parser import parse_module

    held = server.runtime.snapshot.parsed.get(policy_id)
    if held is not None and held[0] == text:
        module = held[1]  # (a bundle's module, parsed in its own Rego version)
    else:
        try:
            module = parse_module(text, policy_id, rego_v1=not server.runtime.rego_v0)
        except RegoError:
            return  # (the write reports the parse error)
    refuse_if_owned(server, package_path(module))


def _write_metrics(request: Request, start: int) -> dict[str, Any]:
    """A write's response body: ``{}``, or its metrics with ``?metrics``."""
    if not bool_param(request, "metrics"):
        return {}
    return {"metrics": {"timer_rego_module_compile_ns": time.perf_counter_ns() - start}}


def _policy_not_found(policy_id: str) -> errors.APIError:
    import json

    return errors.APIError(404, errors.RESOURCE_NOT_FOUND, f"storage_not_found_error: policy id {json.dumps(policy_id)}")


# -- query -------------------------------------------------------------------------------


async def query(server: Server, request: Request) -> Response:
    """``GET /v1/query?q=...`` and ``POST /v1/query`` (``{"query": ..., "input": ...}``)."""
    input: Any = NO_INPUT
    if request.method == "GET":
        qs = request.query_params.getlist("q")
        if not qs:
            raise errors.APIError(400, errors.INVALID_PARAMETER, "missing parameter 'q'")
        text = qs[-1]
    elif request.method == "POST":
        body = await read_body(request, server.options.max_body, server.options.gzip_max_body)
        try:
            req = loads(body) if body.strip() else {}
        except BodyError as exc:
            raise errors.APIError(400, errors.INVALID_PARAMETER, f"error(s) occurred while decoding request: {exc}") from None
        if not isinstance(req, dict):
            raise errors.APIError(400, errors.INVALID_PARAMETER, "error(s) occurred while decoding request: not an object")
        q = req.get("query")
        text = q if isinstance(q, str) else ""
        if "input" in req:
            input = req["input"]
    else:
        return await not_allowed(server, request)
    snap = server.runtime.snapshot
    explain = request.query_params.get("explain")
    as_text = pretty(request)
    client = request.client
    requested_by = f"{client.host}:{client.port}" if client else ""

    def run() -> dict[str, Any]:
        kw = {} if input is NO_INPUT else {"input": input}
        limit = server.runtime.eval_timeout
        deadline = None if limit is None else time.monotonic() + limit
        try:
            if explain in ("notes", "fails", "full"):
                trace = snap.engine.eval_query_with_trace(text, explain=explain, **kw)
                out, lines = trace.result, explanation(trace, as_text)
            else:
                out, lines = snap.engine.eval_query(text, **kw), None
        except RegoParseError as err:
            raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_PARSE_QUERY) from None
        except RegoCompileError as err:
            raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_COMPILE_QUERY) from None
        except EvalError as err:
            raise errors.eval_error(err) from None
        except RegoError as err:
            raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_COMPILE_QUERY) from None
        rows = [{k: v for k, v in r.get("bindings", {}).items() if not k.startswith("$")} for r in out.get("result", [])]
        try:
            # (written out within the evaluation's time limit: shared parts are copied here, counted)
            rows = unshared(rows, deadline)
        except EvalError as err:
            raise errors.eval_error(err) from None
        runtime = server.runtime
        if runtime.decision_logger is not None:
            event = runtime.decision_event(
                str(uuid.uuid4()), snap, query=text, input=None if input is NO_INPUT else input, has_input=input is not NO_INPUT,
                result=rows, has_result=True, requested_by=requested_by,
            )
            runtime.log_decision(event)
        resp: dict[str, Any] = {}
        if rows:
            resp["result"] = rows
        if lines is not None:
            resp["explanation"] = lines
        return resp

    resp = await server.worker.run(request, run)
    return json_response(resp, pretty=pretty(request))


# -- compile -----------------------------------------------------------------------------


async def compile_partial(server: Server, request: Request) -> Response:
    """``POST /v1/compile``: partial evaluation, ``{"result": {"queries": [...], "support": [...]}}``."""
    if request.method != "POST":
        return await not_allowed(server, request)
    req = await _compile_request(server, request)
    text = req.get("query")
    if not isinstance(text, str) or not text.strip():
        raise errors.APIError(400, errors.INVALID_PARAMETER, "missing required 'query' value")
    unknowns = req.get("unknowns")
    snap = server.runtime.snapshot

    def run() -> dict[str, Any]:
        from pyrego.partial.base import PartialEvalError

        try:
            result = snap.engine.eval_partial(text, unknowns=unknowns if isinstance(unknowns, list) else None, input=req.get("input"))
        except RegoParseError as err:
            raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_PARSE_QUERY) from None
        except (RegoCompileError, PartialEvalError) as err:
            raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_COMPILE_MODULE) from None
        except EvalError as err:
            raise errors.eval_error(err) from None
        return {"result": _partial_json(result)}

    return json_response(await server.worker.run(request, run), pretty=pretty(request))


def _partial_json(result: Any) -> dict[str, Any]:
    from pyrego.ast import nodes as ast
    from pyrego.ast.opa_json import ModuleJSON
    from pyrego.parse.parser import parse_module

    writer = ModuleJSON(ast.Module(ast.Ref(ast.Var("data"), ()), (), ()), "", False)
    out: dict[str, Any] = {}
    if result.queries:
        out["queries"] = [writer.body(q) for q in result.queries]
    if result.support:
        out["support"] = [ModuleJSON(parse_module(m.text, ""), m.text, False).module(False) for m in result.support]
    return out


async def _compile_request(server: Server, request: Request) -> dict[str, Any]:
    body = await read_body(request, server.options.max_body, server.options.gzip_max_body)
    try:
        req = loads(body) if body.strip() else {}
    except BodyError as exc:
        raise errors.APIError(400, errors.INVALID_PARAMETER, f"error(s) occurred while decoding request: {exc}") from None
    if not isinstance(req, dict):
        raise errors.APIError(400, errors.INVALID_PARAMETER, "error(s) occurred while decoding request: not an object")
    return req


#: Accept media types of the Compile API's filter endpoint: (target, dialect).
FILTER_TYPES = {
    "application/vnd.opa.ucast.all+json": ("ucast", "all"),
    "application/vnd.opa.ucast.minimal+json": ("ucast", "minimal"),
    "application/vnd.opa.ucast.prisma+json": ("ucast", "prisma"),
    "application/vnd.opa.ucast.linq+json": ("ucast", "linq"),
    "application/vnd.opa.sql.postgresql+json": ("sql", "postgresql"),
    "application/vnd.opa.sql.mysql+json": ("sql", "mysql"),
    "application/vnd.opa.sql.sqlserver+json": ("sql", "sqlserver"),
    "application/vnd.opa.sql.sqlite+json": ("sql", "sqlite"),
}


async def compile_filters(server: Server, request: Request) -> Response:
    """``POST /v1/compile/{path}`` with an ``Accept`` filter type: a SQL ``WHERE`` clause or a UCAST object."""
    if request.method not in ("POST", "GET"):
        return await not_allowed(server, request)
    accept = request.headers.get("accept", "").split(",")[0].split(";")[0].strip()
    kind = FILTER_TYPES.get(accept)
    if kind is None:
        if accept in ("application/json", "", "*/*"):
            return await compile_partial(server, request)
        raise errors.APIError(406, errors.INVALID_PARAMETER, f"unsupported media type: {accept}")
    target, dialect = kind
    req = await _compile_request(server, request)
    path = path_segments(request, "/v1/compile")
    decision = "data." + ".".join(path)
    options = req.get("options") if isinstance(req.get("options"), dict) else {}
    mappings = None
    key = "targetSQLTableMappings" if target == "sql" else "targetUCASTMappings"
    table = options.get(key) if isinstance(options, dict) else None
    if isinstance(table, dict):
        mappings = table.get(dialect) or table.get(target)
    mask_rule = options.get("maskRule") if isinstance(options, dict) else None
    unknowns = req.get("unknowns")
    snap = server.runtime.snapshot

    def run() -> dict[str, Any]:
        from pyrego.filters.errors import FilterError

        try:
            filters = snap.engine.compile_filters(
                decision,
                req.get("input"),
                unknowns=unknowns if isinstance(unknowns, list) else None,
                target=target,
                dialect=dialect,
                mappings=mappings,
                mask_rule=mask_rule if isinstance(mask_rule, str) else None,
            )
        except FilterError as err:
            raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_COMPILE_MODULE) from None
        except EvalError as err:
            raise errors.eval_error(err) from None
        except RegoError as err:
            raise errors.from_rego(err, 400, errors.INVALID_PARAMETER, errors.MSG_COMPILE_MODULE) from None
        if filters["query"] is None:
            return {}
        result: dict[str, Any] = {"query": filters["query"]}
        if filters.get("masks"):
            result["masks"] = filters["masks"]
        return {"result": result}

    return json_response(await server.worker.run(request, run), pretty=pretty(request))


# -- health, config, status, metrics --------------------------------------------------------------


def _health_error(message: str) -> Response:
    return json_response({"error": message}, status=500)


async def health(server: Server, request: Request) -> Response:
    """``GET /health`` (``?bundles``, ``?plugins``, ``exclude-plugin=``): 200 ``{}`` or 500 ``{"error": ...}``."""
    if request.method != "GET":
        return await not_allowed(server, request)
    snap = server.runtime.snapshot

    def can_eval() -> bool:
        try:
            return snap.engine.eval_query("x = 1")["result"][0]["bindings"]["x"] == 1  # type: ignore[no-any-return]
        except Exception:  # noqa: BLE001 - any failure means the server cannot evaluate
            return False

    if not await server.worker.run(request, can_eval):
        return _health_error("unable to perform evaluation")
    statuses = server.runtime.plugin_statuses()
    if bool_param(request, "bundles") or bool_param(request, "bundle"):
        for name in ("discovery", "bundle"):
            st = statuses.get(name)
            if st is not None and st["state"] != "OK":
                return _health_error("one or more bundles are not activated")
    if bool_param(request, "plugins"):
        excluded = {x for x in request.query_params.getlist("exclude-plugin") if x}
        if any(st["state"] != "OK" for name, st in statuses.items() if name not in excluded):
            return _health_error("one or more plugins are not up")
    return json_response({})


async def health_policy(server: Server, request: Request) -> Response:
    """``GET /health/{path}``: the policy ``data.system.health.<path>`` must be true."""
    if request.method != "GET":
        return await not_allowed(server, request)
    path = ["system", "health", *path_segments(request, "/health")]
    statuses = server.runtime.plugin_statuses()
    input = {"plugin_state": {k: v["state"] for k, v in statuses.items()}, "plugins_ready": all(v["state"] == "OK" for v in statuses.values())}
    snap = server.runtime.snapshot
    ref = "data." + ".".join(path)
    try:
        defined, value, _, _ = await server.worker.run(request, lambda: evaluate(server, snap, path, input))
    except errors.APIError as err:
        return _health_error(err.message if not err.errors else err.errors[0].get("message", err.message))
    if not defined:
        return _health_error(f"health check ({ref}) was undefined")
    if value is True:
        return json_response({})
    return _health_error(f"health check ({ref}) returned unexpected value")


async def config(server: Server, request: Request) -> Response:
    """``GET /v1/config``: the active configuration, credentials and keys removed."""
    if request.method != "GET":
        return await not_allowed(server, request)
    from pyrego.server.config import active_config
    from pyrego.version import __version__

    runtime = server.runtime
    return json_response({"result": active_config(runtime.config, {"id": runtime.instance_id, "version": __version__})}, pretty=pretty(request))


async def status(server: Server, request: Request) -> Response:
    """``GET /v1/status``: the status report (labels, bundles, plugins), always on in pyrego."""
    if request.method != "GET":
        return await not_allowed(server, request)
    result = server.runtime.status_report()
    return json_response({"result": result}, pretty=pretty(request))


async def metrics(server: Server, request: Request) -> Response:
    """``GET /metrics``: Prometheus' text format."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
    from starlette.responses import Response

    if request.method != "GET":
        return await not_allowed(server, request)
    return Response(generate_latest(server.registry), media_type=CONTENT_TYPE_LATEST)
