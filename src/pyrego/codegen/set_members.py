"""Lookups of one member of a partial set, or one key of a partial object, as OPA makes them.

OPA reads ``data.p.s[k]`` for a ground ``k`` (a constant, or a value
computed before the read) by evaluating each of the document's rules with
its head's key unified with ``k`` first: a rule whose key is a constant
other than ``k`` is never evaluated, and one with variables in its key runs
its body with them bound to ``k``'s parts, so that the expressions that
would bind them test them instead, and what the body does after that
(errors, conflicts under other keys, prints) happens for ``k`` only.
``k in data.p.s`` and every other read of the whole document evaluate all
of its rules; a lookup after such a read reads the whole document.

``SM<id>(ctx, key)`` (see :func:`pyrego.runtime.members.member_reader`)
runs, of the document's definitions, those whose key can be ``key``: a
constant key's definition ``D<id>_<n>`` as it is, any other's variant
``DK<id>_<n>(ctx, acc, key)``, which binds the key first. A read along
two or more keys of a partial object whose rules have longer paths
(``a[x][y] := v``) is ``SK<id>(ctx, keys)``: each rule runs as
``DK<id>_<n>_<count>(ctx, acc, keys)``, its path's keys bound to the keys
read as far as both go, as in OPA. The variants are written on the first
lookup that needs them: a program without such lookups pays nothing for
them. A partial object with rules below its keys too (``o.a := 1``
beside ``o[k] := v``) reads its own rules' part so (``PM<id>``) where
they all have one key; with longer paths, it is read whole, then along
the path where that conflicts (runtime.docs.rt_own_at).

As OPA's compiler does, a key in a rule's path that is not a variable or
a constant (``o[[k, 1]] := v``), and a set's key holding a reference
(``s contains input.k``), are bound at the body's end; calls and
comprehensions in a set's key too, the rest of the key first.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from pyrego.ast import nodes as ast
from pyrego.codegen.program import LOAD_LOCK
from pyrego.codegen.tiers import fast_lines
from pyrego.compile.base import PARTIAL_OBJECT, PARTIAL_SET, rule_suffix
from pyrego.compile.index_guards import guarded_rule, index_plan
from pyrego.compile.safety import ROOTS
from pyrego.runtime.members import member_reader, path_reader

if TYPE_CHECKING:
    from pyrego.codegen.body import BodyEmitter
    from pyrego.codegen.generator import ModuleGen
    from pyrego.compile.base import RuleNode


#: After how many keys read one by one in an evaluation a document is read
#: whole (where nothing but values can tell, see runtime.members).
WHOLE_AFTER = 1


def whole_after(gen: ModuleGen) -> int:
    """``WHOLE_AFTER``, or 0 (never) where the program prints or calls a
    nondeterministic builtin, or is instrumented (its traces show each rule run)."""
    return 0 if gen.tree.impure or not gen.keyed_lookups else WHOLE_AFTER


def _pattern(term: ast.Term | None) -> Any:
    """What a rule's key says of the members it can add: a scalar constant,
    a list or dict of such patterns (arrays, objects with constant keys),
    or None for any value (a variable, a call, ...)."""
    if type(term) is ast.Scalar:
        return (term.value,)
    if type(term) is ast.Array:
        return [_pattern(t) for t in term.items]
    if type(term) is ast.Object:
        keys = [k for k, _ in term.items if isinstance(k, ast.Scalar)]
        if len(keys) == len(term.items):
            return {k.value: _pattern(v) for k, (_, v) in zip(keys, term.items)}
    return None


def _constant(pattern: Any) -> bool:
    """Whether a key pattern leaves nothing to bind (the key is a constant)."""
    if pattern is None:
        return False
    if type(pattern) is tuple:
        return True
    return all(_constant(p) for p in (pattern if type(pattern) is list else pattern.values()))


def key_term(node: RuleNode, rule: ast.Rule) -> ast.Term | None:
    """The term of ``rule``'s head that a lookup of one key unifies first."""
    return rule.head.key if node.kind == PARTIAL_SET else rule_suffix(0, rule)[0]


def skips_rules(gen: ModuleGen, node: RuleNode) -> bool:
    """Whether a lookup of one key of ``node``'s document runs its rules for that key alone."""
    if node.default is not None:
        return False
    if not gen.keyed_lookups:  # (constant keys' rules skipped only)
        return node.kind == PARTIAL_SET and any(_pattern(r.head.key) is not None for r in node.rules)
    if node.kind == PARTIAL_SET:
        return True
    # (``_rules_below_children``: constant keys' rules are documents of their own, read otherwise)
    return node.kind == PARTIAL_OBJECT and not gen._rules_below_children(node) and all(rule_suffix(0, r) for r in node.rules)


def member_reader_name(gen: ModuleGen, node: RuleNode) -> str:
    """The name of ``SM<id>(ctx, key)``: ``data.<node>[key]`` (the member or
    value, or UNDEF), running each rule for that key alone."""
    name = f"SM{node.id}"
    if name not in gen.namespace:
        keys = {f"D{node.id}_{i}": _pattern(key_term(node, rule)) for i, rule in enumerate(node.rules)}
        gen.member_readers[name] = keys
        gen_ref = weakref.ref(gen)
        whole = f"R{node.id}"

        def definitions() -> tuple[tuple[str, bool], ...] | None:
            gen = gen_ref()
            if gen is None:
                return None
            gen.load(whole)  # (a deferred rule is planned on its first read)
            wrapper = gen.wrappers.get(whole)
            if wrapper is None or wrapper.kind not in ("set", "object"):
                return None
            keyed = keyed_definitions(gen, node)
            return tuple((keyed.get(d, d), d in keyed) for d in wrapper.defs)

        gen.namespace[name] = member_reader(gen.namespace, node.id, definitions, keys, node.kind == PARTIAL_SET, None, whole_after(gen))
    return name


def own_member_reader_name(gen: ModuleGen, node: RuleNode, defs: tuple[str, ...]) -> str | None:
    """For a partial object with rules below its keys too (its own part
    ``P<id>``, runtime.docs), whose own rules (``defs``) each have one key:
    the name of ``PM<id>(ctx, key)``, that part's value at ``key``, the
    rules run for that key alone. None for other objects."""
    if not gen.keyed_lookups or node.default is not None or not all(len(rule_suffix(0, r)) == 1 for r in node.rules):
        return None
    name = f"PM{node.id}"
    if name not in gen.namespace:
        gen_ref = weakref.ref(gen)

        def definitions() -> tuple[tuple[str, bool], ...] | None:
            gen = gen_ref()
            if gen is None:
                return None
            keyed = keyed_definitions(gen, node)
            return tuple((keyed.get(d, d), d in keyed) for d in defs)

        keys = {f"D{node.id}_{i}": _pattern(key_term(node, rule)) for i, rule in enumerate(node.rules)}
        gen.namespace[name] = member_reader(gen.namespace, node.id, definitions, keys, False, f"P{node.id}", whole_after(gen))
    return name


def keyed_definitions(gen: ModuleGen, node: RuleNode, depth: int = 0) -> dict[str, str]:
    """``D<id>_<n>`` -> its variant taking the key(s) looked up, for ``node``'s
    definitions, their code compiled (once, in the program's form):
    ``depth`` 0, one key (``DK<id>_<n>(ctx, acc, key)``, for the
    definitions whose key is not a constant); else that many keys along
    the rules' paths (``DK<id>_<n>_<depth>(ctx, acc, keys)``, for all)."""
    done = gen.keyed_defs.get((node.id, depth))
    if done is None and not gen.keyed_lookups:
        return {}
    if done is None:
        with LOAD_LOCK:
            done = gen.keyed_defs.get((node.id, depth))
            if done is None:
                lines, done = keyed_lines(gen, node, gen.hot, depth)
                start = len(gen.lines)
                gen.flush_materializers()  # (the functions their code reads that were not made yet)
                gen.exec_lines(gen.lines[start:] + lines)
                gen.keyed_defs[(node.id, depth)] = done
    return done


def keyed_lines(gen: ModuleGen, node: RuleNode, fast: bool, depth: int = 0) -> tuple[list[str], dict[str, str]]:
    """The code of ``node``'s definitions' variants of :func:`keyed_definitions`
    (``fast``: the fast form, else the compact one), and which definition each stands for."""
    plan = index_plan(node, gen.tree.root, gen.tree.functions, gen.arity, gen.strict_errors)
    lines: list[str] = []
    names: dict[str, str] = {}
    saved, gen.compact = gen.compact, not fast
    try:
        for i, rule in enumerate(node.rules):
            if not depth and _constant(_pattern(key_term(node, rule))):
                continue  # (run as it is, where its key is the one looked up)
            em = gen.emitter(gen)
            gen.branch(em, node, guarded_rule(rule, plan), once=False, keyed=depth or -1)
            em.finish()
            name = f"DK{node.id}_{i}_{depth}" if depth else f"DK{node.id}_{i}"
            names[f"D{node.id}_{i}"] = name
            lines += [f"def {name}(ctx, acc, {'keys' if depth else 'key'}):", *em.lines, ""]
    finally:
        gen.compact = saved
    return (fast_lines(lines, gen.builtin_sites, gen.wrappers) if fast else lines), names


def path_reader_name(gen: ModuleGen, node: RuleNode, depth: int) -> str:
    """The name of ``SK<id>(ctx, keys)``: the document of ``node``, a partial
    object (see :func:`skips_rules`), as its rules make it for a read along
    ``keys`` (``depth``, two or more), each rule run with its path's keys
    bound to them first."""
    name = f"SK{node.id}"
    gen.path_readers.setdefault(name, set()).add(depth)
    if name not in gen.namespace:
        gen_ref = weakref.ref(gen)
        whole = f"R{node.id}"

        def definitions(depth: int) -> tuple[str, ...] | None:
            gen = gen_ref()
            if gen is None:
                return None
            gen.load(whole)
            wrapper = gen.wrappers.get(whole)
            if wrapper is None or wrapper.kind != "object":
                return None
            keyed = keyed_definitions(gen, node, depth)
            return tuple(keyed[d] for d in wrapper.defs)

        gen.namespace[name] = path_reader(gen.namespace, node.id, definitions, whole_after(gen))
    return name


def path_depth(node: RuleNode) -> int:
    """How many keys of a read the rules of ``node`` can bind (their longest path)."""
    return max(len(rule_suffix(0, r)) for r in node.rules)


def _bindable(term: ast.Term, wild: list[ast.Var]) -> ast.Term | None:
    """``term``, a rule's key, as OPA unifies it before the body: each call
    or comprehension in it a variable of its own (in ``wild``), which its
    compiler binds at the body's end; None where the key holds a reference
    (the compiler moves such a key to the body's end whole)."""
    if isinstance(term, ast.Scalar):
        return term
    if isinstance(term, ast.Var):
        return term if term.name not in ROOTS else None
    if isinstance(term, (ast.Call, ast.ArrayCompr, ast.SetCompr, ast.ObjectCompr)):
        var = ast.Var(f"$key{len(wild)}")
        wild.append(var)
        return var
    if isinstance(term, ast.Array):
        items = [_bindable(t, wild) for t in term.items]
        return None if None in items else ast.Array(tuple(items))  # type: ignore[arg-type]
    if isinstance(term, ast.Object) and all(type(k) is ast.Scalar for k, _ in term.items):
        values = [_bindable(v, wild) for _, v in term.items]
        return None if None in values else ast.Object(tuple([(k, v) for (k, _), v in zip(term.items, values)]))  # type: ignore[misc]
    return None


def bind_key(em: BodyEmitter, node: RuleNode, rule: ast.Rule, depth: int) -> list[tuple[int, str]]:
    """Write the unification of ``rule``'s key with the looked-up ``key``
    (``depth`` -1), or of its path's first keys with ``keys`` (that many),
    before its body (which is ordered as without it, as OPA orders it when
    compiling). The keys of its path to be compared with the looked-up ones
    after the body still (those bound only there): (index, the looked-up key)."""
    if depth < 0:
        terms: list[ast.Term] = [key_term(node, rule)]  # type: ignore[list-item]
        values = ["key"]
    else:
        terms = list(rule_suffix(0, rule)[:depth])
        values = [f"keys[{j}]" for j in range(len(terms))]
    late: list[tuple[int, str]] = []
    before = set(em.bound)
    for j, (term, value) in enumerate(zip(terms, values)):
        wild: list[ast.Var] = []
        pattern = _bindable(term, wild)
        # (In a head's path, OPA's compiler makes a variable of any key but a variable or a constant.)
        if pattern is None or (node.kind != PARTIAL_SET and not isinstance(term, (ast.Scalar, ast.Var))):
            late.append((j, value))
            continue
        em.unify_value(pattern, value, rule.location)
        if wild:
            late.append((j, value))
    em.prebound = em.bound - before
    return [] if node.kind == PARTIAL_SET else late  # (a set's members: the lookup finds the key's alone)


def plain_pattern(pattern: Any) -> bool:
    """Whether a key pattern is written as it is by ``repr`` (what an artifact holds)."""
    if pattern is None:
        return True
    if type(pattern) is tuple:
        return type(pattern[0]) in (str, int, bool, type(None))
    if type(pattern) is list:
        return all(plain_pattern(p) for p in pattern)
    return all(type(k) is str and plain_pattern(p) for k, p in pattern.items())


__all__ = [
    "bind_key",
    "key_term",
    "keyed_definitions",
    "keyed_lines",
    "member_reader_name",
    "own_member_reader_name",
    "path_depth",
    "path_reader_name",
    "plain_pattern",
    "skips_rules",
    "whole_after",
]
