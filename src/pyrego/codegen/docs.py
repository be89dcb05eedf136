"""Code generation for documents defined at several levels of the rule tree.

``deny[u].reason := ...`` defines part of the document ``data.p.deny`` (the
rules at the node ``deny``, whose keys are variables: the node's *own part*),
and ``deny.root.audit := ...`` another part, from a node deeper down. OPA's
document is the union of the two, so

- the document of such a node, ``R<id>``, is its own part ``P<id>`` merged
  with the documents of its children (:func:`own_part_lines`);
- a read that goes past such a node into a child (``data.p.deny.root``) is the
  union of the child's document and the part of each such node above it
  (:func:`ground_document_name`), evaluating neither the rest of the node's
  children nor anything the ref does not reach;
- a read whose key is computed, below a node that holds packages or rules
  (``data.t[name].deny``), evaluates for the key's child only the document the
  constant keys after it name (:func:`child_table_name`), as OPA does: a test
  in package ``t.a`` calling ``data.t[name].deny`` must not evaluate itself;
- a read of several computed or iterated keys (``data.rules[cat][title].notices``)
  follows the keys down the rule tree (:func:`key_trie_name`): a node holding
  rules gives its document, keys leading off the tree read base data only, and
  nothing the keys do not lead to is evaluated, as OPA's rule tree does.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Callable

from pyrego.ast import nodes as ast
from pyrego.codegen.key_order import rule_var_names
from pyrego.codegen.set_members import (
    member_reader_name,
    own_member_reader_name,
    path_depth,
    path_reader_name,
    skips_rules,
)
from pyrego.compile.base import (
    FUNCTION,
    PARTIAL_OBJECT,
    PARTIAL_SET,
    RuleNode,
    key_value,
    path_key,
    rule_suffix,
    tree_keys,
)
from pyrego.compile.ground import iterated_terms
from pyrego.compile.index_guards import program_can_conflict
from pyrego.compile.index_order import merged_order
from pyrego.errors import EvalConflictError
from pyrego.runtime.docs import (
    SYSTEM_KEY,
    Depths,
    Part,
    below,
    ground_document,
    keyed_part,
    nonempty_part,
    own_key,
    pruned_document,
    rt_own_at,
)
from pyrego.runtime.helpers import rt_get
from pyrego.runtime.values import UNDEF, freeze

if TYPE_CHECKING:
    from pyrego.codegen.body import BodyEmitter
    from pyrego.codegen.generator import ModuleGen

def rule_path_suffix(gen: ModuleGen, em: BodyEmitter, node: RuleNode, rule: ast.Rule) -> tuple[ast.Term, ...]:
    """The part of ``rule``'s head path after its constant strings; first
    writes the code making the objects (or the set) of the path that OPA
    makes whether the body succeeds or not (see :func:`path_made`)."""
    suffix = rule_suffix(0, rule)
    made = path_made(gen, node, rule)
    if made is not None:
        fn, keys = made
        em.w(f"{fn}(acc, ({''.join(em.term(k) + ', ' for k in keys)}), {gen.loc(rule.head.location)})")
    return suffix


# RuleNode -> where OPA's rule tree holds each of its rules (tree_keys), once per node.
_HELD: weakref.WeakKeyDictionary[RuleNode, frozenset[tuple[Any, ...]]] = weakref.WeakKeyDictionary()


def _held(node: RuleNode) -> frozenset[tuple[Any, ...]]:
    held = _HELD.get(node)
    if held is None:
        held = _HELD[node] = frozenset([tree_keys(r) for r in node.rules])
    return held


def _dynamic_at(node: RuleNode) -> bool:
    """Whether a rule of ``node`` has a variable right after its constant
    strings (``p[x].y := v``): OPA's rule tree then holds rules at ``node``
    itself, and evaluates its document (all below it too) from rules."""
    return node.kind == PARTIAL_OBJECT and () in _held(node)


def path_made(gen: ModuleGen, node: RuleNode, rule: ast.Rule) -> tuple[str, tuple[ast.Term, ...]] | None:
    """What ``rule`` (of the partial object at ``node``) makes before its body
    runs, as OPA's rule tree has a node for each constant key of a rule's
    path and makes an object at each node that holds no rules:
    ``("rt_obj_add_path", keys)`` the objects at ``keys`` (``a[1].b := v``:
    ``{1: {}}``; ``a[1][x] := v``: ``{1: {}}``, the document of rules there),
    ``("rt_obj_add_leaf", keys)`` the set at ``keys`` (``a[1] contains y``),
    or None. Nothing where a rule at ``node`` or above has a variable right
    after its constant strings, nor below a node of the path that holds
    another rule (whose document OPA evaluates from its rules)."""
    if node.kind != PARTIAL_OBJECT:
        return None
    for i in range(1, len(node.path) + 1):
        above = gen.tree.nodes.get(node.path[:i])
        if above is not None and _dynamic_at(above):
            return None
    suffix = rule_suffix(0, rule)
    ground = tree_keys(rule)
    n = len(ground)
    at = _held(node)
    for i in range(n):
        if ground[:i] in at:
            return ("rt_obj_add_path", suffix[:i]) if i else None
    if n < len(suffix):
        return ("rt_obj_add_path", suffix[:n])
    if rule.head.value is None:
        return ("rt_obj_add_leaf", suffix)
    return ("rt_obj_add_path", suffix[: n - 1]) if n > 1 else None


def makes_path(gen: ModuleGen, node: RuleNode, rule: ast.Rule) -> bool:
    """Whether ``rule`` makes objects or a set of its path (:func:`path_made`)."""
    return path_made(gen, node, rule) is not None


def has_own_part(gen: ModuleGen, node: RuleNode) -> bool:
    """Whether ``node``'s document joins rules with variable keys (its own
    part, ``P<id>``) and rules below its children."""
    return node.kind == PARTIAL_OBJECT and gen._rules_below_children(node)


def own_part_lines(gen: ModuleGen, node: RuleNode, defs: list[str], tick: str, order: tuple[int, ...] | None = None) -> list[str]:
    """``P<id>`` (the node's own rules) and ``R<id>`` (that merged with each
    child's document) for a partial object with rules below its children
    (``order``: the positions of ``defs``' rules, None: their source order)."""
    gen.own_parts.add(node.id)
    key = gen.literal(own_key(node.id))
    out = [f"def P{node.id}(ctx):", "    c = ctx.cache", f"    r = c.get({key}, MISS)", "    if r is not MISS: return r", "    acc = {VALUES: set()}"]
    out += [f"    {d}(ctx, acc)" for d in defs]
    # (the objects its rules gave stay known: see runtime.docs)
    out += [f"    c[{key}] = acc", "    return acc", ""]
    # The part read at one key (PK<id>), with its rules' bodies (PD<id>) to
    # run again where a conflict under another key must not raise.
    out += [f"def PD{node.id}(ctx, acc):"] + [f"    {d}(ctx, acc)" for d in defs] + ["    pass", ""]
    member = own_member_reader_name(gen, node, tuple(defs))  # (rules of one key each: run for the key read)
    read = "rt_own_at" if member is None else "rt_own_key"
    out += [f"def PK{node.id}(ctx, keys):", f"    return {read}(ctx, P{node.id}, PD{node.id}, {gen.literal('K' + own_key(node.id))}, keys{'' if member is None else ', ' + member})", ""]
    out += [f"def R{node.id}(ctx):", "    c = ctx.cache", f"    r = c.get({node.id}, MISS)", "    if r is not MISS: return r", tick]
    constant = not any(_dynamic_at(gen.tree.nodes[node.path[:i]]) for i in range(1, len(node.path) + 1) if node.path[:i] in gen.tree.nodes)
    out += _merged_order_lines(gen, node, defs, order, key, constant)
    out.append(f"    acc = dict(P{node.id}(ctx))")
    # Rules with only constants in their paths (a.b[1] contains y): in OPA
    # none of them is the node's own, and each child is its whole document
    # (an empty set or object when its rules define nothing).
    for name, child in sorted(node.children.items()):
        if child.kind != FUNCTION and gen._has_rules_below(child):
            depths = gen.const(below(own_depths(node))), gen.const(doc_depths(gen, child))
            fn, at = document_function(gen, child) if constant else part_function(gen, child), where(gen, child)
            out.append(f"    rt_doc_put(acc, {gen.literal(name)}, {fn}(ctx), {depths[0]}, {depths[1]}, {at})")
    out.append("    r = rt_obj_done(acc)")
    return out


def _merged_order_lines(gen: ModuleGen, node: RuleNode, defs: list[str], order: tuple[int, ...] | None, key: str, constant: bool) -> list[str]:
    """Where OPA evaluates some of the children's documents before some of
    the node's own rules (compile.index_order.merged_order) and the order can
    show (an error, a print): lines computing the own part ``P<id>`` in that
    order, its rules and those children's documents interleaved (the
    documents are kept in the cache, for the merge after)."""
    if not (gen.strict_errors or gen.tree.calls_print or program_can_conflict(gen.tree.root)):
        return []
    merged = merged_order(node, gen.tree.root, gen.arity)
    if merged is None:
        return []
    by_position = dict(zip(order if order is not None else range(len(defs)), defs))
    lines = [f"    if c.get({key}, MISS) is MISS:", "        acc = {VALUES: set()}"]
    for item in merged:
        if isinstance(item, int):
            lines.append(f"        {by_position[item]}(ctx, acc)")
            continue
        child = node.children[item]
        if gen._has_rules_below(child):
            lines.append(f"        {document_function(gen, child) if constant else part_function(gen, child)}(ctx)")
    lines.append(f"        c[{key}] = acc")
    return lines


def install_own_parts(gen: ModuleGen) -> None:
    """Stand-ins for the own parts ``P<id>``, whose code is that of ``R<id>``:
    each compiles it on first call, which defines ``P<id>`` itself."""
    namespace = gen.namespace
    for nid in gen.own_parts:
        for fn in (f"P{nid}", f"PK{nid}", f"PD{nid}"):

            def stub(*args: Any, name: str = fn, owner: str = f"R{nid}") -> Any:
                gen.load(owner)
                return namespace[name](*args)

            namespace[fn] = stub



def materializer_lines(gen: ModuleGen, node: RuleNode) -> list[str]:
    """``N<id>(ctx)``: the document at ``node``, which holds no rules but has
    some below it: its base data with its children's documents put in."""
    root = not node.path
    lines = [
        f"def N{node.id}(ctx):",
        "    c = ctx.cache",
        f"    r = c.get({-node.id - 1}, MISS)",
        "    if r is not MISS: return r",
        "    base = rt_root_base(ctx.data)" if root else f"    base = rt_path(ctx.data, {gen.const(node.path)})",
        # Base data that is not an object can only be here with no rule
        # below (a rule would have been refused): an empty package's document.
        "    if base is not UNDEF and type(base) is not dict: return base",
        "    r = dict(base) if type(base) is dict else {}",
    ]
    system = None
    for name, child in sorted(node.children.items()):
        if child.kind == FUNCTION:
            continue
        if child.has_rules():
            fn = f"R{child.id}"
        elif gen._has_rules_below(child):
            gen.materialize_later(child)
            fn = f"N{child.id}"
        else:
            continue
        if root and name == SYSTEM_KEY:
            system = fn  # (the root document read whole leaves it out; see root_iterated)
            continue
        lines.append(f"    v = {fn}(ctx)")
        lines.append(f"    if v is not UNDEF: r[{gen.literal(name)}] = v")
    # Where base data and rules meet, iteration follows OPA's rule tree order.
    lines += ["    if type(base) is dict and base: rt_tree_order(ctx, r, base)", f"    c[{-node.id - 1}] = r", "    return r", ""]
    if root:
        # The root document as a ref iterating its keys sees it: the rules under system too.
        read = f"rt_with_system(ctx, N{node.id}(ctx), {system}(ctx))" if system else f"N{node.id}(ctx)"
        lines += [f"def NI{node.id}(ctx):", f"    return {read}", ""]
    return lines


def some_in_collection(gen: ModuleGen, em: BodyEmitter, s: ast.SomeIn) -> str:
    """The code of what ``some ... in <collection>`` iterates: the root
    document ``data`` as a ref iterating its keys sees it (OPA iterates
    ``data[k]``, with the rules under ``system``), any other term as it is."""
    c = s.collection
    if type(c) is ast.Ref and type(c.head) is ast.Var and c.head.name == "data" and not c.path:
        kind, node, _ = gen.data_target(())
        if kind == "tree":
            gen.materialize_later(node)
            v = em.tmp()
            em.assign(v, f"NI{node.id}({em.ctx})")
            return v
    return em.term(c if s.key is not None else iterated_terms(c, em.var_names or rule_var_names(gen)))


def root_iterated(em: BodyEmitter, node: RuleNode, path: tuple[ast.Term, ...], i: int) -> bool:
    """Whether ``data.<path>`` iterates the keys of the root document at ``node``
    (read by ``NI<id>``, with the rules under ``system``, not ``N<id>``)."""
    return not node.path and i < len(path) and em.has_unbound(path[i])

def tracks_values(gen: ModuleGen, node: RuleNode) -> bool:
    """Whether the partial object at ``node`` notes the objects its rules give
    as values (helpers.VALUES): where rules with longer heads make objects
    too, or rules deeper down add to it."""
    if node.kind != PARTIAL_OBJECT:
        return False
    return has_own_part(gen, node) or any(len(rule_suffix(0, r)) > 1 for r in node.rules)


def own_depths(node: RuleNode) -> Depths:
    """The levels below ``node`` where its own rules give values (``a[x].y := 1``: 2)."""
    return tuple(sorted({len(rule_suffix(0, rule)) for rule in node.rules}))


def doc_depths(gen: ModuleGen, node: RuleNode) -> Depths:
    """The levels below ``node`` where the rules at and below it give values."""
    if node.kind == FUNCTION:
        return ()
    if node.has_rules() and node.kind != PARTIAL_OBJECT:
        return (0,)
    out = set(own_depths(node)) if node.has_rules() else set()
    for child in node.children.values():
        if gen._has_rules_below(child):
            out.update(d + 1 for d in doc_depths(gen, child))
    return tuple(sorted(out))


def document_function(gen: ModuleGen, node: RuleNode) -> str:
    """The name of the function computing ``node``'s whole document."""
    if node.has_rules():
        return f"R{node.id}"
    need_materializer(gen, node)
    return f"N{node.id}"


def part_function(gen: ModuleGen, node: RuleNode) -> str:
    """The name of the function computing what the rules at and below ``node``
    define, as part of a document that rules above define too: as
    :func:`document_function`, except that objects holding nothing are left
    out (OPA makes none where a rule above defines the document)."""
    if node.has_rules():
        if node.kind not in (PARTIAL_SET, PARTIAL_OBJECT):
            return f"R{node.id}"
        name = f"NE{node.id}"
        if name not in gen.namespace:
            gen.namespace[name] = nonempty_part(gen.namespace, f"R{node.id}")
        return name
    name = f"NP{node.id}"
    if name not in gen.namespace:
        gen.namespace[name] = UNDEF  # (a placeholder while the children are planned)
        entries = tuple(
            (key_value(child_name), part_function(gen, child))
            for child_name, child in sorted(node.children.items())
            if child.kind != FUNCTION and gen._has_rules_below(child)
        )
        gen.namespace[name] = pruned_document(gen.namespace, node.path, entries)
    return name


def where(gen: ModuleGen, node: RuleNode) -> str:
    """The location a conflict between ``node``'s document and another part is reported at."""
    for n in node.walk():
        if n.rules:
            return gen.loc(n.rules[0].location)
    return "None"


def need_materializer(gen: ModuleGen, node: RuleNode) -> None:
    """Make sure ``N<id>`` exists (at once, where the program is already built)."""
    gen.materialize_later(node)
    if gen.built and node.id not in gen._materialized:
        saved, gen.lines = gen.lines, []
        try:
            gen.flush_materializers()
            gen.exec_lines(gen.lines)
        finally:
            gen.lines = saved


def ground_prefix_length(path: tuple[ast.Term, ...]) -> int:
    """How many keys at the start of ``path`` are constant strings."""
    n = 0
    for p in path:
        if not (isinstance(p, ast.Scalar) and isinstance(p.value, str)):
            break
        n += 1
    return n


def ground_keys(path: tuple[ast.Term, ...]) -> tuple[str, ...]:
    """The string keys of ``path``, all constant strings (see :func:`ground_prefix_length`)."""
    return tuple([p.value for p in path if isinstance(p, ast.Scalar) and isinstance(p.value, str)])


def tree_keys_of(gen: ModuleGen, path: tuple[ast.Term, ...]) -> tuple[str, ...]:
    """The constant keys at the start of ``path`` that are strings, or keys
    of nodes of the rule tree (KeyPart: a[1].x := 1 has a node ``1``)."""
    out: list[str] = []
    cur: RuleNode | None = gen.tree.root
    for p in path:
        if type(p) is not ast.Scalar:
            break
        if type(p.value) is str:
            out.append(p.value)
            cur = cur.children.get(p.value) if cur is not None else None
            continue
        key = path_key(p)
        child = cur.children.get(key) if cur is not None else None
        if child is None:
            break
        out.append(child.path[-1])
        cur = child
    return tuple(out)


def ground_document_name(gen: ModuleGen, keys: tuple[str, ...]) -> str:
    """The name of a function computing ``data.<keys>`` as the union of the
    documents that define it (see the module's docstring)."""
    name = gen.ground_docs.get(keys)
    if name is not None:
        return name
    path_keys = keys
    path = tuple(ast.Scalar(k) for k in keys)
    passed: list[tuple[RuleNode, int]] = []
    kind, node, i = gen.data_target(path, passed)
    keys = tuple([key_value(k) for k in keys])  # (the keys as documents hold them, from here on)
    parts: list[Part] = [(keyed_part_name(gen, a, keys[j:]), keys[j:], own_depths(a)) for a, j in passed]
    location = None
    # Below rules with a variable right after their constant strings, objects
    # holding nothing are left out; below rules whose paths start with other
    # constants (a[1][k]), each child is its whole document (own_part_lines).
    pruned = any(_dynamic_at(a) for a, _ in passed)
    if kind == "rule" and passed and i < len(keys) and node.kind != PARTIAL_OBJECT:
        # Inside a value a rule deeper down gives: the union at that rule, then the keys into it.
        # Each part is read along the keys first: OPA evaluates only the rules
        # whose path can match the read, so where one part at most is defined
        # there, a conflict of the parts elsewhere is no error.
        # (each part is told apart where its rules' heads end: below that, a
        # part's keys are inside its value)
        reads = [(keyed_part_name(gen, a, keys[j:]), keys[j:], max(own_depths(a))) for a, j in passed]
        reads.append((rule_document(gen, node, keys[i:]), keys[i:], 1 if node.kind == PARTIAL_SET else 0))
        name = gen.ground_docs[path_keys] = f"GD{len(gen.ground_docs)}"
        gen.namespace[name] = _walked(gen.namespace, ground_document_name(gen, keys[:i]), keys[i:], tuple(reads))
        return name
    if kind == "rule":
        doc = rule_document(gen, node, keys[i:])
        if doc.startswith("P"):
            parts.append((keyed_part_name(gen, node, keys[i:]), keys[i:], own_depths(node)))
        elif not pruned and i < len(keys) and node.kind == PARTIAL_OBJECT and doc == f"R{node.id}":
            # Read at a key: where its rules conflict, only a conflict under that key is raised, as in OPA.
            parts.append((_keyed_rule_part_name(gen, node, keys[i:]), keys[i:], doc_depths(gen, node)))
        else:
            parts.append((part_function(gen, node) if pruned else doc, keys[i:], doc_depths(gen, node)))
        location = node.rules[0].location if node.rules else None
    elif kind == "base":
        parts.append(("", keys, ()))
    elif kind == "tree":
        parts.append((part_function(gen, node) if pruned else document_function(gen, node), keys[i:], doc_depths(gen, node)))
    fn: Callable[..., Any]
    if kind == "function" or not parts:
        def fn(ctx: Any) -> Any:
            return UNDEF
    else:
        fn = ground_document(gen.namespace, tuple(parts), location)
    name = gen.ground_docs[path_keys] = f"GD{len(gen.ground_docs)}"
    gen.namespace[name] = fn
    return name


def _keyed_rule_part_name(gen: ModuleGen, node: RuleNode, keys: tuple[str, ...]) -> str:
    """The name of a reader of the partial object at ``node`` to be read along
    ``keys``: its whole document, or where that meets a conflict, its part
    along ``keys`` (see :func:`keyed_rule_name`)."""
    name = f"RK{node.id}{list(keys)!r}"  # (no identifier: never one of the generated code's)
    if name not in gen.namespace:
        keyed, whole, namespace = keyed_rule_name(gen, node), f"R{node.id}", gen.namespace

        def part(ctx: Any, keys: tuple[str, ...] = keys) -> Any:
            try:
                return namespace[whole](ctx)
            except EvalConflictError:
                return namespace[keyed](ctx, keys)

        gen.namespace[name] = part
    return name


def keyed_part_name(gen: ModuleGen, node: RuleNode, keys: tuple[str, ...]) -> str:
    """The name of a reader of ``node``'s own part along ``keys`` (see
    :func:`pyrego.runtime.docs.rt_own_at`)."""
    name = f"PK{node.id}{list(keys)!r}"  # (no identifier: never one of the generated code's)
    if name not in gen.namespace:
        gen.namespace[name] = keyed_part(gen.namespace, f"PK{node.id}", keys)
    return name


def keyed_rule_name(gen: ModuleGen, node: RuleNode) -> str:
    """The name of a reader of the partial object at ``node`` (no rules below
    its children) along a path, for where reading it whole met a conflict
    (see :func:`pyrego.runtime.docs.rt_own_at`)."""
    name = f"RK{node.id}"
    if name not in gen.namespace:
        gen.namespace[name] = _keyed_rule(weakref.ref(gen), gen.namespace, node.id)
    return name


def _keyed_rule(gen_ref: Callable[[], ModuleGen | None], namespace: dict[str, Any], node_id: int) -> Callable[..., Any]:
    whole, cache_key = f"R{node_id}", f"RK{node_id}"

    def read(ctx: Any, keys: tuple[Any, ...]) -> Any:
        gen = gen_ref()
        wrapper = gen.wrappers.get(whole) if gen is not None else None
        if wrapper is None:  # (no definitions to run one by one: the whole document)
            return namespace[whole](ctx)
        defs = [namespace[d] for d in wrapper.defs]

        def run(ctx: Any, acc: Any) -> None:
            for d in defs:
                d(ctx, acc)

        return rt_own_at(ctx, namespace[whole], run, cache_key, keys)

    return read


def _walked(
    namespace: dict[str, Any], name: str, keys: tuple[str, ...], reads: tuple[tuple[str, tuple[Any, ...], int], ...] = ()
) -> Callable[..., Any]:
    """The document ``name`` along ``keys``; with ``reads`` (its parts' readers,
    each with the keys to walk in it and how many of them its rules' heads
    hold), the one part defined where its heads end, if only one is."""

    def along(v: Any, keys: tuple[Any, ...]) -> Any:
        for k in keys:
            if v is UNDEF:
                break
            v = rt_get(v, k)
        return v

    def walked(ctx: Any, namespace: dict[str, Any] = namespace, name: str = name, keys: tuple[str, ...] = keys) -> Any:
        if reads:
            found = []
            for part, ks, depth in reads:
                v = along(namespace[part](ctx), ks[:depth])
                if v is not UNDEF:
                    found.append((v, ks[depth:]))
            if len(found) <= 1:
                return along(*found[0]) if found else UNDEF
        return along(namespace[name](ctx), keys)

    return walked


def rule_document(gen: ModuleGen, node: RuleNode, rest: tuple[Any, ...]) -> str:
    """The function to read ``node``'s rules' document with ``rest`` below
    it: the node's own part where ``rest`` starts with a key no child has."""
    if rest and has_own_part(gen, node) and not _is_child(gen, node, rest[0]):
        return f"P{node.id}"
    return f"R{node.id}"


def _is_child(gen: ModuleGen, node: RuleNode, key: Any) -> bool:
    """Whether the constant ``key`` names a child of ``node`` (a string, or a
    function's or rule's other key: a KeyPart) with rules at or below it (a
    default OPA leaves out leaves none)."""
    if type(key) is bool:
        key = freeze(key)
    try:
        child = node.children.get(key)
    except TypeError:  # (a composite key names no child)
        return False
    return child is not None and gen._has_rules_below(child)


def child_table_name(gen: ModuleGen, node: RuleNode, keys: tuple[str, ...]) -> str:
    """The name of a table {child name: reader of ``data.<node>.<child>.<keys>``}
    for the children of ``node`` that hold rules."""
    table = gen.child_tables.get((node.id, keys))
    if table is None:
        entries = {}
        for child_name, child in sorted(node.children.items()):
            if child.kind != FUNCTION and gen._has_rules_below(child):
                doc = ground_document_name(gen, node.path + (child_name,) + keys)
                entries[key_value(child_name)] = gen.namespace[doc]
        table = gen.child_tables[(node.id, keys)] = f"TB{len(gen.child_tables)}"
        gen.namespace[table] = entries
    return table


def key_trie_name(gen: ModuleGen, node: RuleNode, depth: int) -> str:
    """The name of a table for reading ``data.<node>[k1]...[k<depth>]`` with
    computed or iterated keys: {child name: (its document function, whether
    rules are at the child, the same table for the child's children)}, for the
    children holding rules below them (functions are never documents), ``depth``
    levels deep; see :func:`pyrego.runtime.docs.rt_node_select`. Written as a
    line of the program (as ``ModuleGen.children_map``), naming only document
    functions."""
    name = f"KT{node.id}_{depth}"
    if (node.id, depth) not in gen.key_tries:
        gen.key_tries.add((node.id, depth))
        gen._pending_tables.append(f"{name} = {_key_trie_text(gen, node, depth)}")
    return name


def _key_trie_text(gen: ModuleGen, node: RuleNode, depth: int) -> str:
    entries = []
    for child_name, child in sorted(node.children.items()):
        if child.kind == FUNCTION or not gen._has_rules_below(child):
            continue
        if child.has_rules():
            # (a partial object: its reader along computed keys, for where it conflicts elsewhere)
            plain = child.kind == PARTIAL_OBJECT and not any(gen._has_rules_below(c) for c in child.children.values())
            entries.append(f"{gen.literal(child_name)}: (R{child.id}, {keyed_rule_name(gen, child) if plain else True}, {{}})")
        else:
            gen.materialize_later(child)
            below_text = _key_trie_text(gen, child, depth - 1) if depth > 1 else "{}"
            entries.append(f"{gen.literal(child_name)}: (N{child.id}, False, {below_text})")
    return "{" + ", ".join(entries) + "}"


def data_ref(
    gen: ModuleGen,
    em: BodyEmitter,
    path: tuple[ast.Term, ...],
    target: tuple[str, RuleNode, int],
    passed: list[tuple[RuleNode, int]],
    check: bool,
) -> str | None:
    """The code reading ``data.<path>`` (``target``, ``passed``: as
    ModuleGen.data_target found them) where it is a document of several
    parts or a key computed below a tree; None where none of that applies."""
    kind, cur, i = target
    if passed:
        # Past rules with variable keys into a child: the union of the parts.
        keys = tree_keys_of(gen, path)
        n = len(keys)
        v = em.tmp()
        em.assign(v, f"{ground_document_name(gen, keys)}({em.ctx})")
        return _rest(em, v, path[n:], check)
    if kind == "rule" and has_own_part(gen, cur) and i < len(path):
        v = em.tmp()
        if isinstance(path[i], ast.Scalar):
            first = path[i].value  # type: ignore[union-attr]
            doc = rule_document(gen, cur, (first,))
            if doc.startswith("P"):  # (the own part, read along that path only)
                em.assign(v, f"PK{cur.id}({em.ctx}, {read_keys(em, path[i:])})")
            else:
                em.assign(v, f"{doc}({em.ctx})")
            return em.walk_path(v, path[i:], check=check)
        if not em.has_unbound(path[i]):
            # A computed key: the node's own part, or the one child it names.
            # (with the constant keys after it: only the child's document they name)
            key = em.term(path[i])
            n = i + 1 + ground_prefix_length(path[i + 1 :])
            below = ground_keys(path[i + 1 : n])
            table = child_table_name(gen, cur, below)
            em.assign(v, f"rt_own_child({em.ctx}, {table}, PK{cur.id}, {key}, {read_keys(em, path[i:])}, {gen.const(below)})")
            return _rest(em, v, path[n:], check)
        return None
    if kind == "tree" and i < len(path) and not isinstance(path[i], ast.Scalar) and ground_prefix_length(path[i + 1 :]) < len(path) - i - 1:
        # A computed or iterated key with more such keys after it: only the
        # documents the keys lead to down the rule tree, then the usual walk.
        pattern = "".join(("RT_ANY" if em.has_unbound(p) else em.term(p)) + ", " for p in path[i:])
        v = em.tmp()
        em.assign(v, f"rt_node_select({em.ctx}, {key_trie_name(gen, cur, len(path) - i)}, ({pattern}), {gen.const(cur.path)})")
        return em.walk_path(v, path[i:], check=check)
    if kind == "tree" and i < len(path) and not isinstance(path[i], ast.Scalar) and ground_prefix_length(path[i + 1 :]):
        # A computed or iterated key, then constant keys: only the document they name in each child.
        n = i + 1 + ground_prefix_length(path[i + 1 :])
        keys = ground_keys(path[i + 1 : n])
        table, v = child_table_name(gen, cur, keys), em.tmp()
        if em.has_unbound(path[i]):
            em.assign(v, f"rt_node_project({em.ctx}, {table}, {gen.const(cur.path)}, {gen.const(keys)})")
            return em.walk_path(v, (path[i],) + path[n:], check=check)
        key = em.term(path[i])
        em.assign(v, f"rt_node_child_path({em.ctx}, {table}, {key}, {gen.const(cur.path)}, {gen.const(keys)})")
        return _rest(em, v, path[n:], check)
    return None


def ground_keys_after(em: BodyEmitter, node: RuleNode, path: tuple[ast.Term, ...]) -> int:
    """How many of the first keys of ``path``, read in ``node``'s document,
    are known before the read (no variable to bind) and bound by its rules' paths."""
    n = path_depth(node) if node.kind == PARTIAL_OBJECT else 1
    known = 0
    for p in path[:n]:
        if em.has_unbound(p):
            break
        known += 1
    return known


def read_keys(em: BodyEmitter, path: tuple[ast.Term, ...]) -> str:
    """The code of a tuple of the keys at the start of ``path`` that are
    constants or bound variables (what needs no code of its own)."""
    known = []
    for p in path:
        if not (type(p) is ast.Scalar or (type(p) is ast.Var and not em.has_unbound(p))):
            break
        known.append(em.term(p))
    return f"({''.join(k + ', ' for k in known)})"


def _rest(em: BodyEmitter, v: str, rest: tuple[ast.Term, ...], check: bool) -> str:
    """``v`` looked up along ``rest``."""
    if rest:
        return em.walk_path(v, rest, check=check)
    em.result_check(v, check)
    return v


def rule_or_tree_ref(
    gen: ModuleGen, em: BodyEmitter, path: tuple[ast.Term, ...], target: tuple[str, RuleNode, int], check: bool
) -> str:
    """The value at ``data.<path>`` where ``target`` (``ModuleGen.data_target``)
    is the document of the rules at a node (``"rule"``) or a document holding
    rules (``"tree"``), with ``path[i:]`` inside it."""
    kind, cur, i = target
    v = em.tmp()
    if kind == "rule":
        known = ground_keys_after(em, cur, path[i:]) if i < len(path) and skips_rules(gen, cur) else 0
        if known > 1:
            # Keys along a partial object's paths: each rule runs with its path's keys bound to them, as in OPA (the keys first).
            keys = "".join(em.term(p) + ", " for p in path[i : i + known])
            em.assign(v, f"{path_reader_name(gen, cur, known)}({em.ctx}, ({keys}))")
            return em.walk_path(v, path[i:], check=check)
        if known:
            # One key looked up: each rule runs for that key alone, as in OPA (the key first).
            key = em.term(path[i])
            em.assign(v, f"{member_reader_name(gen, cur)}({em.ctx}, {key})")
            i += 1
        elif i < len(path) and cur.kind == PARTIAL_OBJECT and (type(path[i]) is ast.Scalar or (type(path[i]) is ast.Var and not em.has_unbound(path[i]))):
            # One key of a partial object: where its rules conflict, only
            # a conflict under that key is raised, as in OPA.
            keys = read_keys(em, path[i:])
            em.w("try:")
            em.w(f"    {v} = R{cur.id}({em.ctx})")
            em.w("except EvalConflictError:")
            em.w(f"    {v} = {keyed_rule_name(gen, cur)}({em.ctx}, {keys})")
            return em.walk_path(v, path[i:], check=check)
        else:
            em.assign(v, f"R{cur.id}({em.ctx})")
    elif i < len(path) and not em.has_unbound(path[i]):
        # A computed key: evaluate only the child it names.
        key = em.term(path[i])
        em.assign(v, f"rt_node_child({em.ctx}, {children_map(gen, cur)}, {key}, {gen.const(cur.path)})")
        i += 1
    else:
        gen.materialize_later(cur)
        em.assign(v, f"{'NI' if root_iterated(em, cur, path, i) else 'N'}{cur.id}({em.ctx})")
    if i < len(path):
        return em.walk_path(v, path[i:], check=check)
    em.result_check(v, check)
    return v


def children_map(gen: ModuleGen, node: RuleNode) -> str:
    """A global dict {child name: document function} for dynamic lookups under ``node``."""
    name = f"CH{node.id}"
    if node.id not in gen.children_maps:
        gen.children_maps.add(node.id)
        entries = []
        for child_name, child in sorted(node.children.items()):
            if child.kind == FUNCTION:
                continue
            if child.has_rules():
                entries.append(f"{gen.literal(child_name)}: R{child.id}")
            elif gen._has_rules_below(child):
                gen.materialize_later(child)
                entries.append(f"{gen.literal(child_name)}: N{child.id}")
        gen._pending_tables.append(f"{name} = {{{', '.join(entries)}}}")
    return name
