"""``pyrego fmt`` / :func:`pyrego.format_module`: OPA's canonical formatting.

Three kinds of checks:

- expected files: ``tests/fmt_cases/<mode>/NAME.rego`` formats to
  ``NAME.rego.formatted`` byte for byte (mode ``v1``, ``v0`` or ``v0_to_v1``),
  and an expected file is its own formatting;
- properties over every module of the repository's policy corpora and of
  OPA's conformance suite: formatting is idempotent and keeps the AST (the
  module parsed from the output equals the module parsed from the input,
  locations aside, up to the changes OPA's formatter makes on purpose);
- the command line: stdin, folders, ``-l``, ``-d``, ``-w``, ``--fail``,
  ``--v0-compatible``, ``--v0-v1`` and error output.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import pyrego
from pyrego.ast import nodes as ast
from pyrego.errors import Location, RegoError, RegoParseError, RegoTypeError
from pyrego.formatter import FormatErrors, format_module
from pyrego.parse.parser import parse_module
from shared_material import SHARED_DIR

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CASES = HERE / "fmt_cases"
MODES: dict[str, dict[str, bool]] = {
    "v1": {"rego_v1": True},
    "v0": {"rego_v1": False},
    "v0_to_v1": {"rego_v1": False, "v0_to_v1": True},
}
# what a formatted file is read back as
OUTPUT_V1 = {"v1": True, "v0": False, "v0_to_v1": True}


# ---------------------------------------------------------------- expected files


def _case_files() -> list[tuple[str, Path]]:
    return [(mode, p) for mode in MODES for p in sorted((CASES / mode).glob("*.rego"))]


CASE_FILES = _case_files()


def test_case_files_present() -> None:
    assert len(CASE_FILES) >= 18
    for _, path in CASE_FILES:
        assert Path(str(path) + ".formatted").is_file(), path


@pytest.mark.parametrize(("mode", "path"), CASE_FILES, ids=[f"{m}/{p.name}" for m, p in CASE_FILES])
def test_expected_file(mode: str, path: Path) -> None:
    expected = Path(str(path) + ".formatted").read_text(encoding="utf-8")
    got = format_module(path.read_text(encoding="utf-8"), path.name, **MODES[mode])
    assert got == expected
    # the expected text is a fixed point, read in the output's version
    assert format_module(expected, path.name, rego_v1=OUTPUT_V1[mode]) == expected


# ---------------------------------------------------------------- single behaviours


def fmt(text: str, **kw: bool) -> str:
    return format_module(text, "t.rego", **kw)


def test_public_api() -> None:
    assert pyrego.format_module is format_module
    assert "format_module" in pyrego.__all__


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # `=` becomes `:=` in v1, an explicit `true` value is implied
        ("package a\np = 1\nq = true if { input.x }\n", "package a\n\np := 1\nq if input.x\n"),
        # a lone set term keeps its braces (it is not a body)
        ("package a\np if { {1} }\n", "package a\n\np if {\n\t{1}\n}\n"),
        # a leading set union in a braced `if` body is parenthesised
        ("package a\np if {\n\t(input.a | input.b)\n\tinput.c\n}\n", "package a\n\np if {\n\t(input.a | input.b)\n\tinput.c\n}\n"),
        # nested infix calls are parenthesised
        ("package a\np := 1 + 2 * 3\n", "package a\n\np := 1 + (2 * 3)\n"),
        # plus(x, y, z) is z = x + y
        ("package a\np if { plus(1, 2, x) }\n", "package a\n\np if x = 1 + 2\n"),
        # arguments spanning lines get one line each
        ("package a\np := f(1,\n2)\n", "package a\n\np := f(\n\t1,\n\t2,\n)\n"),
        # the comment on a rule's closing brace stays there
        ("package a\np if {\n\tinput.x\n} # done\n", "package a\n\np if {\n\tinput.x\n} # done\n"),
        # comments keep one blank line before them at most
        ("package a\n\n\n\n# c\np := 1\n", "package a\n\n# c\np := 1\n"),
        # trailing whitespace in comments goes
        ("package a\n# c   \np := 1\n", "package a\n\n# c\np := 1\n"),
        # duplicate set elements go, as in OPA's sets
        ("package a\np := {1, 2, 1}\n", "package a\n\np := {1, 2}\n"),
        # a line starting with a minus sign would continue the one before
        ("package a\np if { input.p < 1; -1 <= input.p }\n", "package a\n\np if {\n\tinput.p < 1\n\t(-1 <= input.p)\n}\n"),
        ("package a\np if { -1 <= input.p; input.p < 1 }\n", "package a\n\np if {\n\t-1 <= input.p\n\tinput.p < 1\n}\n"),
    ],
)
def test_small_cases(source: str, expected: str) -> None:
    assert fmt(source) == expected


def test_an_else_chain_of_thousands_of_branches_formats() -> None:
    # A generated lookup table: each branch stays one line, and the chain
    # keeps every branch (the formatter walks the chain a branch at a time).
    branches = "".join(f"else := {i} if a == {i}\n" for i in range(3000))
    formatted = fmt("package a\n\nf(a) := -1 if a == -1\n" + branches)
    assert formatted.count("\nelse := ") == 3000 and fmt(formatted) == formatted
    engine = pyrego.Engine()
    engine.add_policy("a.rego", formatted)
    assert engine.eval_query("x := data.a.f(2999)")["result"][0]["bindings"]["x"] == 2999


def test_v0_output_keeps_v0_syntax() -> None:
    src = "package a\n\np[x] { x := input.x }\nq = 1 { input.q }\n"
    assert fmt(src, rego_v1=False) == "package a\n\np[x] {\n\tx := input.x\n}\n\nq = 1 {\n\tinput.q\n}\n"


def test_v0_to_v1_adds_rego_v1_and_drops_future_imports() -> None:
    src = "package a\n\nimport future.keywords.if\nimport future.keywords.in\n\np[x] { x := 1 }\n"
    assert fmt(src, rego_v1=False, v0_to_v1=True) == "package a\n\nimport rego.v1\n\np contains x if x := 1\n"


def test_v1_with_rego_v1_import_drops_future_imports() -> None:
    src = "package a\n\nimport future.keywords.in\nimport rego.v1\n\np if 1 in [1]\n"
    assert fmt(src) == "package a\n\nimport rego.v1\n\np if 1 in [1]\n"


def test_v0_member_call_adds_future_import() -> None:
    src = "package a\n\np { internal.member_2(1, [1]) }\n"
    assert fmt(src, rego_v1=False) == "package a\n\nimport future.keywords.in\n\np {\n\t1 in [1]\n}\n"


def test_parse_errors_raise() -> None:
    with pytest.raises(RegoParseError) as info:
        fmt("package a\np := \n")
    assert info.value.location is not None and info.value.location.row == 3


def test_v0_rules_rejected_in_v1() -> None:
    with pytest.raises(RegoParseError, match="`if` keyword is required"):
        fmt("package a\np { true }\n")


def test_v0_to_v1_refuses_deprecated_builtins_and_keyword_names() -> None:
    src = "package a\n\np { any([true]) }\n\nq := re_match(\"a\", \"b\")\n\nif { true }\n"
    with pytest.raises(FormatErrors) as info:
        fmt(src, rego_v1=False, v0_to_v1=True)
    messages = [(e.code, e.location.row if e.location else 0, e.message) for e in info.value.errors]
    assert messages == [
        ("rego_type_error", 3, "deprecated built-in function calls in expression: any"),
        ("rego_type_error", 5, "deprecated built-in function calls in expression: re_match"),
        ("rego_parse_error", 7, "if keyword cannot be used for rule name"),
    ]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("package a\nimport data.x\nimport data.x\n", "3:1: rego_compile_error: import must not shadow import data.x"),
        (
            "package a\nimport data.x as y\nimport data.z as y\n",
            "3:1: rego_compile_error: import must not shadow import data.x as y",
        ),
        ("package a\ninput := 1\n", "2:1: rego_compile_error: rules must not shadow input (use a different rule name)"),
        ("package a\nf(data) := 1\n", "2:3: rego_compile_error: args must not shadow data (use a different variable name)"),
        (
            "package a\np if { [1 | input := 1] }\n",
            "2:13: rego_compile_error: variables must not shadow input (use a different variable name)",
        ),
        ("package a\np if any([true])\n", "2:6: rego_type_error: deprecated built-in function calls in expression: any"),
    ],
)
def test_v1_output_checks(source: str, message: str) -> None:
    """What OPA checks before writing v1 (its answers, as `opa fmt` prints them)."""
    with pytest.raises(RegoError) as info:
        fmt(source)
    row, col, rest = message.split(":", 2)
    err = info.value
    assert err.location is not None and (err.location.row, err.location.col) == (int(row), int(col))
    assert str(err).startswith(f"t.rego:{row}:{rest}")  # OPA's text has no column


def test_operator_arity_mismatch_is_an_error() -> None:
    with pytest.raises(RegoTypeError) as info:
        fmt("package a\np := plus(1)\n")
    assert info.value.message == "plus: arity mismatch\n\thave: (number)\n\twant: (x: number,y: number)"


def test_groups_precedence_where_reading_back_would_change_it() -> None:
    # OPA writes these operands bare, which would read back grouped otherwise
    out = fmt("package a\np if {\n\tx == (a in b)\n\t(a in b) == x\n\ta in (b in c)\n}\n")
    assert "\tx == (a in b)\n\t(a in b) == x\n\ta in (b in c)\n" in out


# ---------------------------------------------------------------- properties over corpora


def strip(node: Any) -> Any:
    """An AST node as plain data, without locations, with the differences
    OPA's formatter introduces on purpose evened out:

    - wildcards are all ``_`` (their numbering is the parser's);
    - a rule head's ``=``/``:=`` (v1 output always uses ``:=``);
    - a body of just ``true`` is no body (``p if { true }`` is ``p := true``);
    - ``future.keywords`` and ``rego.v1`` imports (added or dropped with the
      Rego version) and the order of imports (sorted);
    - a set or an object holds equal elements once (as OPA's do);
    - a template string's constant parts are text;
    - an operator called with a result argument is an assignment
      (``plus(x, y, z)`` is written ``z = x + y``).
    """
    if isinstance(node, Location):
        return None
    if isinstance(node, ast.Var):
        return ("Var", "_" if node.name.startswith("$wildcard") else node.name)
    if isinstance(node, ast.Scalar):
        v = node.value
        kind = "num" if isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) else type(v).__name__
        return ("Scalar", kind, Decimal(str(v)) if kind == "num" else v)
    if isinstance(node, ast.RuleHead):
        return ("RuleHead", strip(node.ref), strip(node.value), strip(node.key), strip(node.args))
    if isinstance(node, ast.Rule):
        body = node.body
        if node.else_ is None and len(body) == 1 and _is_true_expr(body[0]):
            body = ()
        return ("Rule", strip(node.head), strip(body), node.default, strip(node.else_))
    if isinstance(node, ast.Module):
        imports = [strip(i) for i in node.imports if _import_root(i) not in ("future", "rego")]
        return ("Module", strip(node.package), tuple(sorted(imports, key=repr)), strip(node.rules))
    if isinstance(node, ast.SetTerm):
        return ("Set", frozenset(strip(x) for x in node.items))
    if isinstance(node, ast.Object):
        return ("Object", tuple(sorted({repr(strip(k)): (strip(k), strip(v)) for k, v in node.items}.items())))
    if isinstance(node, ast.TemplateString):
        return ("Template", node.raw, _template_parts(node))
    if isinstance(node, ast.Expr) and isinstance(node.statement, ast.Call) and _is_assigned_infix(node.statement):
        call = node.statement  # plus(x, y, z) is z = x + y
        unify = ast.Unify(call.args[2], ast.Call(call.op, call.args[:2]), call.location)
        return strip(ast.Expr(unify, node.negated, node.with_mods, node.location))
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        out: list[Any] = [type(node).__name__]
        for f in dataclasses.fields(node):
            if f.name in ("location", "module_file", "op_ref", "text", "file", "assign", "rego_v1"):
                continue
            out.append(strip(getattr(node, f.name)))
        return tuple(out)
    if isinstance(node, (list, tuple)):
        return tuple(strip(x) for x in node)
    if isinstance(node, dict):
        return tuple(sorted((k, repr(v)) for k, v in node.items()))
    return node


_OPERATORS = {"plus", "minus", "mul", "div", "rem", "and", "or", "equal", "neq", "lt", "lte", "gt", "gte"}


def _is_assigned_infix(call: ast.Call) -> bool:
    return call.op in _OPERATORS and len(call.args) == 3 and (call.op_ref is None or not call.op_ref.path)


def _is_true_expr(e: ast.Expr) -> bool:
    return not e.negated and not e.with_mods and isinstance(e.statement, ast.Scalar) and e.statement.value is True


def _import_root(imp: ast.Import) -> str:
    return imp.path.head.name if isinstance(imp.path.head, ast.Var) else ""


def _template_parts(t: ast.TemplateString) -> tuple[Any, ...]:
    parts: list[Any] = []
    for p in t.parts:
        if isinstance(p, ast.Scalar) and not isinstance(p.value, (dict, list)):
            v = p.value
            p = v if isinstance(v, str) else "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
        if isinstance(p, str):
            if parts and isinstance(parts[-1], str):
                parts[-1] += p
            else:
                parts.append(p)
        else:
            parts.append(strip(p))
    return tuple(parts)


def check_module(text: str, name: str, mode: str) -> None:
    """Formatting ``text`` in ``mode`` is idempotent and keeps its AST."""
    kw = MODES[mode]
    original = parse_module(text, name, rego_v1=kw["rego_v1"])
    once = format_module(text, name, **kw)
    out_v1 = OUTPUT_V1[mode]
    twice = format_module(once, name, rego_v1=out_v1)
    assert twice == once, f"{name}: formatting is not idempotent"
    again = parse_module(once, name, rego_v1=out_v1)
    assert strip(again) == strip(original), f"{name}: formatting changed the AST\n{once}"


def _repo_modules() -> list[tuple[str, Path]]:
    """Every .rego file of the repository (policy corpora, examples, benchmark
    policies, test cases), each in the Rego version it is written in: v1 when
    it parses as v1, else v0 (formatted as v0 and as v0 to v1)."""
    out = []
    for f in sorted(REPO.rglob("*.rego")):
        rel = f.relative_to(REPO)
        if any(part.startswith(".") for part in rel.parts):
            continue  # virtual environments, caches
        text = f.read_text(encoding="utf-8")
        try:
            parse_module(text, str(rel))
            out.append(("v1", f))
        except RegoError:
            out += [("v0", f), ("v0_to_v1", f)]
    return out


REPO_MODULES = _repo_modules()


def test_repo_corpus_size() -> None:
    assert len({p for _, p in REPO_MODULES}) >= 150


@pytest.mark.parametrize(
    ("mode", "path"), REPO_MODULES, ids=[f"{m}:{p.relative_to(REPO)}" for m, p in REPO_MODULES]
)
def test_repo_module_idempotent_and_ast_preserving(mode: str, path: Path) -> None:
    check_module(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)), mode)


def _with_line_comments(text: str, every: int) -> str:
    """``text`` with a comment at the end of every ``every``-th line (not in strings)."""
    from pyrego.parse.lexer import tokenize

    toks = tokenize(text)
    strings = [
        (start, start + len(t))
        for start, t, kind in zip(toks.starts, toks.texts, toks.kinds, strict=True)
        if kind in ("string", "tmpl", "tmplc")
    ]
    out = []
    offset = 0
    for i, line in enumerate(text.split("\n")):
        end = offset + len(line)
        inside = any(a < end < b for a, b in strings)
        if line.strip() and "#" not in line and not inside and i % every == 0:
            line += f" # c{i}"
        out.append(line)
        offset = end + 1
    return "\n".join(out)


STRESS_MODULES = [(m, p, n) for m, p in REPO_MODULES if "tests/repos" in str(p) and m != "v0_to_v1" for n in (1, 2)]


@pytest.mark.parametrize(
    ("mode", "path", "every"),
    STRESS_MODULES,
    ids=[f"{m}:{p.relative_to(REPO)}:{n}" for m, p, n in STRESS_MODULES],
)
def test_trailing_comments_everywhere(mode: str, path: Path, every: int) -> None:
    """Comments at the end of lines, inside collections, calls, `with`s and
    heads, where OPA's printer must sometimes write code as it stands: the
    result still parses to the same module and is stable."""
    text = _with_line_comments(path.read_text(encoding="utf-8"), every)
    check_module(text, str(path.relative_to(REPO)), mode)


def _respaced(text: str, seed: int) -> str:
    """``text`` with the spaces between tokens on a line changed (1 to 4)."""
    import random

    from pyrego.parse.lexer import tokenize

    rng = random.Random(seed)
    toks = tokenize(text)
    out = []
    pos = 0
    for start, tok, gap in zip(toks.starts, toks.texts, toks.gaps, strict=True):
        between = text[pos:start]
        if gap == 1 and "\n" not in between and "#" not in between:
            between = " " * rng.randint(1, 4)
        out.append(between + tok)
        pos = start + len(tok)
    return "".join(out) + text[pos:]


RESPACED = [(m, p) for m, p in REPO_MODULES if m != "v0_to_v1" and "fmt_cases" not in str(p)]


@pytest.mark.parametrize(("mode", "path"), RESPACED, ids=[f"{m}:{p.relative_to(REPO)}" for m, p in RESPACED])
def test_spacing_within_lines_does_not_matter(mode: str, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    respaced = _respaced(text, seed=len(text))
    assert respaced != text or " " not in text
    name = str(path.relative_to(REPO))
    assert format_module(respaced, name, **MODES[mode]) == format_module(text, name, **MODES[mode])


def _conformance_files() -> list[Path]:
    if SHARED_DIR is None:
        return []
    root = SHARED_DIR / "opa-conformance" / "v1"
    return sorted(root.rglob("*.yaml")) if root.is_dir() else []


CONFORMANCE_FILES = _conformance_files()


def _conformance_modules(path: Path) -> Iterator[tuple[str, str]]:
    from pyrego.conformance import load_yaml

    doc = load_yaml(path.read_text(encoding="utf-8")) or {}
    for case in doc.get("cases") or []:
        for i, module in enumerate(case.get("modules") or []):
            yield f"{case.get('note', '')}#{i}", str(module)


@pytest.mark.parametrize("path", CONFORMANCE_FILES or [None], ids=[p.stem for p in CONFORMANCE_FILES] or ["missing"])
def test_conformance_modules_idempotent_and_ast_preserving(path: Path | None) -> None:
    if path is None:
        pytest.skip("OPA conformance cases not found (no ../shared/opa-conformance/v1)")
    for name, module in _conformance_modules(path):
        try:
            parse_module(module, name)
        except RegoError:
            continue  # cases about modules that do not parse
        check_module(module, name, "v1")


# ---------------------------------------------------------------- the same meaning to OPA


@pytest.mark.parametrize("path", CONFORMANCE_FILES or [None], ids=[p.stem for p in CONFORMANCE_FILES] or ["missing"])
def test_formatted_conformance_cases_mean_the_same_to_opa(oracle: Any, path: Path | None) -> None:
    """OPA v1.20.2 answers every conformance case (query, data, input) the same
    with the formatted modules as with the original ones, and parses each
    formatted module to the same AST."""
    if path is None:
        pytest.skip("OPA conformance cases not found (no ../shared/opa-conformance/v1)")
    from pyrego.conformance import iter_cases

    folder = path.parent.name
    for case in iter_cases(path.parent.parent, [folder]):
        if case.file != str(path) or not case.modules or not case.query:
            continue
        try:
            formatted = [format_module(m, f"m{i}.rego") for i, m in enumerate(case.modules)]
        except RegoError:
            continue  # modules that do not parse (or that v1 refuses): nothing to compare
        inp = case.input if case.input_given else None
        original = {f"m{i}.rego": m for i, m in enumerate(case.modules)}
        rewritten = {f"m{i}.rego": m for i, m in enumerate(formatted)}
        want = oracle.evaluate(original, case.query, input=inp, data=case.data)
        got = oracle.evaluate(rewritten, case.query, input=inp, data=case.data)
        assert (got.bindings, got.error_code) == (want.bindings, want.error_code), case.id
        for before, after in zip(case.modules, formatted, strict=True):
            assert opa_ast(oracle, after) == opa_ast(oracle, before), f"{case.id}: OPA parses the output otherwise"


def opa_ast(oracle: Any, text: str) -> Any:
    """The module as OPA parses it (``rego.parse_module``), without what OPA's
    formatter changes on purpose: ``=``/``:=`` in heads, the legacy ``name``
    of a head (OPA keeps it for `p[k] := v`, not for the `p[k]` it writes
    for `p[k] := true`), the order of imports and the v0/v1 imports, comments."""
    res = oracle.evaluate({}, f"x := rego.parse_module({json.dumps('m.rego')}, {json.dumps(text)})")
    assert not res.is_error, res.error_message
    module = res.bindings[0]["x"]

    def clean(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("assign", "name", "comments", "annotations")}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x

    imports = [i for i in module.get("imports", []) if i["path"]["value"][0]["value"] not in ("future", "rego")]
    module["imports"] = sorted(imports, key=lambda i: json.dumps(i, sort_keys=True))
    return clean(module)


V1_REPOS = sorted(p for p in (REPO / "tests" / "repos").iterdir() if p.is_dir() and not p.name.endswith("_v0"))


@pytest.mark.parametrize("repo", V1_REPOS, ids=[p.name for p in V1_REPOS])
def test_formatted_repositories_mean_the_same_to_opa(oracle: Any, repo: Path) -> None:
    """OPA computes the same ``data`` document (every rule, the tests'
    results included) from a formatted policy repository, and parses every
    formatted file to the same AST."""
    files = {str(p.relative_to(repo)): p.read_text(encoding="utf-8") for p in sorted(repo.rglob("*.rego"))}
    formatted = {name: format_module(text, name) for name, text in files.items()}
    query = "x := data with time.now_ns as 1700000000000000000"  # (a clock would differ between runs)
    want = oracle.evaluate(files, query)
    got = oracle.evaluate(formatted, query)
    assert not want.is_error, want.error_message
    assert (got.bindings, got.error_code) == (want.bindings, want.error_code)
    for name, text in files.items():
        assert opa_ast(oracle, formatted[name]) == opa_ast(oracle, text), name


# ---------------------------------------------------------------- the command line


def run(*args: str, stdin: str | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyrego", "fmt", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


UNFORMATTED = "package a\np   :=   1\n"
FORMATTED = "package a\n\np := 1\n"


def test_cli_stdin_to_stdout() -> None:
    p = run(stdin=UNFORMATTED)
    assert (p.returncode, p.stdout) == (0, FORMATTED)
    p = run("-", stdin=UNFORMATTED)
    assert (p.returncode, p.stdout) == (0, FORMATTED)


def test_cli_file_list_diff_write_fail(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    bad = tmp_path / "sub" / "b.rego"
    good = tmp_path / "a.rego"
    bad.write_text(UNFORMATTED)
    good.write_text(FORMATTED)
    (tmp_path / "notes.txt").write_text("not rego")
    p = run(str(tmp_path))  # folders are searched recursively
    assert p.returncode == 0
    assert p.stdout == FORMATTED + FORMATTED
    p = run("-l", str(tmp_path))
    assert (p.returncode, p.stdout) == (0, f"{bad}\n")
    p = run("-l", "--fail", str(tmp_path))
    assert (p.returncode, p.stdout) == (2, f"{bad}\n")
    assert "unexpected diff" in p.stderr
    p = run("-d", str(bad))
    assert p.returncode == 0
    assert p.stdout.startswith(f"--- {bad} (original)\n+++ {bad} (formatted)\n")
    assert "-p   :=   1\n" in p.stdout and "+p := 1\n" in p.stdout
    p = run("--fail", str(good))  # (unchanged: printed, as without --fail)
    assert (p.returncode, p.stdout) == (0, FORMATTED)
    p = run("--fail", str(bad))
    assert (p.returncode, p.stdout, p.stderr) == (2, "", "unexpected diff\n")
    p = run("-w", "--fail", str(bad))  # fails before writing
    assert p.returncode == 2 and bad.read_text() == UNFORMATTED
    p = run("-w", str(tmp_path))
    assert p.returncode == 0 and p.stdout == ""
    assert bad.read_text() == FORMATTED
    p = run("-l", "--fail", str(tmp_path))
    assert (p.returncode, p.stdout) == (0, "")


def test_cli_versions(tmp_path: Path) -> None:
    v0 = "package a\n\np[x] { x := 1 }\n"
    p = run("--v0-compatible", stdin=v0)
    assert (p.returncode, p.stdout) == (0, "package a\n\np[x] {\n\tx := 1\n}\n")
    p = run("--v0-v1", stdin=v0)
    assert (p.returncode, p.stdout) == (0, "package a\n\nimport rego.v1\n\np contains x if x := 1\n")
    p = run(stdin=v0)  # v0 is not v1
    assert p.returncode == 1
    assert "rego_parse_error" in p.stderr


def test_cli_parse_error_output(tmp_path: Path) -> None:
    f = tmp_path / "broken.rego"
    f.write_text("package a\n\np := \n")
    p = run(str(f))
    assert p.returncode == 2
    assert p.stdout == ""
    assert p.stderr.startswith(f"failed to format Rego source file: 1 error occurred: {f}:4: rego_parse_error: ")
    p = run(stdin="package a\n\np := \n")
    assert p.returncode == 1
    assert p.stderr.startswith("1 error occurred: stdin:4: rego_parse_error: ")
