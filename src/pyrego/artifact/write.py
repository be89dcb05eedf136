"""Writing an artifact: the policies' generated code as one Python source file.

The code is generated afresh from the engine's compiled rule tree, every rule
in its fast form (no compact tier, no closures, nothing compiled lazily), so
that the file holds all the code the policies need. What the generated code
reads from its namespace is written out too, each kind in one checked way:

- constants (``K<n>``) as literals of exactly the value types pyrego uses
  (``repr`` of strings and numbers; frozen sets, objects and keys through
  constructors the loader provides): anything else is refused;
- locations (``L<n>``) as ``AL(file, row, col)``;
- builtins (``B<n>``) by name, looked up in this runtime's registry when the
  artifact is loaded (an extension function added to the engine cannot be
  written: :class:`~pyrego.artifact.format.ArtifactError`);
- builtin call sites (``C<n>``) from those.

Policy text reaches the file only as ``repr`` of strings, as in all
generated code (see docs/architecture.md); the rules' code is indented under
one ``if``, so a module import of the file does not run it.
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
from decimal import Decimal
from typing import Any

from pyrego.artifact.format import ArtifactError, envelope
from pyrego.builtins.registry import lookup
from pyrego.codegen.generator import ModuleGen
from pyrego.codegen.set_members import keyed_lines, plain_pattern, whole_after
from pyrego.codegen.tiers import RuleWrapper
from pyrego.engine_support import ProgramSource
from pyrego.errors import Location
from pyrego.runtime.convert import FrozenObject, dumps, loads
from pyrego.runtime.docs import DOC_HELPERS
from pyrego.runtime.helpers import HELPERS
from pyrego.runtime.values import FALSE_KEY, TRUE_KEY, ArrayKey, ObjectKey, SetKey, equal

#: How deep a constant may nest to be written as a literal.
MAX_LITERAL_DEPTH = 200

_HEADER = '''"""Compiled Rego policies: a pyrego artifact (generated code; do not edit).

Load it with ``pyrego.artifact.load_artifact(path)``, or import it as a module
(its ``policy`` is then the loaded artifact). Loading runs this code, as
importing any module does: load artifacts only from a trusted source.
"""

if __name__ != "__pyrego_artifact__":
    from pyrego.artifact.load import load_artifact_bytes

    # Read through the module's loader: the file may be in a folder, a wheel or a zip on sys.path.
    policy = load_artifact_bytes(__loader__.get_data(__file__), __file__, cache=True)
else:
'''

_KEY_TYPES = {ArrayKey: "AAK", ObjectKey: "AOK", SetKey: "ASK"}


def literal(value: Any, depth: int = 0) -> str:
    """Python source for a constant of one of the value types pyrego uses."""
    if depth > MAX_LITERAL_DEPTH:
        raise ArtifactError("a constant of the policies is nested too deeply to write")
    t = type(value)
    if value is None or t is bool or t is str or t is int:
        return repr(value)
    if t is float:
        return repr(value) if math.isfinite(value) else f"AX({repr(str(value))})"
    if t is Decimal:
        return f"AD({str(value)!r})"
    if value is TRUE_KEY:
        return "ATK"
    if value is FALSE_KEY:
        return "AFK"
    d = depth + 1
    if t is tuple:
        return "(" + "".join(literal(v, d) + ", " for v in value) + ")"
    if t is list:
        return "[" + ", ".join(literal(v, d) for v in value) + "]"
    if t is dict:
        return "{" + ", ".join(f"{literal(k, d)}: {literal(v, d)}" for k, v in value.items()) + "}"
    if t is frozenset or t is set or t is FrozenObject:
        # Members sorted by their text: the same policies always give the same file.
        members = "".join(m + ", " for m in sorted(literal(v, d) for v in value))
        return f"{'AF' if t is frozenset else 'AS' if t is set else 'AO'}(({members}))"
    if t is Location:
        return f"AL({value.file!r}, {value.row!r}, {value.col!r})"
    name = _KEY_TYPES.get(t)
    if name is not None:
        return f"{name}({literal(value.items, d)})"
    raise ArtifactError(f"the policies hold a constant an artifact cannot write ({t.__name__})")


def _base_names() -> set[str]:
    return {*HELPERS, *DOC_HELPERS, "rt_path", "rt_node_child", "rt_const_fn", "__builtins__"}


def _entry(gen: ModuleGen, name: str) -> str:
    """The ``(fn, more, default)`` an evaluation of rule function ``name`` starts from (as Program.entry)."""
    wrapper = gen.wrappers.get(name)
    if type(wrapper) is not RuleWrapper or wrapper.kind != "complete":
        return f"({name}, (), UNDEF)"
    if wrapper.constant is None and wrapper.conflict is None and wrapper.default_fn is None and wrapper.defs:
        more = "".join(f"{d}, " for d in wrapper.defs[1:])
        return f"({wrapper.defs[0]}, ({more}), {wrapper.default})"
    return f"({wrapper.entry_name}, (), UNDEF)"


def _data_source(data: Any) -> str:
    """The data document: JSON text read back at load (exact for JSON data), else a literal."""
    try:
        text = dumps(data)
        if equal(loads(text), data):
            return f"AJ({text!r})"
    except Exception:  # noqa: BLE001 - not JSON-representable: written as a literal
        pass
    return literal(data)


def _keyed_code(gen: ModuleGen) -> list[str]:
    """The code of the definitions that lookups of one key run with the key
    bound (codegen.set_members), for every member reader the code reads
    (writing them may make more)."""
    code: list[str] = []
    done: set[tuple[str, int]] = set()
    nodes = {n.id: n for n in gen.tree.nodes.values()}
    while True:
        todo = [(n, 0) for n in gen.member_readers] + [(n, d) for n, depths in gen.path_readers.items() for d in depths]
        todo = [t for t in todo if t not in done]
        if not todo:
            return code
        for name, depth in todo:
            done.add((name, depth))
            node = nodes[int(name[2:])]
            lines, gen.keyed_defs[(node.id, depth)] = keyed_lines(gen, node, True, depth)
            start = len(gen.lines)
            gen.flush_materializers()
            code += gen.lines[start:] + lines


def artifact_text(engine: ProgramSource) -> bytes:
    """The artifact of ``engine``'s policies and data (its evaluation settings
    as the artifact's defaults): the bytes :func:`write_artifact` writes.
    Compiles the policies (raising their errors) and generates all their code."""
    compiled = engine.program()
    program = compiled.code
    ctx = compiled.context(None)
    gen = ModuleGen(program.tree, program.mockable, strict_errors=True)  # (a loaded artifact may turn strict errors on)
    gen.closures = False
    gen.index_lookups = False  # (an artifact holds no closures: the definitions' static order)
    gen.generate()
    code: list[str] = []
    for name in gen.chunks:
        code += gen.fast_chunk(name)  # every rule's code, in the fast form
    code += gen.lines
    code += _keyed_code(gen)
    if gen.own_parts or gen.ground_docs or gen.child_tables:
        raise ArtifactError("the policies define documents at several levels of one path; an artifact cannot hold them yet")
    builtin_names = {g: n for n, g in gen.builtin_globals.items()}
    base = _base_names()
    head: list[str] = []
    later: list[str] = []
    for name, value in list(gen.namespace.items()):
        if name in base:
            continue
        if name.startswith("L") and type(value) is Location:
            head.append(f"{name} = {literal(value)}")
        elif name.startswith("B") and name in builtin_names:
            bname = builtin_names[name]
            found = lookup(bname)
            if found is None or found.fn is not value:
                raise ArtifactError(f"the policies call {bname}, which is not one of pyrego's builtins (an extension?)")
            head.append(f"{name} = AB({bname!r})")
        elif name.startswith("C") and name in gen.builtin_sites:
            site = gen.builtin_sites[name]
            later.append(f"{name} = AC({site.fn}, {site.name}, {site.where}, {site.needs_context!r})")
        elif name in gen.member_readers:
            node_id = int(name[2:])
            wrapper = gen.wrappers.get(f"R{node_id}")
            keyed = gen.keyed_defs.get((node_id, 0), {})
            defs = tuple((keyed.get(d, d), d in keyed) for d in wrapper.defs) if wrapper is not None and wrapper.kind in ("set", "object") else None
            # (a pattern repr cannot write reads as "any value": more rules run, none fewer)
            keys = {d: p if plain_pattern(p) else None for d, p in gen.member_readers[name].items()}
            later.append(f"{name} = ASM({node_id}, {defs!r}, {keys!r}, {wrapper is None or wrapper.kind == 'set'!r}, {whole_after(gen)!r})")
        elif name in gen.path_readers:
            node_id = int(name[2:])
            wrapper = gen.wrappers.get(f"R{node_id}")
            by_depth = {d: tuple(gen.keyed_defs[(node_id, d)][x] for x in wrapper.defs) if wrapper is not None and wrapper.kind == "object" else None for d in sorted(gen.path_readers[name])}
            later.append(f"{name} = APR({node_id}, {by_depth!r}, {whole_after(gen)!r})")
        elif name.startswith("K"):
            if callable(value) and not isinstance(value, (frozenset, tuple)):
                raise ArtifactError("the policies replace a builtin by another builtin with 'with'; an artifact cannot hold that yet")
            later.append(f"{name} = {literal(value)}")
        else:
            raise ArtifactError(f"the policies need {name!r}, which an artifact cannot hold yet")
    nodes = [(n.path, n.id) for n in program.tree.nodes.values() if n.has_rules() and n.kind != "function"]
    body = [*head, *later, f"WITH = AW({literal(nodes)})", "CALL_MOCK = AM()", "TICK = ANOOP", *code]
    body.append(f"DATA = {_data_source(ctx.data)}")
    body.append("RULES = {")
    for path, name in program.rule_functions.items():
        body.append(f"    {literal(path)}: {_entry(gen, name)},")
    body.append("}")
    source = _HEADER + "".join(f"    {line}\n" if line else "\n" for line in body)
    texts = compiled.texts
    meta = {
        "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
        "policies": {p: hashlib.sha256(texts[p].encode("utf-8", "surrogatepass")).hexdigest() for p in sorted(texts)},
        "rules": sorted("data." + ".".join(str(k) for k in path) for path in program.rule_functions),
        "settings": {"strict_builtin_errors": ctx.cfg.strict, "timeout": ctx.cfg.timeout},
    }
    return envelope(meta, source)


def write_artifact(engine: ProgramSource, path: str | os.PathLike[str]) -> dict[str, Any]:
    """Write ``engine``'s policies and data, compiled, to ``path`` (a Python
    source file; ``.py`` makes it importable). Returns the artifact's metadata.

    Raises :class:`~pyrego.artifact.format.ArtifactError` when the policies use
    something an artifact cannot hold (extension functions, ``with``
    replacing a builtin by another builtin, documents defined at several
    levels of one path),
    and the policies' own errors when they do not compile."""
    blob = artifact_text(engine)
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(blob)
    os.replace(tmp, path)
    from pyrego.artifact.format import open_envelope

    return open_envelope(blob, os.fspath(path))[0]


__all__ = ["MAX_LITERAL_DEPTH", "artifact_text", "literal", "write_artifact"]
