"""Builds ``src/pyrego/typecheck/signatures_data.py``: every builtin's declared type.

OPA's capabilities file holds each builtin's declaration (argument and result
types) without the argument names that OPA's type errors print
(``want: (collection: any<...>, n: number)``). The names are asked of OPA
itself: a call with two arguments too many gives ``arity mismatch`` with the
named arguments; a call whose output (or, when the result is ``any``, one
argument) cannot have its declared type gives ``invalid argument(s)`` with
the named arguments and the named result.

    python tests/typecheck_signatures.py [CAPABILITIES.json] > src/pyrego/typecheck/signatures_data.py

The table (a Python module, so that it ships and loads like code) maps each
name to ``(args, result, variadic)`` in OPA's JSON type form, each with a
``"name"`` where OPA has one (``result`` and ``variadic`` may be None).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from opa_oracle import get_oracle  # noqa: E402
from pyrego.typecheck import static_types as T  # noqa: E402
from pyrego.typecheck.unify import unifies  # noqa: E402
from shared_material import CAPABILITIES, SHARED_DIR  # noqa: E402

DEFAULT_CAPABILITIES = SHARED_DIR.joinpath(*CAPABILITIES) if SHARED_DIR is not None else None
# Language constructs: not called with arguments by name.
SKIP = {"eq", "assign", "print", "internal.print", "internal.member_2", "internal.member_3", "rego.metadata.chain", "rego.metadata.rule"}
SAMPLE_VALUES = ["1", '"s"', "true", "null", "[]", "{}", "set()"]


def _value_for(t: T.MaybeType) -> str:
    """Rego text of a value of type ``t``."""
    t = T.unwrap(t)
    if t is None or t is T.NULL:
        return "null"
    if t is T.BOOLEAN:
        return "true"
    if t is T.NUMBER:
        return "1"
    if t is T.STRING:
        return '"s"'
    if isinstance(t, T.ArrayType):
        return "[" + ", ".join(_value_for(x) for x in t.static) + "]"
    if isinstance(t, T.ObjectType):
        return "{" + ", ".join(f"{json.dumps(k)}: {_value_for(v)}" for k, v in t.static) + "}"
    if isinstance(t, T.SetType):
        return "set()"
    if isinstance(t, T.AnyType):
        return _value_for(t.of[0]) if t.of else "null"
    return "null"


def _type_of_sample(text: str) -> T.Type:
    return {
        "1": T.NUMBER, '"s"': T.STRING, "true": T.BOOLEAN, "null": T.NULL,
        "[]": T.ArrayType((), T.ANY), "{}": T.ObjectType((), (T.ANY, T.ANY)), "set()": T.SetType(T.ANY),
    }[text]


def _failing(t: T.MaybeType) -> str | None:
    for v in SAMPLE_VALUES:
        if not unifies(_type_of_sample(v), T.unwrap(t)):
            return v
    return None


def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


# A name may hold spaces ("formatted timestamp"); a type has no ": " before a bracket.
_NAMED = re.compile(r"^([^<\[(:]+): (.*)$")


def _want_names(message: str) -> list[str | None]:
    m = re.search(r"\n\twant: \((.*)\)", message)
    if m is None:
        raise RuntimeError(f"no want line in {message!r}")
    names: list[str | None] = []
    for part in _split_top(m.group(1)):
        n = _NAMED.match(part)
        names.append(n.group(1) if n else None)
    return names


def _ask(oracle: Any, body: str) -> str:
    res = oracle.evaluate({"p.rego": f"package p\n\nr if {{\n\t{body}\n}}\n"}, "x = data.p")
    if not res.is_error:
        raise RuntimeError(f"OPA accepted {body!r}")
    return res.error_message or ""


def names_for(oracle: Any, name: str, fn: T.FunctionType) -> tuple[list[str | None], str | None]:
    """Argument names and the result name of builtin ``name``."""
    arity = len(fn.args)
    arg_names: list[str | None] = [None] * arity
    if arity:
        msg = _ask(oracle, f"{name}({', '.join(['null'] * (arity + 2))})")
        arg_names = _want_names(msg)[:arity]
    if fn.result is None:
        return arg_names, None
    args = [_value_for(a) for a in fn.args]
    bad_out = _failing(fn.result)
    if bad_out is not None:
        msg = _ask(oracle, f"{name}({', '.join(args + [bad_out])})")
    else:
        for i, a in enumerate(fn.args):
            bad = _failing(a)
            if bad is not None:
                trial = list(args)
                trial[i] = bad
                msg = _ask(oracle, f"_ = {name}({', '.join(trial)})")
                break
        else:
            return arg_names, None  # every type is any: OPA never prints the names
    names = _want_names(msg)
    return names[:arity], names[arity] if len(names) > arity else None


def _with_name(decl: dict[str, Any], name: str | None) -> dict[str, Any]:
    return {**decl, "name": name} if name else decl


def build(capabilities: Path) -> dict[str, Any]:
    oracle = get_oracle()
    data = json.loads(capabilities.read_text())
    table: dict[str, Any] = {}
    for b in sorted(data["builtins"], key=lambda b: b["name"]):
        decl = b["decl"]
        fn = T.from_decl(decl)
        assert isinstance(fn, T.FunctionType)
        args = decl.get("args", [])
        if b["name"] in SKIP:
            arg_names: list[str | None] = [None] * len(args)
            result_name = None
        else:
            arg_names, result_name = names_for(oracle, b["name"], fn)
        table[b["name"]] = [
            [_with_name(a, n) for a, n in zip(args, arg_names)],
            _with_name(decl["result"], result_name) if "result" in decl else None,
            decl.get("variadic"),
        ]
    return table


HEADER = '''"""Declared types of OPA v1.20.2's builtins, with OPA's argument names.

Generated by ``python tests/typecheck_signatures.py`` from OPA's capabilities
file and OPA's own messages; do not edit. Each entry is ``(args, result,
variadic)`` in OPA's JSON form for types (see :func:`pyrego.typecheck.static_types.from_decl`).
"""

# fmt: off
SIGNATURES: dict[str, tuple] = {
'''


def render(table: dict[str, Any]) -> str:
    lines = []
    for name, (args, result, variadic) in table.items():
        lines.append(f"    {name!r}: ({_py(args)}, {_py(result)}, {_py(variadic)}),")
    return HEADER + "\n".join(lines) + "\n}\n"


def _py(v: Any) -> str:
    return repr(json.loads(json.dumps(v, sort_keys=True))) if v is not None else "None"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT_CAPABILITIES
    if path is None:
        print("no capabilities file: pass its path, or set $PYREGO_SHARED", file=sys.stderr)
        return 2
    sys.stdout.write(render(build(path)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
