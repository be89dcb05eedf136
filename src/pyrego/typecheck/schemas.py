"""JSON Schemas as types: ``input`` and ``data`` documents the checker knows the shape of.

A schema reaches the checker three ways, as in OPA:

- the input schema of the whole program (``Engine.set_input_schema``,
  ``pyrego eval -s FILE``): ``input`` has its type in every rule and query;
- a schema set (``Engine.add_schema("k8s.pod", ...)``, ``-s DIR``: each file
  under ``schema.<path>``), which ``# METADATA`` blocks name::

      # METADATA
      # schemas:
      #   - input: schema.k8s.pod
      #   - data.roles: {"type": "array", "items": {"type": "string"}}

  (an inline definition needs no schema set; a ``schema.x`` with no schema
  set given is ignored, with one given and no such schema it is ``undefined
  schema: schema.x``).

:func:`schema_type` turns a schema into a type the way OPA v1.20.2 does, which
is narrower than JSON Schema: an object with ``properties`` is closed (its
``additionalProperties`` is not read), one without is ``object[any: any]``;
of several ``type`` names the first of boolean, string, number/integer,
object, array is taken; ``anyOf`` is a union, ``allOf`` a merge of its
members; ``enum``, ``const``, ``pattern`` and the other constraints are not
types and are not read. Deliberate differences: a ``$ref`` back into a schema
being read (a recursive schema) is ``any`` at the point of recursion; ``$ref``
is resolved inside the schema's own document (``#/definitions/x``,
``#/$defs/x``), never over the network or the file system; the messages of
schemas that are not valid JSON Schema name the problem in pyrego's words
except for an invalid ``type``, which is worded as OPA's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pyrego.runtime.values import PLAIN_TYPES, type_name
from pyrego.typecheck import static_types as T

_TYPE_NAMES = ("array", "boolean", "integer", "null", "number", "object", "string")


class SchemaError(ValueError):
    """A schema that cannot be read as a type (the text is OPA's message)."""


@dataclass
class SchemaSet:
    """The schemas a program is checked against: the input schema and named ones.

    ``named`` maps a path (``("k8s", "pod")`` for ``schema.k8s.pod``) to the
    raw schema; the input schema is the one at the empty path."""

    named: dict[tuple[str, ...], Any] = field(default_factory=dict)

    @property
    def input_schema(self) -> Any:
        return self.named.get(())

    def key(self) -> str:
        """A text that is equal for equal sets (part of the compile cache key)."""
        return json.dumps(sorted((list(k), v) for k, v in self.named.items()), sort_keys=True, default=str)

    def copy(self) -> SchemaSet:
        return SchemaSet(dict(self.named))


def schema_path(name: str) -> tuple[str, ...]:
    """``"k8s.pod"`` / ``"schema.k8s.pod"`` → ``("k8s", "pod")``."""
    parts = tuple(p for p in name.split(".") if p)
    if parts and parts[0] == "schema":
        parts = parts[1:]
    return parts


# ---------------------------------------------------------------- validation


_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "$defs", "dependencies")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")
_SCHEMA_VALUES = ("additionalItems", "additionalProperties", "contains", "propertyNames", "if", "then", "else", "not")


def _check_types(node: Any) -> None:
    """OPA's schema compiler refuses a ``type`` that is not a type name (or list
    of them). Only schema positions are read: a property named ``type`` is a name."""
    if not isinstance(node, dict):
        return
    if "type" in node:
        tv = node["type"]
        names = tv if isinstance(tv, list) else [tv]
        if not isinstance(tv, (str, list)) or not all(isinstance(n, str) for n in names):
            raise SchemaError("unable to compile the schema: Invalid type. Expected: type, given: string/Array Of Strings")
        for n in names:
            if n not in _TYPE_NAMES:
                raise SchemaError(
                    f"unable to compile the schema: has a primitive type that is NOT VALID -- given: /{n}/ "
                    "Expected valid values are:[array boolean integer number null object string]"
                )
    for key in _SCHEMA_MAPS:
        found = node.get(key)
        if isinstance(found, dict):
            for sub in found.values():
                _check_types(sub)
    for key in _SCHEMA_LISTS:
        found = node.get(key)
        if isinstance(found, list):
            for sub in found:
                _check_types(sub)
    for key in _SCHEMA_VALUES:
        _check_types(node.get(key))
    items = node.get("items")
    for sub in items if isinstance(items, list) else [items]:
        _check_types(sub)


def _check_valid(raw: Any) -> None:
    if not isinstance(raw, (dict, bool)):
        kind = type_name(raw) if type(raw) in PLAIN_TYPES else type(raw).__name__
        raise SchemaError(f"unable to compile the schema: schema is {kind}, not an object")
    _check_types(raw)
    try:
        import jsonschema

        cls = jsonschema.validators.validator_for(raw, default=jsonschema.Draft7Validator) if isinstance(raw, dict) else jsonschema.Draft7Validator
        cls.check_schema(raw)
    except ImportError:  # pragma: no cover - jsonschema is a dependency
        return
    except jsonschema.exceptions.SchemaError as err:
        where = "/".join(str(p) for p in err.absolute_path)
        raise SchemaError(f"unable to compile the schema: {err.message}" + (f" (at {where})" if where else "")) from None


# ---------------------------------------------------------------- conversion


class _Reader:
    """Reads one schema document into a type; ``$ref`` resolves inside ``root``."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.reading: set[str] = set()
        self.done: dict[str, T.Type] = {}
        # A $ref met again while it is read: one stand-in per ref, filled in
        # with the type read when the reading is done.
        self.standins: dict[str, T.Type] = {}

    def resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise SchemaError(f'unable to compile the schema: Get "{ref}": only references inside the schema are read')
        node = self.root
        pointer = ref[1:]
        if pointer:
            for raw_part in pointer.lstrip("/").split("/"):
                part = raw_part.replace("~1", "/").replace("~0", "~")
                if isinstance(node, dict) and part in node:
                    node = node[part]
                elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                    node = node[int(part)]
                elif isinstance(node, dict):
                    raise SchemaError(f"unable to compile the schema: Object has no key '{part}'")
                else:
                    raise SchemaError(f"unable to compile the schema: cannot resolve $ref {ref!r}")
        return node

    def read(self, s: Any) -> T.Type:
        if not isinstance(s, dict):
            return T.ANY  # true / false schemas, or anything else: no shape
        ref = s.get("$ref")
        if isinstance(ref, str):
            found = self.done.get(ref)
            if found is not None:
                return found
            target = self.resolve(ref)
            if ref in self.reading:
                return self._standin(ref, target)
            self.reading.add(ref)
            try:
                tpe = self.read(target)
            finally:
                self.reading.discard(ref)
            standin = self.standins.pop(ref, None)
            if standin is not None:
                _fill(standin, tpe)
            self.done[ref] = tpe
            return tpe
        any_of = s.get("anyOf")
        if isinstance(any_of, list) and any_of:
            out: T.MaybeType = None
            if _types(s):
                core = self.read({k: v for k, v in s.items() if k != "anyOf"})
                # Only a closed object with properties joins the union (as OPA).
                if isinstance(core, T.ObjectType) and core.static and core.dynamic is None:
                    out = core
            for member in any_of:
                out = T.or_(self.read(member), out)
            return out if out is not None else T.ANY
        all_of = s.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged = _merge([self._deref(m) for m in all_of])
            own = _types(s)
            if own:
                theirs = _types(merged)
                if ("object" in own and "object" in theirs) or ("array" in own and "array" in theirs):
                    return self.read(_merge([merged, {k: v for k, v in s.items() if k != "allOf"}]))
                if own != theirs:
                    raise SchemaError("type checking: unable to merge these schemas")
            return self.read(merged)
        names = _types(s)
        if names:
            return self._typed(s, names)
        if _properties(s):
            return self._typed(s, ["object"])
        if _has_items(s):
            return self._typed(s, ["array"])
        return T.ANY

    def _standin(self, ref: str, target: Any) -> T.Type:
        found = self.standins.get(ref)
        if found is None:
            kind = self._kind(target, set())
            if kind == "object":
                found = T.RecursiveObjectType(ref)
            elif kind == "array":
                found = T.RecursiveArrayType(ref)
            else:
                found = T.RecursiveAnyType(ref)
            self.standins[ref] = found
        return found

    def _kind(self, s: Any, seen: set[str]) -> str:
        """What :meth:`read` will make of ``s``: object, array, or anything else."""
        if not isinstance(s, dict):
            return "any"
        ref = s.get("$ref")
        if isinstance(ref, str):
            if ref in seen:
                return "any"
            seen.add(ref)
            try:
                return self._kind(self.resolve(ref), seen)
            except SchemaError:
                return "any"
        if isinstance(s.get("anyOf"), list) and s["anyOf"]:
            return "any"
        names = _types(s)
        if isinstance(s.get("allOf"), list) and s["allOf"] and not names:
            for m in s["allOf"]:
                names = names or _types(m if not isinstance(m, dict) or "$ref" not in m else self._deref(m))
        for name, kind in (("boolean", "any"), ("string", "any"), ("integer", "any"), ("number", "any"), ("object", "object"), ("array", "array")):
            if name in names:
                return kind
        if names:
            return "any"
        if _properties(s):
            return "object"
        if _items(s):
            return "array"
        return "any"

    def _deref(self, s: Any) -> Any:
        while isinstance(s, dict) and isinstance(s.get("$ref"), str) and len(s) == 1:
            s = self.resolve(s["$ref"])
        return s

    def _typed(self, s: dict[str, Any], names: list[str]) -> T.Type:
        if "boolean" in names:
            return T.BOOLEAN
        if "string" in names:
            return T.STRING
        if "integer" in names or "number" in names:
            return T.NUMBER
        if "object" in names:
            props = _properties(s)
            if props:
                return T.ObjectType([(k, self.read(v)) for k, v in props], None)
            return T.ObjectType((), (T.ANY, T.ANY))
        if "array" in names:
            if _ITEMS_LIST in s:  # a merged allOf
                items = s[_ITEMS_LIST]
                if not items:
                    return T.ArrayType((), T.ANY)
                if s[_SINGLE]:
                    return T.ArrayType((), self.read(items[0]))
                return T.ArrayType(tuple(self.read(i) for i in items), None)
            found = s.get("items")
            if isinstance(found, list) and found:
                return T.ArrayType(tuple(self.read(i) for i in found), None)
            if isinstance(found, dict):
                return T.ArrayType((), self.read(found))
            return T.ArrayType((), T.ANY)
        return T.ANY  # null, as OPA: it has no type for a null document


def _fill(standin: T.Type, tpe: T.Type) -> None:
    """Give a recursive stand-in the contents of the type it stands for."""
    if isinstance(standin, T.ObjectType) and isinstance(tpe, T.ObjectType):
        standin.static, standin.dynamic = tpe.static, tpe.dynamic
    elif isinstance(standin, T.ArrayType) and isinstance(tpe, T.ArrayType):
        standin.static, standin.dynamic = tpe.static, tpe.dynamic
    elif isinstance(standin, T.AnyType) and isinstance(tpe, T.AnyType):
        standin.of = tpe.of


def _types(s: Any) -> list[str]:
    if not isinstance(s, dict):
        return []
    tv = s.get("type")
    if isinstance(tv, str):
        return [tv]
    if isinstance(tv, list):
        return [x for x in tv if isinstance(x, str)]
    return []


def _has_items(s: dict[str, Any]) -> bool:
    return bool(_items(s))


# A merged schema's properties: (name, schema) pairs, where a name may come
# twice (OPA appends the members' properties without merging them).
_PROPS_LIST = "\x00properties"
_ITEMS_LIST = "\x00items"
_SINGLE = "\x00single"  # whether the merged items are one schema (else a tuple)


def _properties(s: dict[str, Any]) -> list[tuple[str, Any]]:
    pairs = s.get(_PROPS_LIST)
    if pairs is not None:
        return list(pairs)
    props = s.get("properties")
    return list(props.items()) if isinstance(props, dict) else []


def _items(s: dict[str, Any]) -> list[Any]:
    found = s.get(_ITEMS_LIST)
    if found is not None:
        return list(found)
    items = s.get("items")
    if isinstance(items, dict):
        return [items]
    return list(items) if isinstance(items, list) else []


def _merge(schemas: list[Any]) -> dict[str, Any]:
    """The members of an ``allOf`` as one schema, as OPA merges them: the
    first member with the others' properties and items appended (a name
    or an item may then come twice); members of different types cannot merge."""
    members = [s for s in schemas if isinstance(s, dict)]
    if not members:
        return {}
    out = dict(members[0])
    props = _properties(out)
    items = _items(out)
    single = out[_SINGLE] if _SINGLE in out else not isinstance(out.get("items"), list)
    for s in members[1:]:
        mine, theirs = _types(out), _types(s)
        if mine and theirs and mine != theirs:
            raise SchemaError("type checking: unable to merge these schemas")
        if theirs and not mine:
            out["type"] = s["type"]
        props += _properties(s)
        items += _items(s)
    out[_PROPS_LIST] = props
    out[_ITEMS_LIST] = items if not single else items[:1]
    out[_SINGLE] = single
    return out


def schema_type(raw: Any, *, validated: bool = False) -> T.Type:
    """The type a JSON Schema gives a document; SchemaError with OPA's text when it has none.

    ``validated``: :func:`check_schema` already passed it (its type is still
    read afresh: a type may be widened in place where rules' types merge)."""
    try:
        if not validated:
            _check_valid(raw)
        return _Reader(raw).read(raw)
    except RecursionError:
        raise SchemaError("unable to compile the schema: schema nested too deeply") from None


def check_schema(raw: Any) -> None:
    """Raise SchemaError (OPA's text) unless ``raw`` is a schema :func:`schema_type` can read."""
    try:
        _check_valid(raw)
    except RecursionError:
        raise SchemaError("unable to compile the schema: schema nested too deeply") from None


__all__ = ["SchemaError", "SchemaSet", "check_schema", "schema_path", "schema_type"]
