"""Type environments: what the checker knows of variables, rules and builtins.

A :class:`TypeEnv` is a tree of types keyed by term (a variable, or the keys
of a path under ``data``) plus the environment it wraps: a comprehension's
environment wraps its body's, a body's wraps the rules', the rules' wraps the
root, which knows the builtins. Lookups go from the innermost environment
outwards, as in OPA's ``TypeEnv``; the functions here follow its
``GetByValue``/``GetByRef`` and the tree's ``Insert`` (which merges the types
of several rules defining one document).
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, Callable, Optional

from pyrego.ast.nodes import Scalar, Var
from pyrego.typecheck import static_types as T
from pyrego.typecheck.ir import IArray, ICompr, IObject, IRef, ISet, Term
from pyrego.typecheck.types_text import text_key

if TYPE_CHECKING:
    from pyrego.typecheck.check import Checker
    from pyrego.typecheck.locations import SharedLocations

Key = tuple  # ("v", name) for a variable; ("s", str) / ("n", Decimal) / ("b", bool) / ("z",) for scalars

ROOT_DOCUMENTS = frozenset({"data", "input"})


def term_key(t: Any) -> Key | None:
    """The tree key of a variable or scalar term (None for other terms)."""
    if type(t) is Var:
        return ("v", t.name)
    if type(t) is Scalar:
        v = t.value
        if v is None:
            return ("z",)
        if v is True or v is False:
            return ("b", v)
        if isinstance(v, str):
            return ("s", v)
        try:
            return ("n", Decimal(t.text if t.text is not None else str(v)).normalize())
        except InvalidOperation:
            return ("n", Decimal(0))
    return None


#: A scalar's type by its value's exact class (others, as Decimal, are told
#: by scalar_type's tests; hot callers read this table in place).
SCALAR_TYPE_BY_CLASS: dict[type, T.Type] = {
    type(None): T.NULL,
    bool: T.BOOLEAN,
    str: T.STRING,
    int: T.NUMBER,
    float: T.NUMBER,
}


def scalar_type(v: Any) -> T.Type:
    """The type of a scalar's value."""
    tpe = SCALAR_TYPE_BY_CLASS.get(v.__class__)
    if tpe is not None:
        return tpe
    if isinstance(v, str):
        return T.STRING
    return T.NUMBER


def is_constant(t: Any) -> bool:
    """No variables, refs, calls or comprehensions inside (OPA's ``IsConstant``)."""
    if type(t) is Scalar:
        return True
    if type(t) is IArray or type(t) is ISet:
        return all(is_constant(x) for x in t.items)
    if type(t) is IObject:
        return all(is_constant(k) and is_constant(v) for k, v in t.items)
    return False


def to_json(t: Any) -> Any:
    """The JSON value of a constant term (sets as arrays, as OPA's ``JSON`` gives them)."""
    if type(t) is Scalar:
        v = t.value
        if v is None or v is True or v is False or isinstance(v, str):
            return v
        return T.JNum(t.text if t.text is not None else str(v))
    if type(t) is IArray or type(t) is ISet:
        return tuple(to_json(x) for x in t.items)
    if type(t) is IObject:
        return T.JMap(tuple((_key_text(k), to_json(v)) for k, v in t.items))
    raise ValueError("not a constant")


def _key_text(k: Term) -> str:
    """An object key as OPA's JSON conversion makes it: a string as it is,
    anything else as its JSON text (``{1: "a"}`` has the key ``"1"``)."""
    v = to_json(k)
    return v if isinstance(v, str) else _go_json(v)


def _go_json(v: Any) -> str:
    """A JSON value as Go's json.Encoder writes it (compact, keys sorted, HTML escaped)."""
    import json

    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, T.JNum):
        return v.text
    if isinstance(v, str):
        text = json.dumps(v, ensure_ascii=False)
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    if isinstance(v, tuple):
        return "[" + ",".join(_go_json(x) for x in v) + "]"
    return "{" + ",".join(f"{_go_json(k)}:{_go_json(x)}" for k, x in v.pairs) + "}"


class Node:
    """A node of a type tree: the type at this path (None: none) and children by key."""

    __slots__ = ("key", "term", "value", "children")

    def __init__(self, key: Key | None = None, term: Term | None = None) -> None:
        self.key = key
        self.term = term
        self.value: T.MaybeType = None
        self.children: dict[Key, Node] = {}

    def child(self, key: Key | None) -> Node | None:
        if key is None or not self.children:
            return None
        return self.children.get(key)

    @property
    def leaf(self) -> bool:
        return self.value is not None

    def put_one(self, key: Key, term: Term, tpe: T.MaybeType) -> None:
        c = self.children.get(key)
        if c is None:
            c = self.children[key] = Node(key, term)
        c.value = tpe

    def insert(self, path: list[Term], tpe: T.MaybeType, env: TypeEnv) -> None:
        """Put ``tpe`` at ``path``, merging it with what is there and into objects on the way."""
        cur = self
        for i, term in enumerate(path):
            key = term_key(term)
            assert key is not None
            child = cur.children.get(key)
            if child is None:
                child = cur.children[key] = Node(key, term)
            elif child.value is not None and i + 1 < len(path) and isinstance(child.value, T.ObjectType):
                child.value = insert_into_object(child.value, path[i + 1 :], tpe, env)
            cur = child
        cur.value = merge_types(cur.value, tpe)
        if isinstance(tpe, T.ObjectType) and cur.children:
            for p, t in cur.leafs():
                assert isinstance(cur.value, T.ObjectType)
                cur.value = insert_into_object(cur.value, p, t, env)

    def leafs(self) -> list[tuple[list[Term], T.MaybeType]]:
        out: list[tuple[list[Term], T.MaybeType]] = []
        for c in self.children.values():
            _collect_leafs(c, [], out)
        return out


def _collect_leafs(n: Node, path: list[Term], out: list[tuple[list[Term], T.MaybeType]]) -> None:
    assert n.term is not None
    p = path + [n.term]
    if n.leaf:
        out.append((p, n.value))
        return
    for c in n.children.values():
        _collect_leafs(c, p, out)


def merge_types(a: T.MaybeType, b: T.MaybeType) -> T.MaybeType:
    """OPA's merge of two rules' types for one document."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, T.ObjectType):
        if isinstance(b, T.ObjectType) and not a.static and not b.static:
            ad, bd = a.dynamic, b.dynamic
            assert ad is not None and bd is not None
            return T.ObjectType((), (T.or_(ad[0], bd[0]), merge_types(ad[1], bd[1])))
        if isinstance(b, T.AnyType) and not a.static:
            for m in b.of:
                if isinstance(m, T.ObjectType) and not m.static and m.dynamic is not None and a.dynamic is not None:
                    # OPA widens that member in place and keeps the union as it is.
                    m.dynamic = (T.or_(m.dynamic[0], a.dynamic[0]), T.or_(m.dynamic[1], a.dynamic[1]))
                    m.nil = None  # (worked out again when asked)
                    _WIDENED[0] += 1  # (see EnvRoot.type_key)
                    return b
    elif isinstance(a, T.SetType):
        if isinstance(b, T.SetType):
            return T.SetType(T.or_(a.of, b.of))
    elif isinstance(a, T.AnyType):
        if not isinstance(b, T.AnyType):
            return merge_types(b, a)
    return T.or_(a, b)


def insert_into_object(o: T.ObjectType, path: list[Term], tpe: T.MaybeType, env: TypeEnv) -> T.ObjectType:
    if not path:
        return o
    key = env.get_by_value(path[0])
    if len(path) == 1:
        value: T.MaybeType = tpe
    else:
        value = insert_into_object(T.ObjectType(), path[1:], tpe, env)
    if o.dynamic is not None:
        dyn = (T.or_(o.dynamic[0], key), T.or_(o.dynamic[1], value))
    else:
        dyn = (key, value)
    return T.ObjectType(o.static, dyn)


#: How many times merge_types has changed a type in place (see EnvRoot.type_key).
_WIDENED = [0]


def _no_functions(name: str) -> T.FunctionType | None:
    return None


class EnvRoot:
    """What every level of one environment shares: the builtins, whether some
    schema types ``input`` (else every ref into it is any), and the
    comprehensions checked so far (see :meth:`TypeEnv.check_comprehension`).

    Kept apart from the root level itself so that no level refers to itself:
    a checked program is freed by reference counting alone."""

    __slots__ = ("functions", "input_typed", "closure_memo", "type_keys", "key_memo", "key_pins", "key_widened")

    def __init__(self, functions: Callable[[str], Optional[T.FunctionType]] = _no_functions) -> None:
        self.functions = functions
        self.input_typed = False
        self.closure_memo: dict[Any, Any] = {}
        self.type_keys: dict[tuple[Any, ...], int] = {}  # (see type_key)
        self.key_memo: dict[int, int] = {}
        self.key_pins: list[T.Type] = []
        self.key_widened = _WIDENED[0]

    def builtin(self, name: str) -> T.FunctionType | None:
        return self.functions(name)

    def type_key(self, t: T.Type) -> int:
        """A number that stands for ``t``'s text (:func:`.text_key`): the same
        for types that print the same, in this environment.

        The numbers are kept by the types' identities while the environment
        lives (each type numbered is kept alive with it), so a type met again
        costs nothing, and one that holds types numbered before costs only
        its own parts; all are forgotten when merge_types changes a type in
        place, which changes the text of every type that holds it."""
        if self.key_widened != _WIDENED[0]:
            self.key_memo.clear()
            self.key_pins.clear()
            self.key_widened = _WIDENED[0]
        memo = self.key_memo
        found = memo.get(id(t))
        if found is None:
            found = text_key(t, self.type_keys, memo)
            self.key_pins.append(t)
        return found


class TypeEnv:
    """One level of types; ``next`` is the level it wraps (None at the root)."""

    __slots__ = ("tree", "next", "checker_factory", "shared", "names", "root")

    def __init__(self, next: TypeEnv | None, checker_factory: Callable[[], Checker] | None = None) -> None:
        self.tree = Node()
        self.next = next
        self.checker_factory: Callable[[], Checker] | None = checker_factory if checker_factory is not None else (next.checker_factory if next else None)
        # Where OPA reports refs to rules (see .locations); None: where they are.
        self.shared: SharedLocations | None = next.shared if next is not None else None
        # How messages name the variables (see Lowerer.show); None: as written.
        self.names: Callable[[str], str] | None = next.names if next is not None else None
        self.root: EnvRoot = next.root if next is not None else EnvRoot()

    def wrap(self) -> TypeEnv:
        return TypeEnv(self, self.checker_factory)

    # -- lookups -----------------------------------------------------------------

    def get_by_value(self, t: Any) -> T.MaybeType:
        tt = type(t)
        if tt is Scalar:
            return scalar_type(t.value)
        if tt is Var:
            key = ("v", t.name)
            env: TypeEnv | None = self
            while env is not None:
                node = env.tree.children.get(key) if env.tree.children else None
                if node is not None:
                    return node.value
                env = env.next
            return None
        if tt is IRef:
            return self.get_by_ref(t.terms())
        if tt is IArray:
            static = tuple(self.get_by_value(x) for x in t.items)
            return T.ArrayType(static, T.ANY if not static else None)
        if tt is IObject:
            props: list[tuple[Any, T.MaybeType]] = []
            dynamic: tuple[T.MaybeType, T.MaybeType] | None = None
            for k, v in t.items:
                if is_constant(k):
                    try:
                        props.append((to_json(k), self.get_by_value(v)))
                        continue
                    except ValueError:
                        pass
                dynamic = (self.get_by_value(k), self.get_by_value(v))
            if not props and dynamic is None:
                dynamic = (T.ANY, T.ANY)
            return T.ObjectType(props, dynamic)
        if tt is ISet:
            of: T.MaybeType = None
            for x in t.items:
                of = T.or_(of, self.get_by_value(x))
            return T.SetType(of if of is not None else T.ANY)
        if tt is ICompr:
            return self.comprehension_type(t)
        return None

    def comprehension_type(self, c: ICompr) -> T.MaybeType:
        return self.check_comprehension(c)[1]

    def check_comprehension(self, c: ICompr) -> tuple[list[Any], T.MaybeType]:
        """The errors of a comprehension's body checked in this environment, and its type.

        The answer is kept per comprehension and the types of the variables it
        uses: OPA checks a comprehension once for its closures and once for its
        type, and again for every comprehension around it, which doubles the
        work at each level of nesting (a policy nesting 200 of them would never
        finish); with the answers kept, each is checked once per context."""
        memo = self.root.closure_memo
        names = memo.get(id(c))
        if names is None:
            found: list[Var] = []
            height = _compr_vars(c, found)
            names = memo[id(c)] = (c, tuple({v.name: v for v in found}.values()), height)
        if names[2] > MAX_CHECKED_NESTING:
            # Nested deeper than any real policy: not checked (the work grows
            # with the cube of the depth even so), its type unknown.
            return [], T.ANY
        # (the variables' types by what they print: a number for each, not the
        # text, which doubles with each level of types held twice)
        type_key = self.root.type_key
        signature = tuple([(v.name, type_key(t)) for v in names[1] for t in (self.get_by_value(v),) if t is not None])
        key = (id(c), signature)
        done = memo.get(key)
        if done is not None:
            return done[1], done[2]
        assert self.checker_factory is not None
        inner, errs = self.checker_factory().check_body(self, c.body)
        tpe: T.MaybeType
        if errs:
            tpe = None
        elif c.kind == "array":
            tpe = T.ArrayType((), inner.get_by_value(c.term))
        elif c.kind == "set":
            tpe = T.SetType(inner.get_by_value(c.term))
        else:
            assert c.key is not None
            tpe = T.ObjectType((), (inner.get_by_value(c.key), inner.get_by_value(c.term)))
        memo[key] = (c, errs, tpe)
        return errs, tpe

    def get_by_ref(self, ref: tuple[Term, ...]) -> T.MaybeType:
        head = ref[0]
        if type(head) is Var and head.name == "input" and not self.root.input_typed:
            return T.ANY  # no schema: input is any, and no local variable is called input
        env: TypeEnv = self
        key = term_key(head)
        while True:
            node = env.tree.child(key)
            if node is not None:
                found, tpe = env._ref_rec(node, ref, 1)
                if found:
                    return tpe
            if env.next is None:
                return env.root_ref(ref)
            env = env.next

    def _ref_rec(self, node: Node, ref: tuple[Term, ...], i: int) -> tuple[bool, T.MaybeType]:
        """(True, type) when this level answers; (False, None) to fall back to the next level."""
        while True:
            if i == len(ref):
                return True, self.extent(node)
            if node.leaf:
                if node.children:
                    c = node.child(term_key(ref[i]))
                    if c is not None:
                        node, i = c, i + 1
                        continue
                return True, select_ref(node.value, ref[i:])
            if not is_constant(ref[i]):
                return True, select_ref(self.extent(node), ref[i:])
            c = node.child(term_key(ref[i]))
            if c is None:
                return False, None
            node, i = c, i + 1

    def extent(self, node: Node) -> T.MaybeType:
        """The type of the document at ``node``: its own type, or an object of its children."""
        if node.leaf:
            return node.value
        props: list[tuple[Any, T.MaybeType]] = []
        for k, c in node.children.items():
            if k[0] in ("s", "n", "b") and c.term is not None:
                props.append((to_json(c.term), self.extent(c)))
        return T.ObjectType(props, (T.STRING, T.ANY))

    def builtin(self, name: str) -> T.FunctionType | None:
        """The builtin called ``name`` (known to the root only)."""
        return None

    def root_ref(self, ref: tuple[Term, ...]) -> T.MaybeType:
        """A ref nothing above answered (overridden by the root, which knows the builtins)."""
        head = ref[0]
        if type(head) is Var and head.name in ROOT_DOCUMENTS:
            return T.ANY
        return None


#: Comprehensions holding more levels of comprehensions than this are not type-checked.
MAX_CHECKED_NESTING = 24


def _compr_vars(t: Any, out: list[Var]) -> int:
    """The variables in a lowered term (comprehensions included) go to ``out``;
    returns how many levels of comprehensions it holds."""
    tt = type(t)
    if tt is Var:
        out.append(t)
    elif tt is IRef:
        return max([_compr_vars(x, out) for x in t.terms()])
    elif tt is IArray or tt is ISet:
        return max([_compr_vars(x, out) for x in t.items], default=0)
    elif tt is IObject:
        return max([max(_compr_vars(k, out), _compr_vars(v, out)) for k, v in t.items], default=0)
    elif tt is ICompr:
        inner = max(_compr_vars(t.key, out), _compr_vars(t.term, out))
        for e in t.body:
            inner = max(inner, _expr_vars(e, out))
        return inner + 1
    return 0


def _expr_vars(e: Any, out: list[Var]) -> int:
    height = 0
    for x in (*(e.operands or ()), e.term, e.every_key, e.every_value):
        if x is not None:
            height = max(height, _compr_vars(x, out))
    for b in e.body or ():
        height = max(height, _expr_vars(b, out))
    for w in e.withs:
        height = max(height, _compr_vars(w.target, out), _compr_vars(w.value, out))
    return height


def select_constant(tpe: T.MaybeType, term: Term) -> T.MaybeType:
    try:
        x = to_json(term)
    except ValueError:
        return None
    return T.select(tpe, x)


def select_ref(tpe: T.MaybeType, path: tuple[Term, ...]) -> T.MaybeType:
    for p in path:
        if tpe is None:
            return None
        if type(p) in (Var, IRef, IArray, IObject, ISet):
            tpe = T.values(tpe)
        else:
            tpe = select_constant(tpe, p)
    return tpe


class RootEnv(TypeEnv):
    """The outermost environment: builtin functions by name (``count``, ``object.get``)."""

    __slots__ = ("functions",)

    def __init__(
        self,
        functions: Callable[[str], Optional[T.FunctionType]],
        checker_factory: Callable[[], Checker],
        shared: SharedLocations | None = None,
        names: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(None, checker_factory)
        self.root.functions = functions
        self.functions = functions
        self.shared = shared
        self.names = names

    def builtin(self, name: str) -> T.FunctionType | None:
        return self.functions(name)

    def root_ref(self, ref: tuple[Term, ...]) -> T.MaybeType:
        head = ref[0]
        if type(head) is Var and head.name not in ROOT_DOCUMENTS:
            name = head.name
            for i in range(1, len(ref) + 1):
                fn = self.functions(name)
                if fn is not None:
                    return fn if i == len(ref) else select_ref(fn, ref[i:])
                if i == len(ref):
                    break
                p = ref[i]
                if not (type(p) is Scalar and isinstance(p.value, str)):
                    break
                name += "." + p.value
        return super().root_ref(ref)
