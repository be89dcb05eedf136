"""Schema types put where a rule reads ``input`` or ``data`` (OPA's schema annotations).

For each rule the checker gathers the ``schemas:`` of the ``# METADATA``
blocks that apply to it, as OPA does: ``subpackages`` blocks of the packages
above it (outermost first), the ``package`` block, the ``document`` block of
its path, then its ``rule`` blocks. Each ``path: schema`` pair puts the
schema's type at ``path`` in the environment the rule's body is checked in:
the whole document when nothing above the path is typed (``input`` with no
input schema), else the typed document with that path overridden (OPA's
``override``), so that ``input.user: {...}`` keeps the rest of a typed
``input`` and ``data.roles: {...}`` keeps the types of the rules beside it.
"""

from __future__ import annotations

from typing import Any

from pyrego.ast import nodes as ast
from pyrego.ast.nodes import Scalar, Var
from pyrego.compile.base import CompiledTree
from pyrego.errors import Location
from pyrego.typecheck import static_types as T
from pyrego.typecheck.env import Node, TypeEnv, term_key, to_json
from pyrego.typecheck.schemas import SchemaError, SchemaSet, check_schema, schema_type
from pyrego.typecheck.terms import TypeErr

Entry = tuple[tuple[Any, ...], str | None, Any]  # (path terms, schema ref text, inline definition)
_DYNAMIC_ANY = (T.ANY, T.ANY)


def _terms(text: str) -> tuple[Any, ...] | None:
    """``input.a["b"]`` → (Var input, Scalar a, Scalar b); None when it is not a ref."""
    from pyrego.parse.parser import parse_query  # noqa: PLC0415 - only for programs that declare schemas

    body = parse_query(text)
    stmt = body[0].statement if len(body) == 1 else None
    if isinstance(stmt, Var):
        return (stmt,)
    if isinstance(stmt, ast.Ref) and isinstance(stmt.head, Var):
        return (stmt.head, *stmt.path)
    return None


def _ref_text(terms: tuple[Any, ...]) -> str:
    return ast.ref_to_string(ast.Ref(terms[0], tuple(terms[1:])))


def _entries(annotation: ast.Annotation) -> list[Entry]:
    out: list[Entry] = []
    items: Any = annotation.data.get("schemas") or ()
    for item in items:
        if not isinstance(item, dict):
            continue
        for path, value in item.items():
            terms = _terms(str(path))
            if terms is None:
                continue
            if isinstance(value, str):
                ref = _terms(value)
                out.append((terms, _ref_text(ref) if ref is not None else value, None))
            else:
                out.append((terms, None, value))
    return out


def _schema_items(a: ast.Annotation) -> list[Any]:
    items = a.data.get("schemas")
    return items if isinstance(items, list) else []


def has_metadata(meta: Any) -> bool:
    """Whether the program has a ``# METADATA`` block at all (a compiled tree's ``metadata``)."""
    return bool(meta.rules or meta.documents or meta.packages or meta.subpackages)


class SchemaAnnotations:
    """The schema annotations of one program, applied rule by rule."""

    def __init__(self, tree: CompiledTree, schemas: SchemaSet | None) -> None:
        meta = tree.metadata
        self.meta = meta
        self.schemas = schemas
        self.types: dict[str, T.Type] = {}  # by schema ref (schema.x), read once
        # Per annotation (by id, kept alive here): its parsed entries, and for
        # each inline schema whether it is valid (its type is read per rule, as OPA does).
        self.entries: dict[int, tuple[ast.Annotation, list[Entry]]] = {}
        self.inline_errors: dict[int, tuple[Any, str | None]] = {}
        self.active = False
        self.mentions_input = False
        if not has_metadata(meta):
            return  # (most programs): nothing to read
        groups = [
            list(meta.rules.values()),
            [a for more in meta.more_rules.values() for a in more],
            [a for docs in meta.documents.values() for a in docs],
            [a for pkgs in meta.packages.values() for a in pkgs],
            [a for subs in meta.subpackages.values() for a in subs],
        ]
        declared = [a for g in groups for a in g if a.data.get("schemas")]
        self.active = bool(declared)
        self.mentions_input = any(
            str(p).split(".")[0].split("[")[0] == "input" for a in declared for item in _schema_items(a) if isinstance(item, dict) for p in item
        )

    def for_rule(self, rule: ast.Rule, pkg: tuple[str, ...]) -> list[ast.Annotation]:
        """The blocks that apply to ``rule``, in OPA's order."""
        if not self.active:
            return []
        meta = self.meta
        out: list[ast.Annotation] = []
        for i in range(len(pkg) + 1):
            out += meta.subpackages.get(pkg[:i], [])
        out += meta.packages.get(pkg, [])
        path = meta.rule_paths.get(rule.location)
        if path is not None:
            out += meta.documents.get(path, [])
        first = meta.rules.get(rule.location)
        if first is not None:
            out.append(first)
            out += meta.more_rules.get(rule.location, [])
        return [a for a in out if a.data.get("schemas")]

    def apply(self, env: TypeEnv, rule: ast.Rule, annotations: list[ast.Annotation], errors: list[TypeErr]) -> None:
        """Put the schemas' types into ``env`` (the rule's own level); errors go to ``errors``."""
        for a in annotations:
            known = self.entries.get(id(a))
            if known is None:
                known = self.entries[id(a)] = (a, _entries(a))
            for terms, ref, definition in known[1]:
                tpe = self._type(ref, definition, rule.location, errors)
                if tpe is None:
                    continue
                prefix, have = _prefix(env, terms)
                if have is None or len(prefix) == len(terms):
                    _put(env.tree, terms, tpe)
                    continue
                try:
                    _put(env.tree, prefix, _override(terms[len(prefix) :], have, tpe))
                except SchemaError as err:
                    errors.append(TypeErr(rule.location, str(err)))

    def _type(self, ref: str | None, definition: Any, where: Location, errors: list[TypeErr]) -> T.Type | None:
        if ref is not None:
            if self.schemas is None:
                return None  # no schema set given: references are not followed (as OPA)
            found = self.types.get(ref)
            if found is not None:
                return found
            from pyrego.typecheck.schemas import schema_path

            raw = self.schemas.named.get(schema_path(ref), _MISSING)
            if raw is _MISSING:
                errors.append(TypeErr(where, f"undefined schema: {ref}"))
                return None
            try:
                found = self.types[ref] = schema_type(raw)
            except SchemaError as err:
                errors.append(TypeErr(where, str(err)))
                return None
            return found
        checked = self.inline_errors.get(id(definition))
        if checked is None:
            try:
                check_schema(definition)
                checked = (definition, None)
            except SchemaError as err:
                checked = (definition, str(err))
            self.inline_errors[id(definition)] = checked
        if checked[1] is not None:
            errors.append(TypeErr(where, checked[1]))
            return None
        try:
            return schema_type(definition, validated=True)
        except SchemaError as err:
            errors.append(TypeErr(where, str(err)))
            return None


_MISSING = object()


def _prefix(env: TypeEnv, terms: tuple[Any, ...]) -> tuple[tuple[Any, ...], T.MaybeType]:
    """The shortest prefix of ``terms`` the environment has a type for (OPA's getPrefix)."""
    if len(terms) == 1:
        t = env.get_by_ref(terms)
        if t is not None:
            return terms, t
    for i in range(1, len(terms)):
        t = env.get_by_ref(terms[:i])
        if t is not None:
            return terms[:i], t
    return (), None


def _put(node: Node, terms: tuple[Any, ...], tpe: T.Type) -> None:
    for t in terms:
        key = term_key(t)
        if key is None:
            return
        child = node.children.get(key)
        if child is None:
            child = node.children[key] = Node(key, t)
        node = child
    node.value = tpe


def _key(t: Any) -> Any:
    if type(t) is not Scalar:
        raise SchemaError(f"error getting key from value: {getattr(t, 'name', t)} is not a constant")
    return to_json(t)


def _object_for(keys: tuple[Any, ...], o: T.Type, dynamic: tuple[T.MaybeType, T.MaybeType] | None) -> T.ObjectType:
    """``{k1: {k2: ... o}}``, each level with ``dynamic`` (OPA's getObjectType)."""
    inner: T.Type = o
    for k in reversed(keys[1:]):
        inner = T.ObjectType([(_key(k), inner)], dynamic)
    return T.ObjectType([(_key(keys[0]), inner)], dynamic)


def _override(path: tuple[Any, ...], t: T.Type, o: T.Type) -> T.Type:
    """``t`` with the document at ``path`` inside it typed ``o``."""
    if not isinstance(t, T.ObjectType):
        return _object_for(path, o, _DYNAMIC_ANY)
    head = _key(path[0])
    props: list[tuple[Any, T.MaybeType]] = []
    found = False
    for k, v in t.static:
        if T.compare_json(k, head) == 0:
            found = True
            if len(path) == 1:
                v = o
            else:
                assert v is not None
                v = _override(path[1:], v, o)
        props.append((k, v))
    if not found:
        props += list(_object_for(path, o, t.dynamic).static)
    return T.ObjectType(props, t.dynamic)


def input_type(schemas: SchemaSet | None, errors: list[TypeErr]) -> T.Type | None:
    """The type of ``input`` in every rule, from the input schema (None: any)."""
    if schemas is None or schemas.input_schema is None:
        return None
    try:
        return schema_type(schemas.input_schema)
    except SchemaError as err:
        errors.append(TypeErr(Location("", 0, 0), str(err)))
        return None


__all__ = ["SchemaAnnotations", "input_type"]
