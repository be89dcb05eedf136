"""The package's layout stays as docs/architecture.md describes it.

- No import cycles among pyrego's modules. Imports inside functions count
  (they are edges all the same, only later); imports under ``if
  TYPE_CHECKING:`` do not (they never run).
- At most 15 modules directly in ``src/pyrego/``; the rest live in the
  subpackage of their stage or capability.
- No top-level module named like a standard-library module (``pyrego/ast.py``
  would be a trap for every ``import ast`` near it; a subpackage named after
  OPA's, such as ``pyrego/ast/``, is fine).
- No module over 800 lines.
- No module but ``engine.py`` imports another module's ``_private`` name:
  what modules share is public (a name without ``_``), so that what each
  module offers the others can be read from its names.

Self-contained: the import graph is built here from the sources, with
:mod:`ast`, without importing pyrego.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "pyrego"

#: Import cycles that are known and being taken apart: each listed set may
#: remain (or shrink); any other cycle, or a listed one that grows, fails
#: test_no_new_import_cycles.
KNOWN_CYCLES: list[frozenset[str]] = []

#: Most modules directly in src/pyrego/.
TOP_LEVEL_MODULES = 15

#: Most lines in one module.
MAX_LINES = 800

#: Modules allowed over MAX_LINES, with why.
LONG_MODULES: dict[str, str] = {}

#: (importing module, imported module): private names one may take from the
#: other, with why (an entry goes when its import does).
PRIVATE_IMPORTS: dict[tuple[str, str], str] = {
    ("pyrego.builtins.time_parse", "pyrego.builtins.time_layout"): (
        "one implementation of Go's time layouts, split in two files for size: the parser reads the layout's tables"
    ),
    ("pyrego.compile.compiler", "pyrego.compile.resolver"): "the compiler's name resolution, split out for size",
    ("pyrego.typecheck.unify", "pyrego.typecheck.static_types"): "the type lattice's unification, split out for size",
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(name: str) -> str | None:
    """The pyrego module ``name`` is (or is in: ``pyrego.x.y.Name`` -> ``pyrego.x.y``)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> list[tuple[str, list[str]]]:
    """(imported pyrego module, names taken from it) for each import that runs."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, list[str]]] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name == "pyrego" or alias.name.startswith("pyrego."):
                        target = _resolve(alias.name)
                        if target is not None:
                            found.append((target, []))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module or ""
                if source == "pyrego" or source.startswith("pyrego."):
                    for alias in child.names:
                        full = f"{source}.{alias.name}"
                        if full in MODULES:  # a submodule
                            found.append((full, []))
                        else:
                            target = _resolve(source)
                            if target is not None:
                                found.append((target, [alias.name]))
            stack.append(child)
    return found


def _graph() -> dict[str, set[str]]:
    return {m: {t for t, _ in _imports(m) if t != m} for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[frozenset[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[v])
                if low[v] == index[v]:
                    component = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.add(w)
                        if w == v:
                            break
                    if len(component) > 1:
                        out.append(frozenset(component))
    return out


def _describe(cycle: frozenset[str], graph: dict[str, set[str]]) -> str:
    edges = sorted(f"{a} -> {b}" for a in cycle for b in graph[a] if b in cycle)
    return f"{sorted(cycle)}: " + "; ".join(edges)


def test_graph_sees_function_level_imports() -> None:
    # conformance runs engines: an import inside a function is an edge all the same.
    assert "pyrego.engine" in _graph()["pyrego.conformance"]


def test_no_new_import_cycles() -> None:
    graph = _graph()
    new = [c for c in _cycles(graph) if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, "import cycles:\n" + "\n".join(_describe(c, graph) for c in new)


def test_no_import_cycles() -> None:
    graph = _graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(c, graph) for c in cycles)


def test_few_top_level_modules() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_LEVEL_MODULES, f"{len(top)} modules directly in src/pyrego/ (at most {TOP_LEVEL_MODULES}): {top}"


def test_no_top_level_module_shadows_the_standard_library() -> None:
    shadowing = sorted(p.name for p in PACKAGE.glob("*.py") if p.stem in sys.stdlib_module_names)
    assert not shadowing, f"named like standard-library modules: {shadowing}"


def test_no_long_modules() -> None:
    long = {}
    for name, path in MODULES.items():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES and name not in LONG_MODULES:
            long[name] = lines
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_long_module_exceptions_are_needed() -> None:
    for name in LONG_MODULES:
        assert len(MODULES[name].read_text(encoding="utf-8").splitlines()) > MAX_LINES, f"{name} is short now: drop it from LONG_MODULES"


def test_no_private_imports_across_modules() -> None:
    found = []
    for module in MODULES:
        if module == "pyrego.engine":
            continue  # the engine and its own helpers (engine_support, engine_config) are one unit
        for target, names in _imports(module):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and target != module and (module, target) not in PRIVATE_IMPORTS:
                found.append(f"{module} imports {', '.join(private)} from {target}")
    assert not found, "\n".join(found)


def test_private_import_exceptions_are_needed() -> None:
    for module, target in PRIVATE_IMPORTS:
        names = [n for t, ns in _imports(module) if t == target for n in ns]
        assert any(n.startswith("_") and not n.startswith("__") for n in names), (
            f"{module} takes no private name from {target} now: drop it from PRIVATE_IMPORTS"
        )
