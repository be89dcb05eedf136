"""json.verify_schema and json.match_schema, reporting as OPA's gojsonschema does.

Results and error objects (``error``, ``type``, ``field``, ``desc``) must
match OPA's, so validation follows gojsonschema's own order and wording:
type first (a wrong type stops that subschema), then anyOf/oneOf/allOf/not/
dependencies/if, then the type's keywords, then ``const``/``enum``, then
properties. The ``jsonschema`` package supplies format checks; remote
``$ref`` documents are never fetched.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

from pyrego.builtins._goutil import format_float_g, valid_utf8
from pyrego.builtins.jsonschema_formats import check_format
from pyrego.builtins.registry import builtin
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.convert import reject_json_constant, to_json_value
from pyrego.runtime.input_faults import find_cycle
from pyrego.runtime.numbers import format_number, parse_number
from pyrego.runtime.values import UNDEF

_TYPES = ["array", "boolean", "integer", "number", "null", "object", "string"]
_ROOT = "(Root)"


class SchemaError(Exception):
    pass


# ---------------------------------------------------------------- loading


def _load(x: Any) -> Any:
    """A document or schema from a JSON string, an object or an array."""
    if type(x) is str:
        try:
            return json.loads(x, parse_float=parse_number, parse_int=parse_number, parse_constant=reject_json_constant)
        except (ValueError, RecursionError):
            raise SchemaError("invalid JSON string") from None
    if type(x) is dict or type(x) is list:
        return to_json_value(x)
    raise SchemaError("wrong type, expected string or object")


# ---------------------------------------------------------------- schema compilation

_DRAFTS = {
    "http://json-schema.org/draft-04/schema": 4,
    "http://json-schema.org/draft-06/schema": 6,
    "http://json-schema.org/draft-07/schema": 7,
}


class _Compiler:
    """Checks a schema the way gojsonschema parses it, with its error texts."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.draft = 0  # 0: "hybrid", any draft's keywords
        if type(root) is dict and type(root.get("$schema")) is str:
            self.draft = _DRAFTS.get(root["$schema"].rstrip("#"), 0)

    def check(self, s: Any, top: bool = False) -> None:
        if type(s) is bool:  # (at the top too: the JSON text "false" is a schema)
            return
        if type(s) is not dict:
            raise SchemaError("schema is invalid" if top else "Expected: Valid Schema, given: Invalid JSON")
        for key in ("$ref", "$id", "format", "pattern"):
            if key in s and type(s[key]) is not str:
                raise SchemaError(f"Invalid type. Expected: string, given: {key}")
        if "$ref" in s:
            self.resolve(s["$ref"])
        if "type" in s:
            t = s["type"]
            names = t if type(t) is list else [t]
            if type(t) not in (str, list) or any(type(n) is not str for n in names):
                raise SchemaError("Invalid type. Expected: type, given: string/Array Of Strings")
            seen: set[str] = set()
            for n in names:
                if n not in _TYPES:
                    raise SchemaError(
                        f"has a primitive type that is NOT VALID -- given: /{n}/ Expected valid values are:[{' '.join(_TYPES)}]"
                    )
                if n in seen:
                    raise SchemaError(f"{n} type is duplicated")
                seen.add(n)
        if "definitions" in s:
            if type(s["definitions"]) is not dict or any(
                type(v) not in (dict, bool) for v in s["definitions"].values()
            ):
                raise SchemaError("Invalid type. Expected: Array Of Schemas, given: definitions")
            for sub in s["definitions"].values():
                self.check(sub)
        if "properties" in s:
            if type(s["properties"]) is not dict:
                raise SchemaError("Properties must be of type object")
            for sub in s["properties"].values():
                self.check(sub)
        if "patternProperties" in s:
            if type(s["patternProperties"]) is not dict:
                raise SchemaError("Invalid type. Expected: valid Schema, given: patternProperties")
            for k, sub in s["patternProperties"].items():
                if not _valid_regex(k):
                    raise SchemaError(f"Invalid regex pattern '{k}'")
                self.check(sub)
        for key in ("additionalProperties", "additionalItems"):
            if key in s:
                if type(s[key]) not in (dict, bool):
                    raise SchemaError(f"Invalid type. Expected: boolean/Valid Schema, given: {key}")
                self.check(s[key])
        if "propertyNames" in s:
            if type(s["propertyNames"]) not in (dict, bool):
                raise SchemaError("Invalid type. Expected: Valid Schema, given: patternProperties")
            self.check(s["propertyNames"])
        for key in ("not", "if", "then", "else"):
            if key in s:
                if type(s[key]) not in (dict, bool):
                    raise SchemaError(f"{key} must be of an object")
                self.check(s[key])
        if "contains" in s:
            self.check(s["contains"])
        if "items" in s:
            items = s["items"]
            if type(items) is list:
                if any(type(sub) not in (dict, bool) for sub in items):
                    raise SchemaError("Invalid type. Expected: Valid Schema/Array Of Schemas, given: items")
                for sub in items:
                    self.check(sub)
            elif type(items) in (dict, bool):
                self.check(items)
            else:
                raise SchemaError("Invalid type. Expected: Valid Schema/Array Of Schemas, given: items")
        for key in ("anyOf", "oneOf", "allOf"):
            if key in s:
                if type(s[key]) is not list:
                    raise SchemaError(f"{key} must be of an array")
                for sub in s[key]:
                    self.check(sub)
        if "required" in s:
            if type(s["required"]) is not list:
                raise SchemaError("required must be of an array")
            if any(type(r) is not str for r in s["required"]):
                raise SchemaError("Invalid type. Expected: string, given: required")
        if "enum" in s:
            if type(s["enum"]) is not list:
                raise SchemaError("enum must be of an array")
            texts = [_canonical(e) for e in s["enum"]]
            if len(set(texts)) != len(texts):
                raise SchemaError("enum items must be unique")
        if "dependencies" in s:
            deps = s["dependencies"]
            if type(deps) is not dict:
                raise SchemaError("dependencies must be of type object")
            for dep in deps.values():
                if type(dep) is list:
                    if any(type(d) is not str for d in dep):
                        raise SchemaError("Dependency must be of type Schema Or Array Of Strings")
                elif type(dep) in (dict, bool):
                    self.check(dep)
                else:
                    raise SchemaError("Dependency must be of type Schema Or Array Of Strings")
        self.numbers(s)
        if "pattern" in s and not _valid_regex(s["pattern"]):
            raise SchemaError("pattern must be a valid regex")

    def numbers(self, s: dict[str, Any]) -> None:
        for key in ("minimum", "maximum"):
            if key in s and not _is_number(s[key]):
                raise SchemaError(f"{key} must be of a Number")
        if "multipleOf" in s:
            if not _is_number(s["multipleOf"]):
                raise SchemaError("Invalid type. Expected: Number, given: multipleOf")
            if s["multipleOf"] <= 0:
                raise SchemaError("multipleOf must be strictly greater than 0")
        for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if key in s:
                v = s[key]
                if type(v) is bool:
                    if self.draft not in (0, 4):
                        raise SchemaError(f"Invalid type. Expected: number, given: {key}")
                    if v and bound not in s:
                        raise SchemaError(f"{key} cannot be used without {bound}")
                elif _is_number(v):
                    if self.draft == 4:
                        raise SchemaError(f"Invalid type. Expected: boolean, given: {key}")
                else:
                    raise SchemaError(f"Invalid type. Expected: boolean/number, given: {key}")
        for key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
            if key in s:
                v = s[key]
                if not _is_int(v):
                    raise SchemaError(f"{key} must be of an integer")
                if v < 0:
                    raise SchemaError(f"{key} must be greater than or equal to 0")
        for lo, hi in (("minLength", "maxLength"), ("minProperties", "maxProperties")):
            if lo in s and hi in s and s[lo] > s[hi]:
                raise SchemaError(f"{lo} cannot be greater than {hi}")
        if "uniqueItems" in s and type(s["uniqueItems"]) is not bool:
            raise SchemaError("uniqueItems must be of a boolean")

    def resolve(self, ref: str) -> Any:
        """A local reference (``#``, ``#/definitions/x``); remote ones are refused."""
        if not ref.startswith("#"):
            raise SchemaError(f"remote reference {ref} is not allowed")
        node = self.root
        pointer = ref[1:]
        if pointer in ("", "/"):
            return node
        for part in pointer.lstrip("/").split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if type(node) is dict and part in node:
                node = node[part]
            elif type(node) is list and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SchemaError(f"Object has no key '{part}'")
        return node


def _valid_regex(pattern: str) -> bool:
    from pyrego.builtins.regex import compile_regex

    try:
        compile_regex(pattern)
    except BuiltinError:
        return False
    return True


def _is_number(x: Any) -> bool:
    return type(x) is int or type(x) is float


def _is_int(x: Any) -> bool:
    return type(x) is int or (type(x) is float and x.is_integer())


# ---------------------------------------------------------------- validation


_DESC = {
    "false": "False always fails validation",
    "required": "{property} is required",
    "invalid_type": "Invalid type. Expected: {expected}, given: {given}",
    "number_any_of": "Must validate at least one schema (anyOf)",
    "number_one_of": "Must validate one and only one schema (oneOf)",
    "number_all_of": "Must validate all the schemas (allOf)",
    "number_not": "Must not validate the schema (not)",
    "missing_dependency": "Has a dependency on {dependency}",
    "const": "{field} does not match: {allowed}",
    "enum": "{field} must be one of the following: {allowed}",
    "array_no_additional_items": "No additional items allowed on array",
    "array_min_items": "Array must have at least {min} items",
    "array_max_items": "Array must have at most {max} items",
    "unique": "{type} items[{i},{j}] must be unique",
    "contains": "At least one of the items must match",
    "array_min_properties": "Must have at least {min} properties",
    "array_max_properties": "Must have at most {max} properties",
    "additional_property_not_allowed": "Additional property {property} is not allowed",
    "invalid_property_name": 'Property name of "{property}" does not match',
    "string_gte": "String length must be greater than or equal to {min}",
    "string_lte": "String length must be less than or equal to {max}",
    "pattern": "Does not match pattern '{pattern}'",
    "format": "Does not match format '{format}'",
    "multiple_of": "Must be a multiple of {multiple}",
    "number_gte": "Must be greater than or equal to {min}",
    "number_gt": "Must be greater than {min}",
    "number_lte": "Must be less than or equal to {max}",
    "number_lt": "Must be less than {max}",
    "condition_then": 'Must validate "then" as "if" was valid',
    "condition_else": 'Must validate "else" as "if" was not valid',
}


class _Result:
    __slots__ = ("errors", "score")

    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []
        self.score = 0

    def add(self, kind: str, context: tuple[str, ...], **details: Any) -> None:
        field = ".".join(context) if context else _ROOT
        desc = _DESC[kind].format(field=field, **details)
        self.errors.append({"error": f"{field}: {desc}", "type": kind, "field": field, "desc": desc})

    def merge(self, other: _Result) -> None:
        self.errors.extend(other.errors)
        self.score += other.score


def _canonical(v: Any) -> str:
    """JSON text with normalised numbers, for const/enum/uniqueItems comparisons."""
    if type(v) is dict:
        return "{" + ",".join(json.dumps(k) + ":" + _canonical(v[k]) for k in sorted(v)) + "}"
    if type(v) is list:
        return "[" + ",".join(_canonical(x) for x in v) + "]"
    if type(v) is bool or v is None:
        return json.dumps(v)
    if type(v) is int or type(v) is float:
        return format_number(_norm(v))
    return json.dumps(valid_utf8(v), ensure_ascii=False)


def _norm(x: int | float) -> int | float:
    return int(x) if type(x) is float and x.is_integer() else x


def _num_text(x: int | float) -> str:
    """How gojsonschema prints a number bound (a big.Float with %v)."""
    if type(x) is int or (type(x) is float and x.is_integer() and abs(x) < 1e21):
        return str(int(x))
    return format_float_g(float(x))


def _rat(x: int | float) -> Fraction:
    return Fraction(x) if type(x) is int else Fraction(Decimal(repr(x)))


class _Validator:
    def __init__(self, compiler: _Compiler) -> None:
        self.c = compiler

    def sub(self, schema: Any, value: Any, ctx: tuple[str, ...]) -> _Result:
        r = _Result()
        self.validate(schema, value, r, ctx)
        return r

    def validate(self, s: Any, value: Any, r: _Result, ctx: tuple[str, ...]) -> None:
        if type(s) is bool:
            if not s:
                r.add("false", ctx)
            return
        if "$ref" in s and type(s["$ref"]) is str:
            self.validate(self.c.resolve(s["$ref"]), value, r, ctx)
            return
        types = s.get("type")
        types = [types] if type(types) is str else (types or [])
        t = type(value)
        if value is None:
            given = "null"
        elif t is bool:
            given = "boolean"
        elif t is int or t is float:
            given = "integer" if _is_int(value) else "number"
        elif t is str:
            given = "string"
        elif t is list:
            given = "array"
        else:
            given = "object"
        if types:
            ok = given in types or (given == "integer" and "number" in types)
            if not ok:
                expected = types[0] if len(types) == 1 else "[" + ",".join(types) + "]"
                r.add("invalid_type", ctx, expected=expected, given=given)
                return
        self.combinators(s, value, r, ctx)
        if given in ("integer", "number"):
            self.number(s, value, r, ctx)
        elif given == "array":
            self.array(s, value, r, ctx)
        elif given == "object":
            self.object(s, value, r, ctx)
        self.common(s, value, r, ctx)
        if given == "string":
            self.string(s, value, r, ctx)
        elif given == "object":
            for k, sub in (s.get("properties") or {}).items():
                if k in value:
                    self.validate(sub, value[k], r, (*ctx, k))
        r.score += 1

    def combinators(self, s: dict[str, Any], value: Any, r: _Result, ctx: tuple[str, ...]) -> None:
        if s.get("anyOf"):
            best: _Result | None = None
            for sub in s["anyOf"]:
                res = self.sub(sub, value, ctx)
                if not res.errors:
                    break
                if best is None or res.score > best.score:
                    best = res
            else:
                r.add("number_any_of", ctx)
                if best is not None:
                    r.merge(best)
        if s.get("oneOf"):
            n = 0
            best = None
            for sub in s["oneOf"]:
                res = self.sub(sub, value, ctx)
                if not res.errors:
                    n += 1
                elif n == 0 and (best is None or res.score > best.score):
                    best = res
            if n != 1:
                r.add("number_one_of", ctx)
                if n == 0 and best is not None:
                    r.merge(best)
        if s.get("allOf"):
            n = 0
            for sub in s["allOf"]:
                res = self.sub(sub, value, ctx)
                if not res.errors:
                    n += 1
                r.merge(res)
            if n != len(s["allOf"]):
                r.add("number_all_of", ctx)
        if "not" in s:
            if not self.sub(s["not"], value, ctx).errors:
                r.add("number_not", ctx)
        if type(value) is dict and s.get("dependencies"):
            for key in sorted(value):
                dep = s["dependencies"].get(key, UNDEF)
                if dep is UNDEF:
                    continue
                if type(dep) is list:
                    for d in dep:
                        if d not in value:
                            r.add("missing_dependency", ctx, dependency=d)
                else:
                    self.validate(dep, value, r, ctx)
        if "if" in s:
            ok = not self.sub(s["if"], value, ctx).errors
            branch, kind = ("then", "condition_then") if ok else ("else", "condition_else")
            if branch in s:
                res = self.sub(s[branch], value, ctx)
                if res.errors:
                    r.add(kind, ctx)
                    r.merge(res)
        r.score += 1

    def common(self, s: dict[str, Any], value: Any, r: _Result, ctx: tuple[str, ...]) -> None:
        if "const" in s and _canonical(value) != _canonical(s["const"]):
            r.add("const", ctx, allowed=_canonical(s["const"]))
        if "enum" in s:
            allowed = [_canonical(e) for e in s["enum"]]
            if _canonical(value) not in allowed:
                r.add("enum", ctx, allowed=", ".join(allowed))

    def number(self, s: dict[str, Any], value: int | float, r: _Result, ctx: tuple[str, ...]) -> None:
        n = _rat(value)
        if "multipleOf" in s and (n / _rat(s["multipleOf"])).denominator != 1:
            r.add("multiple_of", ctx, multiple=_num_text(s["multipleOf"]))
        for bound, excl, strict_kind, kind, sign in (
            ("maximum", "exclusiveMaximum", "number_lt", "number_lte", 1),
            ("minimum", "exclusiveMinimum", "number_gt", "number_gte", -1),
        ):
            limit = s.get(bound, UNDEF)
            exclusive = s.get(excl, False)
            if _is_number(exclusive) and type(exclusive) is not bool:
                limit, exclusive = exclusive, True
            if limit is UNDEF or not _is_number(limit):
                continue
            cmp = (n > _rat(limit)) - (n < _rat(limit))
            name = "max" if sign == 1 else "min"
            if exclusive is True:
                if cmp * sign >= 0:
                    r.add(strict_kind, ctx, **{name: _num_text(limit)})
            elif cmp == sign:
                r.add(kind, ctx, **{name: _num_text(limit)})

    def string(self, s: dict[str, Any], value: str, r: _Result, ctx: tuple[str, ...]) -> None:
        length = len(value)
        if "minLength" in s and length < s["minLength"]:
            r.add("string_gte", ctx, min=_num_text(s["minLength"]))
        if "maxLength" in s and length > s["maxLength"]:
            r.add("string_lte", ctx, max=_num_text(s["maxLength"]))
        if "pattern" in s:
            from pyrego.builtins.regex import regex_match

            if not regex_match(s["pattern"], value):
                r.add("pattern", ctx, pattern=s["pattern"])
        if "format" in s and not check_format(s["format"], value):
            r.add("format", ctx, format=s["format"])

    def array(self, s: dict[str, Any], value: list[Any], r: _Result, ctx: tuple[str, ...]) -> None:
        items = s.get("items", UNDEF)
        if type(items) is dict or type(items) is bool:
            for i, v in enumerate(value):
                r.merge(self.sub(items, v, (*ctx, str(i))))
        elif type(items) is list and items:
            for i, (sub, v) in enumerate(zip(items, value)):
                r.merge(self.sub(sub, v, (*ctx, str(i))))
            if len(items) < len(value):
                extra = s.get("additionalItems", True)
                if extra is False:
                    r.add("array_no_additional_items", ctx)
                elif type(extra) is dict:
                    for i in range(len(items), len(value)):
                        r.merge(self.sub(extra, value[i], (*ctx, str(i))))
        if "minItems" in s and len(value) < s["minItems"]:
            r.add("array_min_items", ctx, min=_num_text(s["minItems"]))
        if "maxItems" in s and len(value) > s["maxItems"]:
            r.add("array_max_items", ctx, max=_num_text(s["maxItems"]))
        if s.get("uniqueItems") is True:
            seen: dict[str, int] = {}
            for j, v in enumerate(value):
                text = _canonical(v)
                if text in seen:
                    r.add("unique", ctx, type="array", i=seen[text], j=j)
                seen[text] = j
        if "contains" in s:
            best: _Result | None = None
            for i, v in enumerate(value):
                res = self.sub(s["contains"], v, (*ctx, str(i)))
                if not res.errors:
                    break
                if best is None or res.score > best.score:
                    best = res
            else:
                r.add("contains", ctx)
                if best is not None:
                    r.merge(best)

    def object(self, s: dict[str, Any], value: dict[str, Any], r: _Result, ctx: tuple[str, ...]) -> None:
        if "minProperties" in s and len(value) < s["minProperties"]:
            r.add("array_min_properties", ctx, min=_num_text(s["minProperties"]))
        if "maxProperties" in s and len(value) > s["maxProperties"]:
            r.add("array_max_properties", ctx, max=_num_text(s["maxProperties"]))
        for req in s.get("required", ()):
            if req in value:
                r.score += 1
            else:
                r.add("required", ctx, property=req)
        props = s.get("properties") or {}
        patterns = s.get("patternProperties") or {}
        extra = s.get("additionalProperties", True)
        from pyrego.builtins.regex import regex_match

        for k in sorted(value):
            matched = False
            for pat, sub in patterns.items():
                if regex_match(pat, k):
                    matched = True
                    r.merge(self.sub(sub, value[k], (*ctx, k)))
            if matched:
                r.score += 1
            if k not in props and not matched:
                if extra is False:
                    r.add("additional_property_not_allowed", ctx, property=k)
                elif type(extra) is dict:
                    r.merge(self.sub(extra, value[k], (*ctx, k)))
        if "propertyNames" in s:
            for k in sorted(value):
                res = self.sub(s["propertyNames"], k, ctx)
                if res.errors:
                    r.add("invalid_property_name", ctx, property=k)
                    r.merge(res)


def _compile(schema: Any) -> _Compiler:
    c = _Compiler(schema)
    try:
        c.check(schema, top=True)
    except RecursionError:
        raise SchemaError("schema is too deeply nested") from None
    return c


@builtin("json.verify_schema", 1)
def json_verify_schema(schema: Any) -> list[Any]:
    try:
        _compile(_load(schema))
    except SchemaError as e:
        return [False, f"jsonschema: {e}"]
    return [True, None]


@builtin("json.match_schema", 2)
def json_match_schema(document: Any, schema: Any) -> list[Any]:
    try:
        doc = _load(document)
        compiled = _compile(_load(schema))
        root = compiled.root
        result = _Result()
        _Validator(compiled).validate(root, doc, result, ())
    except SchemaError as e:
        raise BuiltinError(str(e)) from None
    except RecursionError:
        if find_cycle(document) is not None or find_cycle(schema) is not None:
            raise  # (the caller's input contains itself: the evaluation's error names the cycle)
        raise BuiltinError("document or schema is too deeply nested") from None
    # an empty enum accepts nothing (newer OPA); gojsonschema skipped it
    return [not result.errors, result.errors]
