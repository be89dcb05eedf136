"""The ceiling of ``benchmarks/server.py``: a hello-world JSON endpoint on the same stack.

Starlette and uvicorn, as ``pyrego run --server``, with nothing of pyrego: a
POST to any path reads its body and answers a constant JSON document
(``{"decision_id": ..., "result": true}``, orjson-written). What this
endpoint serves per second is what the machine, the framework and the HTTP
server allow; the decision endpoint is measured against it.

    python -m uvicorn --app-dir benchmarks server_hello:app --workers N ...
"""

from __future__ import annotations

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

_BODY = orjson.dumps({"decision_id": "00000000-0000-4000-8000-000000000000", "result": True}, option=orjson.OPT_APPEND_NEWLINE)


async def hello(request: Request) -> Response:
    """Read the body (as a decision endpoint must), answer a constant JSON document."""
    await request.body()
    return Response(_BODY, media_type="application/json")


app = Starlette(routes=[Route("/{path:path}", hello, methods=["GET", "POST"])])
