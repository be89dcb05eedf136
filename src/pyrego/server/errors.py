"""OPA's REST API error bodies: ``{"code": ..., "message": ..., "errors": [...]}``.

:class:`APIError` carries the HTTP status with the body; handlers raise it
and the application turns it into the response. The codes and messages are
OPA's (``v1/server/types``): the same client code that reads OPA's errors
reads these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyrego.errors import RegoError

# Error codes of OPA's REST API.
INTERNAL = "internal_error"
EVALUATION = "evaluation_error"
UNAUTHORIZED = "unauthorized"
INVALID_PARAMETER = "invalid_parameter"
INVALID_OPERATION = "invalid_operation"
RESOURCE_NOT_FOUND = "resource_not_found"
RESOURCE_CONFLICT = "resource_conflict"
UNDEFINED_DOCUMENT = "undefined_document"
METHOD_NOT_ALLOWED = "method_not_allowed"

# Messages of OPA's REST API.
MSG_COMPILE_MODULE = "error(s) occurred while compiling module(s)"
MSG_PARSE_QUERY = "error(s) occurred while parsing query"
MSG_COMPILE_QUERY = "error(s) occurred while compiling query"
MSG_EVALUATION = "error(s) occurred while evaluating query"
MSG_UNAUTHORIZED_UNDEFINED = "authorization policy missing or undefined"
MSG_UNAUTHORIZED = "request rejected by administrative policy"
MSG_UNDEFINED = "document missing or undefined"
MSG_MISSING = "document missing"
MSG_FOUND_UNDEFINED = "document undefined"
MSG_BODY_TOO_LARGE = "request body too large"
MSG_GZIP_TOO_LARGE = "compressed request body too large"
MSG_INPUT_KEY_MISSING = "'input' key missing from the request"
API_USAGE_WARNING = "api_usage_warning"


class APIError(Exception):
    """An error response: HTTP ``status`` and OPA's error body."""

    def __init__(self, status: int, code: str, message: str, errors: Sequence[dict[str, Any]] = ()) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = list(errors)

    def body(self) -> dict[str, Any]:
        """The response body (``errors`` only when there are some, as OPA's ``omitempty``)."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.errors:
            out["errors"] = self.errors
        return out


def every_error(err: RegoError) -> list[RegoError]:
    """The errors ``err`` stands for (a compilation reports all of them on one error)."""
    found = getattr(err, "errors", None)
    return list(found) if found else [err]


def error_dict(err: RegoError) -> dict[str, Any]:
    """One error as OPA writes an ``ast.Error`` (code, message, location, parse details)."""
    out: dict[str, Any] = {"code": err.code, "message": err.message}
    loc = err.location
    if loc is not None:
        out["location"] = {"file": loc.file, "row": loc.row, "col": loc.col}
        detail = err.detail()
        if detail is not None:
            out["details"] = {"line": detail[0], "idx": detail[1]}
    return out


def errors_text(errors: Sequence[RegoError]) -> str:
    """Several errors as one message, as Go's ``ast.Errors`` prints them."""
    if len(errors) == 1:
        return f"1 error occurred: {errors[0].format()}"
    return f"{len(errors)} errors occurred:\n" + "\n".join(e.format() for e in errors)


def from_rego(err: RegoError, status: int, code: str, message: str) -> APIError:
    """An API error carrying ``err`` (and the errors it stands for) in ``errors``."""
    return APIError(status, code, message, [error_dict(e) for e in every_error(err)])


def eval_error(err: RegoError) -> APIError:
    """An evaluation error as OPA answers it: 500, ``internal_error``, the evaluation's error inside."""
    return from_rego(err, 500, INTERNAL, MSG_EVALUATION)
