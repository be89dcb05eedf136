"""Where OPA says a ref to a rule is, in ``undefined ref`` errors.

OPA resolves a rule named by its short name (``c.a`` in package ``p``) to a
copy of the package path, ``data.p.c.a``, and sets the location of every
copy's ``data`` on each resolution; the copies of one module share that
``data``, so an error on any of them is reported where the module's *last*
such name is (in the order OPA resolves names: rules in order, each rule's
head then body, an expression's terms left to right, then its ``with``
modifiers). Names bound by an import share the import's ``data`` the same
way. :class:`SharedLocations` finds those places so that the errors say what
OPA says.
"""

from __future__ import annotations

import weakref
from typing import Any

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree
from pyrego.errors import Location


class SharedLocations:
    """The last resolution of a rule name per module, and of each import's name."""

    def __init__(self, tree: CompiledTree, modules: list[ast.Module]) -> None:
        self._tree: CompiledTree | None = tree
        self._tree_ref = weakref.ref(tree)
        self._modules = modules
        self._found = False
        self.by_module: dict[str, Location] = {}
        self.by_import: dict[int, Location] = {}
        self._imports: dict[int, ast.Ref] = {}
        self._aliases: dict[str, dict[str, int]] = {}

    def _find(self) -> None:
        """Walk the modules (once, when an error first needs it: errors are rare)."""
        self._found = True
        for m in self._modules:
            aliases: dict[str, int] = {}
            for imp in m.imports:
                head = imp.path.head
                if isinstance(head, ast.Var) and head.name in ("data", "input"):
                    self._imports[id(head)] = imp.path
                    alias = imp.alias
                    if alias is None and imp.path.path:
                        last = imp.path.path[-1]
                        alias = last.value if isinstance(last, ast.Scalar) and isinstance(last.value, str) else None
                    if alias is not None:
                        aliases[alias] = id(head)
            self._aliases[m.file] = aliases
        rules: dict[str, list[ast.Rule]] = {}
        tree = self._tree if self._tree is not None else self._tree_ref()
        for node in tree.nodes.values() if tree is not None else ():
            for r in node.rules + ([node.default] if node.default is not None else []):
                rules.setdefault(r.module_file, []).append(r)
        for file, module_rules in rules.items():
            self._file = file
            for rule in sorted(module_rules, key=lambda r: (r.location.row, r.location.col)):
                branch: ast.Rule | None = rule
                while branch is not None:
                    self._rule(branch)
                    branch = branch.else_

    def detach(self) -> None:
        """Stop holding the tree (which will hold this): read it through a weak reference."""
        self._tree = None

    def location(self, head: Any, first: Any) -> Location:
        """Where OPA reports a ref whose first two terms are ``head`` and ``first``."""
        loc: Location = head.location
        if type(head) is not ast.Var or head.name not in ("data", "input"):
            return loc
        if not self._found:
            self._find()
        if id(head) in self._imports:
            return self.by_import.get(id(head), loc)
        if first is not None and getattr(first, "location", None) == loc:
            return self.by_module.get(loc.file, loc)
        return loc

    # -- the resolution order --------------------------------------------------------

    def _rule(self, rule: ast.Rule) -> None:
        head = rule.head
        for t in (*head.ref.path, head.key, head.value):
            if t is not None:
                self._term(t)
        self._body(rule.body)

    def _body(self, body: ast.Body) -> None:
        for e in body:
            s: Any = e.statement
            st = type(s)
            if st is ast.Assign or st is ast.Unify:
                self._term(s.lhs)
                self._term(s.rhs)
            elif st is ast.SomeIn:
                for t in (s.key, s.value, s.collection):
                    if t is not None:
                        self._term(t)
            elif st is ast.Every:
                self._term(s.domain)
                self._body(s.body)
            elif st is not ast.SomeVars:
                self._term(s)
            for w in e.with_mods:
                self._term(w.target)
                if isinstance(w.value, (ast.Var, ast.Ref, ast.Call, ast.Scalar, ast.Array, ast.Object, ast.SetTerm)):
                    self._term(w.value)

    def _term(self, t: Any) -> None:
        tt = type(t)
        if tt is ast.Ref:
            head = t.head
            if type(head) is ast.Var and head.name == "data":
                if id(head) in self._imports:
                    self.by_import[id(head)] = t.location
                elif t.path and t.path[0].location == head.location:
                    self.by_module[self._file] = head.location
            self._term(head)
            for p in t.path:
                self._term(p)
        elif tt is ast.Call:
            op_ref = t.op_ref
            if t.op.startswith("data.") and op_ref is not None and type(op_ref.head) is ast.Var and op_ref.head.name != "data":
                imported = self._aliases.get(self._file, {}).get(op_ref.head.name)
                if imported is not None:
                    self.by_import[imported] = op_ref.head.location
                else:
                    self.by_module[self._file] = op_ref.head.location
            for a in t.args:
                self._term(a)
        elif tt is ast.Array or tt is ast.SetTerm:
            for x in t.items:
                self._term(x)
        elif tt is ast.Object:
            for k, v in t.items:
                self._term(k)
                self._term(v)
        elif tt is ast.ArrayCompr or tt is ast.SetCompr:
            self._term(t.term)
            self._body(t.body)
        elif tt is ast.ObjectCompr:
            self._term(t.key)
            self._term(t.value)
            self._body(t.body)
        elif tt is ast.TemplateString:
            for p in t.parts:
                if not isinstance(p, str):
                    self._term(p)
