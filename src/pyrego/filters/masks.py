"""Column masks: the value of a mask rule, returned next to the filter.

The rule (``data.filters.masks``) is evaluated normally, with the known
input; its value must be an object (``{"tickets": {"email": {"replace":
{"value": "***"}}}}``) and is returned as JSON (sets as sorted arrays,
numbers as OPA's JSON carries them). Applying the masks is the caller's job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.errors import RegoError
from pyrego.filters.errors import FilterError
from pyrego.filters.ucast import json_value
from pyrego.go_json import json_kind
from pyrego.parse.parser import parse_term
from pyrego.runtime.convert import to_json_value
from pyrego.runtime.values import UNDEF

if TYPE_CHECKING:
    from pyrego.engine import Engine


def parse_mask_rule(text: str) -> str:
    """``text`` if it is a ref; a FilterError (OPA's ``parse_error``) otherwise."""
    try:
        term = parse_term(text)
    except RegoError:
        term = None
    if not isinstance(term, ast.Ref):
        raise FilterError("parse_error", f"mask rule: expected ref but got {text}")
    return text


def evaluate_masks(engine: Engine, rule: str, input: Any) -> dict[str, Any] | None:
    """The masks object, or None where the rule is undefined."""
    result = engine.eval_query(rule, input=UNDEF if input is None else input)["result"]
    if not result:
        return None
    value = result[0]["expressions"][0]["value"]
    if value is None:
        return None
    if not isinstance(value, dict):
        raise FilterError("compile_error", f"convert masks: json: cannot unmarshal {json_kind(value)} into Go value of type map[string]interface {{}}")
    return json_value(to_json_value(value))  # type: ignore[no-any-return]
