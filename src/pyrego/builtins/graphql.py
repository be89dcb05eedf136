"""GraphQL builtins: parse queries and schemas to OPA's AST shape, and validate queries.

Parsing follows gqlparser (see :mod:`graphql_parser`); validation of schemas and
of queries against schemas is done by graphql-core on the documents printed
back to GraphQL text, with gqlparser's leniencies (extensions of undefined
types define them; a schema needs no Query type; an empty query is valid).
"""

from __future__ import annotations

import json
from typing import Any

from pyrego.builtins.graphql_parser import GraphQLSyntaxError, parse_query, parse_schema, prune
from pyrego.builtins.registry import builtin, operand_error
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.convert import dumps
from pyrego.runtime.values import sorted_values, thaw


class GraphQLInvalid(Exception):
    """Validation failed; the text is OPA's message."""


# ---------------------------------------------------------------- printing


def _s(v: Any) -> str:
    return v if type(v) is str else ""


def _list(v: Any) -> list[Any]:
    return v if type(v) is list else []


def _obj(v: Any) -> dict[str, Any]:
    return v if type(v) is dict else {}


def print_type(t: Any) -> str:
    t = _obj(t)
    elem = t.get("Elem")
    text = f"[{print_type(elem)}]" if elem else _s(t.get("NamedType"))
    return text + ("!" if t.get("NonNull") is True else "")


def print_value(v: Any) -> str:
    v = _obj(v)
    kind = v.get("Kind", 0)
    raw = _s(v.get("Raw"))
    if kind == 0:
        return "$" + raw
    if kind in (3, 4):
        return json.dumps(raw, ensure_ascii=False)
    if kind == 8:
        return "[" + ", ".join(print_value(_obj(c).get("Value")) for c in _list(v.get("Children"))) + "]"
    if kind == 9:
        items = (f"{_s(_obj(c).get('Name'))}: {print_value(_obj(c).get('Value'))}" for c in _list(v.get("Children")))
        return "{" + ", ".join(items) + "}"
    return raw


def _args(args: Any) -> str:
    items = [f"{_s(_obj(a).get('Name'))}: {print_value(_obj(a).get('Value'))}" for a in _list(args)]
    return "(" + ", ".join(items) + ")" if items else ""


def _directives(ds: Any) -> str:
    return "".join(f" @{_s(_obj(d).get('Name'))}{_args(_obj(d).get('Arguments'))}" for d in _list(ds))


def _selection_set(sel: Any) -> str:
    # Fields always carry an Alias, inline fragments a TypeCondition, spreads only a Name.
    parts = []
    for s in _list(sel):
        s = _obj(s)
        if "Alias" in s:
            alias = _s(s.get("Alias"))
            name = _s(s.get("Name")) or alias
            head = f"{alias}: {name}" if alias and alias != name else name
            text = head + _args(s.get("Arguments")) + _directives(s.get("Directives"))
            if _list(s.get("SelectionSet")):
                text += " " + _selection_set(s.get("SelectionSet"))
            parts.append(text)
        elif "TypeCondition" in s or "SelectionSet" in s:
            cond = _s(s.get("TypeCondition"))
            head = f"... on {cond}" if cond else "..."
            parts.append(head + _directives(s.get("Directives")) + " " + _selection_set(s.get("SelectionSet")))
        else:
            parts.append("..." + _s(s.get("Name")) + _directives(s.get("Directives")))
    return "{ " + " ".join(parts) + " }"


def _var_defs(defs: Any) -> str:
    items = []
    for d in _list(defs):
        d = _obj(d)
        text = f"${_s(d.get('Variable'))}: {print_type(d.get('Type'))}"
        if d.get("DefaultValue"):
            text += " = " + print_value(d.get("DefaultValue"))
        items.append(text + _directives(d.get("Directives")))
    return "(" + ", ".join(items) + ")" if items else ""


def print_query(doc: dict[str, Any]) -> str:
    out = []
    for op in _list(doc.get("Operations")):
        op = _obj(op)
        head = _s(op.get("Operation")) or "query"
        name = _s(op.get("Name"))
        out.append(
            f"{head} {name}{_var_defs(op.get('VariableDefinitions'))}{_directives(op.get('Directives'))} "
            + _selection_set(op.get("SelectionSet"))
        )
    for fr in _list(doc.get("Fragments")):
        fr = _obj(fr)
        out.append(
            f"fragment {_s(fr.get('Name'))}{_var_defs(fr.get('VariableDefinition'))} on {_s(fr.get('TypeCondition'))}"
            + _directives(fr.get("Directives"))
            + " "
            + _selection_set(fr.get("SelectionSet"))
        )
    return "\n".join(out)


def _input_values(values: Any) -> list[str]:
    out = []
    for v in _list(values):
        v = _obj(v)
        text = f"{_s(v.get('Name'))}: {print_type(v.get('Type'))}"
        if v.get("DefaultValue"):
            text += " = " + print_value(v.get("DefaultValue"))
        out.append(text + _directives(v.get("Directives")))
    return out


def _definition(d: dict[str, Any], extend: bool) -> str:
    kind = _s(d.get("Kind"))
    keyword = {
        "SCALAR": "scalar",
        "OBJECT": "type",
        "INTERFACE": "interface",
        "UNION": "union",
        "ENUM": "enum",
        "INPUT_OBJECT": "input",
    }.get(kind, "type")
    text = ("extend " if extend else "") + f"{keyword} {_s(d.get('Name'))}"
    interfaces = [_s(i) for i in _list(d.get("Interfaces"))]
    if interfaces:
        text += " implements " + " & ".join(interfaces)
    text += _directives(d.get("Directives"))
    if kind in ("OBJECT", "INTERFACE"):
        fields = []
        for f in _list(d.get("Fields")):
            f = _obj(f)
            args = _input_values(f.get("Arguments"))
            arg_text = "(" + ", ".join(args) + ")" if args else ""
            fields.append(
                f"{_s(f.get('Name'))}{arg_text}: {print_type(f.get('Type'))}{_directives(f.get('Directives'))}"
            )
        if fields:
            text += " { " + " ".join(fields) + " }"
    elif kind == "INPUT_OBJECT":
        fields = _input_values(d.get("Fields"))
        if fields:
            text += " { " + " ".join(fields) + " }"
    elif kind == "UNION":
        types = [_s(t) for t in _list(d.get("Types"))]
        if types:
            text += " = " + " | ".join(types)
    elif kind == "ENUM":
        values = [_s(_obj(v).get("Name")) + _directives(_obj(v).get("Directives")) for v in _list(d.get("EnumValues"))]
        if values:
            text += " { " + " ".join(values) + " }"
    return text


def print_schema(doc: dict[str, Any]) -> str:
    """SDL text for a schema document, with extensions of undefined types made definitions."""
    out = []
    defined = {_s(_obj(d).get("Name")) for d in _list(doc.get("Definitions"))}
    for d in _list(doc.get("Definitions")):
        out.append(_definition(_obj(d), False))
    for e in _list(doc.get("Extensions")):
        e = _obj(e)
        name = _s(e.get("Name"))
        out.append(_definition(e, name in defined))
        defined.add(name)
    schemas = [(False, _obj(sd)) for sd in _list(doc.get("Schema"))]
    schemas += [(bool(schemas), _obj(sd)) for sd in _list(doc.get("SchemaExtension"))]
    for extend, sd in schemas:
        ops = [f"{_s(_obj(o).get('Operation'))}: {_s(_obj(o).get('Type'))}" for o in _list(sd.get("OperationTypes"))]
        if not extend and not ops:
            # gqlparser lets a schema extension stand alone; only its directives matter then
            continue
        head = "extend schema" if extend else "schema"
        out.append(head + _directives(sd.get("Directives")) + (" { " + " ".join(ops) + " }" if ops else ""))
    for dd in _list(doc.get("Directives")):
        dd = _obj(dd)
        args = _input_values(dd.get("Arguments"))
        arg_text = "(" + ", ".join(args) + ")" if args else ""
        rep = " repeatable" if dd.get("IsRepeatable") is True else ""
        locs = " | ".join(_s(x) for x in _list(dd.get("Locations")))
        out.append(f"directive @{_s(dd.get('Name'))}{arg_text}{rep} on {locs}")
    return "\n".join(out)


# ---------------------------------------------------------------- validation


def build_schema(doc: dict[str, Any]) -> Any:
    """A graphql-core schema for the document; raises GraphQLInvalid."""
    from graphql import GraphQLError, GraphQLSchema, build_ast_schema, parse, validate_schema

    for d in _list(doc.get("Definitions")):
        name = _s(_obj(d).get("Name"))
        if name in _PRELUDE_TYPES:
            raise GraphQLInvalid(f"Cannot redeclare type {name}.")
    for d in _list(doc.get("Directives")):
        name = _s(_obj(d).get("Name"))
        if name in _PRELUDE_DIRECTIVES:
            raise GraphQLInvalid(f"Cannot redeclare directive {name}.")
    text = print_schema(doc)
    try:
        # An empty schema document is a valid (empty) schema for gqlparser.
        schema = build_ast_schema(parse(text), assume_valid_sdl=False) if text.strip() else GraphQLSchema()
    except (GraphQLError, TypeError) as exc:
        raise GraphQLInvalid(_message(exc))
    errors = [e for e in validate_schema(schema) if "root type must be provided" not in e.message]
    if errors:
        raise GraphQLInvalid(_message(errors[0]))
    # gqlparser needs no Query type: mark the schema as checked so validate() accepts it.
    schema._validation_errors = []
    return schema


# Types and directives of gqlparser's prelude, which a schema may not redeclare.
_PRELUDE_TYPES = frozenset(
    ["Int", "Float", "String", "Boolean", "ID", "__Schema", "__Type", "__Field", "__InputValue", "__EnumValue"]
    + ["__TypeKind", "__Directive", "__DirectiveLocation"]
)
_PRELUDE_DIRECTIVES = frozenset(["include", "skip", "deprecated", "specifiedBy", "defer", "oneOf"])


def validate_query(schema: Any, doc: dict[str, Any], text: str | None = None) -> None:
    """Validate a query document against a schema; raises GraphQLInvalid with OPA's text.

    ``text`` is the query's source when it came as a string, so that error
    locations point into it.
    """
    from graphql import GraphQLError, parse, validate

    if not _list(doc.get("Operations")) and not _list(doc.get("Fragments")):
        return
    try:
        try:
            document = parse(text) if text is not None else parse(print_query(doc))
        except GraphQLError:
            document = parse(print_query(doc))
    except GraphQLError as exc:
        raise GraphQLInvalid(_message(exc))
    for op in _list(doc.get("Operations")):
        kind = _s(_obj(op).get("Operation")) or "query"
        from graphql.language import OperationType

        if schema.get_root_type(OperationType(kind)) is None:
            raise GraphQLInvalid(f'Schema does not support operation type "{kind}"')
    errors = validate(schema, document)
    if errors:
        err = errors[0]
        text = _gql_quotes(err.message).removesuffix(".")
        loc = _original_location(err)
        raise GraphQLInvalid(f"{text} in GraphQL query string at location {loc}")


def _original_location(err: Any) -> str:
    locs = err.locations or []
    if locs:
        return f"{locs[0].line}:{locs[0].column}"
    return "0:0"


def _gql_quotes(text: str) -> str:
    return text.replace("'", '"')


def _message(exc: Any) -> str:
    return _gql_quotes(getattr(exc, "message", str(exc)))


# ---------------------------------------------------------------- inputs


def _query_doc(value: Any, pos: int) -> tuple[dict[str, Any], str | None]:
    """The query document and, for string input, its text."""
    if type(value) is str:
        try:
            return parse_query(value), value
        except GraphQLSyntaxError as exc:
            raise BuiltinError(exc.opa_text())
    if type(value) is dict:
        return _as_decoded(_document(value, _QUERY_FIELDS)), None
    raise operand_error(pos, value, "string", "object")


# The fields of gqlparser's QueryDocument and SchemaDocument: OPA decodes an
# object into these Go structs (names matched ignoring case), so other keys
# are dropped.
_QUERY_FIELDS = ("Operations", "Fragments", "Comment")
_SCHEMA_FIELDS = ("Schema", "SchemaExtension", "Directives", "Definitions", "Extensions", "Comment")


def _document(value: dict[Any, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    doc = _from_object(value)
    out: dict[str, Any] = {}
    for name in fields:
        if name in doc:  # an exact match wins, as in Go
            out[name] = doc[name]
            continue
        for k, v in doc.items():
            if k.lower() == name.lower():
                out[name] = v
                break
    return out


_FIELD_KEYS = ("Arguments", "Directives", "SelectionSet")


def _decoded_selections(sel: Any) -> Any:
    """Selections as OPA's JSON round trip into gqlparser's AST yields them: every one a Field."""
    if type(sel) is not list:
        return sel
    out = []
    for s in sel:
        if type(s) is not dict:
            out.append(s)
            continue
        f = {"Alias": s.get("Alias", ""), "Name": s.get("Name", "")}
        f.update((k, s[k]) for k in _FIELD_KEYS if k in s)
        if "SelectionSet" in f:
            f["SelectionSet"] = _decoded_selections(f["SelectionSet"])
        out.append(f)
    return out


def _as_decoded(doc: dict[str, Any]) -> dict[str, Any]:
    """A query document given as an object, with its selections decoded the way OPA's are."""
    for group in ("Operations", "Fragments"):
        for d in _list(doc.get(group)):
            if type(d) is dict and "SelectionSet" in d:
                d["SelectionSet"] = _decoded_selections(d["SelectionSet"])
    return doc


def _schema_doc(value: Any, pos: int) -> dict[str, Any]:
    if type(value) is str:
        try:
            return parse_schema(value)
        except GraphQLSyntaxError as exc:
            raise BuiltinError(exc.opa_text())
    if type(value) is dict:
        return _document(value, _SCHEMA_FIELDS)
    raise operand_error(pos, value, "string", "object")


def _from_object(value: dict[Any, Any]) -> dict[str, Any]:
    plain = {(k if type(k) is str else dumps(thaw(k))): _plain(v) for k, v in value.items()}
    return plain


def _plain(v: Any) -> Any:
    if type(v) is dict:
        return _from_object(v)
    if type(v) in (list, tuple):
        return [_plain(x) for x in v]
    if type(v) in (set, frozenset):
        return [_plain(x) for x in sorted_values(v)]  # (in order, as OPA's JSON has them)
    return v


def _parse_and_validate(query: Any, schema: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    qdoc, text = _query_doc(query, 0)
    sdoc = _schema_doc(schema, 1)
    try:
        built = build_schema(sdoc)
    except GraphQLInvalid as exc:
        raise BuiltinError(f"Error in gqlparser SchemaDocument to Schema conversion: {exc}")
    try:
        validate_query(built, qdoc, text)
    except GraphQLInvalid as exc:
        raise BuiltinError(str(exc))
    return prune(qdoc), prune(sdoc)


@builtin("graphql.parse", 2)
def graphql_parse(query: Any, schema: Any) -> list[Any]:
    q, s = _parse_and_validate(query, schema)
    return [q, s]


@builtin("graphql.parse_and_verify", 2)
def graphql_parse_and_verify(query: Any, schema: Any) -> list[Any]:
    try:
        q, s = _parse_and_validate(query, schema)
    except BuiltinError:
        return [False, {}, {}]
    return [True, q, s]


@builtin("graphql.parse_query", 1)
def graphql_parse_query(query: Any) -> Any:
    if type(query) is not str:
        raise operand_error(1, query, "string")
    try:
        return prune(parse_query(query))
    except GraphQLSyntaxError as exc:
        raise BuiltinError(exc.opa_text())


@builtin("graphql.parse_schema", 1)
def graphql_parse_schema(schema: Any) -> Any:
    if type(schema) is not str:
        raise operand_error(1, schema, "string")
    try:
        return prune(parse_schema(schema))
    except GraphQLSyntaxError as exc:
        raise BuiltinError(exc.opa_text())


@builtin("graphql.is_valid", 2)
def graphql_is_valid(query: Any, schema: Any) -> bool:
    try:
        _parse_and_validate(query, schema)
    except BuiltinError:
        return False
    return True


@builtin("graphql.schema_is_valid", 1)
def graphql_schema_is_valid(schema: Any) -> bool:
    try:
        build_schema(_schema_doc(schema, 1))
    except (BuiltinError, GraphQLInvalid):
        return False
    return True
