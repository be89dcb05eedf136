"""``pyrego deps``: a query's base and virtual documents, as ``opa deps`` finds them.

Expected results come from OPA's own tests of its dependency analysis
(``v1/dependencies/deps_test.go``): ``TestDependencies`` gives, for each
module, the minimal refs its rules depend on, from which the base documents of
a query of the whole package follow (each ref cut at its first non-constant
part; imports of data are not rules, so they are base documents);
``TestBaseAndVirtual`` and ``TestBase`` give base and virtual documents
directly. The command's own behaviour comes from ``cmd/deps.go`` and
``cmd/deps_test.go`` (the help example's table, error wording, Rego versions
of bundles and flags) and ``internal/presentation`` (the JSON shape: refs as
lists of AST terms, omitted when empty; the table with one or two columns).
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pyrego.cli import main

REPO = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["deps", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


OPA_DEPENDENCY_CASES: list[tuple[str, list[str]]] = [
    (
        "package a.b.c\nimport data.a.x\nimport data.a.y\n\nd if {\n\ta = x\n\tb = data.a.y\n\ta = b\n}",
        ["a.x", "a.y"],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nd if {\n\ta = x\n\tb = a.y\n\ta = "4"\n}',
        ["a.x"],
    ),
    (
        "package a.b.c\nimport data.a.x\n\nd if {\n\ttrue = a.y\n\ta = x\n}",
        ["a.x.y"],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nd = f if {\n\ta = x.y\n\te = "foo"\n\tf = [b | a[i].b = e\n\t\ta[i].c = b]\n}',
        ["a.x.y[i].b", "a.x.y[i].c"],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nd[i] = f if {\n\tx[i]\n\tcount([1 | x[i].foo = "foo"], f)\n}',
        ["a.x[i].foo"],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nd[i] = f if {\n\tb = x.y\n\tb[i]\n\tcount([1 | x.y[_].foo = "foo"], f)\n}',
        ["a.x.y[i]", "a.x.y[_].foo"],
    ),
    (
        "package a.b.c\nimport data.a.x\n\nd contains i if {\n\tb = x.y\n\tb[i]\n}",
        ["a.x.y[i]"],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nd[a] = b if {\n\ta = x.y\n\tb = x.z\n\tx.y.z = "foo"\n\tx.z.a.b = "fizz"\n\tx.a.b = "bar"\n}',
        ["a.x.y", "a.x.z", "a.x.a.b"],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nf if {\n\ta = x\n\tb = a.y\n\tc = b.z\n\td = c.a\n\te = d.b\n\te.c = "foo"\n}',
        ["a.x.y.z.a.b.c"],
    ),
    (
        'package a.b.c\nimport data.a.x\nimport data.a.y\nimport data.j\n\nf if {\n\ta = x\n\tb = a.y\n\tc = b.z\n\td = c.a\n\te = d.b\n\td = j\n\te.c = "foo"\n\ta = y\n\te["foo"] = "bar"\n}',
        ["a.x", "a.y", "j"],
    ),
    (
        'package a.b.c\nimport data.a.x\nimport data.a.y\nimport data.j\n\nf if {\n\ta = x\n\tb = a.y\n\tc = b.z\n\td = c.a\n\td.b = "foo"\n}\n\ng if {\n\ta = x.z.b\n\te = x\n\th = e.y\n\td = h.z\n\ti = d.j\n\ta = 9\n\ti = "bar"\n}',
        ["a.x.y.z.a.b", "a.x.y.z.j", "a.x.z.b"],
    ),
    (
        'package a.b.c\nimport data.a.x\nimport data.a.y\nimport data.a.z\nimport data.a.f\nimport data.a.g\n\na[i] = [j, k] if {\n\tb = x.y\n\ty[b.z[0]] = "foo"\n\tz[b.a.c][i]\n\tf[j][b.a.b] = "foo"\n\tg["foo"][k]\n}',
        [
            "a.x.y.z[0]",
            "a.x.y.a.c",
            "a.x.y.a.b",
            "a.y[__local0__]",
            "a.z[__local1__][i]",
            "a.f[j][__local2__]",
            "a.g.foo[k]",
        ],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nf if {\n\ta = x\n\tb = a.y\n\tb = a.z\n\tc = b.i\n\tc = b.j\n\td = c.m\n\td = c.n\n\td.f = "foo"\n}',
        ["a.x.y", "a.x.z"],
    ),
    (
        "package a.b.c\nimport data.a.x\n\nf = [z, g] if {\n\ta = x\n\tb = a.y.z\n\tindexof(a.b, b, z)\n\tc = b.e\n\tindexof(c, a.b[a.c].c, g)\n}",
        ["a.x.y.z", "a.x.b", "a.x.c"],
    ),
    (
        'package a.b.c\nimport data.a.x\n\nf = [g] if {\n\ta = x\n\tb = a.y.z\n\tc = b.e\n\td = a.u\n\tindexof(b, a.c[d].c, g)\n\tc = "foo"\n}',
        ["a.x.y.z", "a.x.u", "a.x.c[d].c"],
    ),
    (
        "package a.b.c\nimport data.a.x\n\nf if {\n\tx\n}",
        ["a.x"],
    ),
]


def constant_prefix(ref: str) -> str:
    """OPA's Ref.ConstantPrefix on a ref written as text: cut at the first
    bracket that holds a variable."""
    m = re.search(r"\[[^\]\"0-9]", ref)
    return ref[: m.start()] if m else ref


def ref_order(ref: str) -> list[tuple[int, object]]:
    """Ref order (OPA's Compare) for refs of names and numbers: numbers before strings."""
    parts = re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]", ref)
    return [(0, int(n)) if n else (1, s) for s, n in parts]


@pytest.mark.parametrize("index", range(len(OPA_DEPENDENCY_CASES)))
def test_dependencies_as_opa_deps_test(index: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestDependencies: base documents are the constant prefixes of OPA's minimal refs;
    the virtual documents are the package's rules."""
    text, minimal = OPA_DEPENDENCY_CASES[index]
    (tmp_path / "test.rego").write_text(text)
    code, out, err = run(capsys, "--format", "json", "-d", str(tmp_path / "test.rego"), "data.a.b.c")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    base = [
        "data." + ".".join(str(t["value"]) if t["type"] == "string" else f"[{t['value']}]" for t in r[1:])
        for r in doc["base"]
    ]
    base = [b.replace(".[", "[") for b in base]
    expected = sorted({constant_prefix("data." + m) for m in minimal}, key=ref_order)
    assert base == expected
    rules = sorted(
        {
            "data.a.b.c." + name
            for name in re.findall(r"^(\w+)(?:\[| |$)", text, re.M)
            if name not in ("package", "import")
        }
    )
    virtual = [".".join(str(t["value"]) for t in r) for r in doc["virtual"]]
    assert virtual == rules


def test_base_and_virtual_as_opa_deps_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestBaseAndVirtual: a rule reached through another package's rule; refs into rules
    are followed, the rest are base documents."""
    (tmp_path / "one.rego").write_text(
        'package x\nimport rego.v1\n\ny = "foo"\n\nz[x] = w if {\n\tw = x\n\tx = "bar"\n\ty = x\n}\n'
    )
    (tmp_path / "two.rego").write_text(
        'package a\nimport rego.v1\n\nb = {"buz": "bar"}\n\nc[a] = e if {\n\te = data.d[_]\n\tdata.x.z[a] = e[2]\n}\n'
    )
    code, out, _ = run(capsys, "-d", str(tmp_path), "x = data.a.c[y]")
    assert code == 0
    assert out == (
        "┌────────────────┬───────────────────┐\n"
        "│ BASE DOCUMENTS │ VIRTUAL DOCUMENTS │\n"
        "├────────────────┼───────────────────┤\n"
        "│ data.d         │ data.a.c          │\n"
        "│                │ data.x.y          │\n"
        "│                │ data.x.z          │\n"
        "└────────────────┴───────────────────┘\n"
    )


def test_base_as_opa_deps_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestBase: a var bound to input and then used makes all of input a base document."""
    (tmp_path / "test.rego").write_text(
        'package test\nimport rego.v1\n\np if {\n\tinput = x\n\tx = y\n\ty.z = "foo"\n}\n\nq if {\n\tinput.a = "bar"\n}\n'
    )
    code, out, _ = run(capsys, "--format", "json", "-d", str(tmp_path), "data.test.p")
    assert code == 0
    assert json.loads(out) == {
        "base": [[{"type": "var", "value": "input"}]],
        "virtual": [
            [{"type": "var", "value": "data"}, {"type": "string", "value": "test"}, {"type": "string", "value": "p"}]
        ],
    }


def test_help_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cmd/deps.go's example (drawn in OPA's current box style)."""
    (tmp_path / "policy.rego").write_text(
        'package policy\n\nallow if is_admin\n\nis_admin if "admin" in input.user.roles\n'
    )
    code, out, _ = run(capsys, "--data", str(tmp_path / "policy.rego"), "data.policy.allow")
    assert code == 0
    assert out == (
        "┌──────────────────┬──────────────────────┐\n"
        "│  BASE DOCUMENTS  │  VIRTUAL DOCUMENTS   │\n"
        "├──────────────────┼──────────────────────┤\n"
        "│ input.user.roles │ data.policy.allow    │\n"
        "│                  │ data.policy.is_admin │\n"
        "└──────────────────┴──────────────────────┘\n"
    )
    code, out, _ = run(capsys, "--data", str(tmp_path / "policy.rego"), "input.x")
    assert out == "┌────────────────┐\n│ BASE DOCUMENTS │\n├────────────────┤\n│ input.x        │\n└────────────────┘\n"
    code, out, _ = run(capsys, "--format", "json", "--data", str(tmp_path / "policy.rego"), "1 == 1")
    assert (code, out) == (0, "{}\n")
    code, out, _ = run(capsys, "--data", str(tmp_path / "policy.rego"), "1 == 1")
    assert (code, out) == (0, "")


def test_rego_version_errors_as_opa_deps_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestDeps_DefaultRegoVersion / TestDepsCompatibleFlags: v0 code needs --v0-compatible;
    parse errors are OPA's `file:row: code: message` lines."""
    path = tmp_path / "test.rego"
    path.write_text("package test\na[x] {\n\tx := 42\n}")
    code, out, err = run(capsys, "-d", str(path), "data.test.p")
    assert (code, out) == (1, "")
    assert f"{path}:2: rego_parse_error: `if` keyword is required before rule body" in err
    code, _, err = run(capsys, "--v0-compatible", "-d", str(path), "data.test.a")
    assert (code, err) == (0, "")
    path.write_text("package test\nimport rego.v1\np contains 3 if {\n\tinput.x = 1\n}")
    for flags in ([], ["--v0-compatible"], ["--v1-compatible"], ["--v0-compatible", "--v1-compatible"]):
        code, out, err = run(capsys, *flags, "-d", str(path), "data.test.p")
        assert (code, err) == (0, ""), flags
        assert "input.x" in out


def write_tar_gz(path: Path, files: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("as_tar", [False, True])
def test_bundle_rego_versions_as_opa_deps_test(
    as_tar: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """TestDepsV1WithBundleRegoVersion: the manifest's rego_version and file_rego_versions."""
    cases = [
        ({".manifest": '{"rego_version": 0}', "policy.rego": "package test\np[3] {\n\tinput.x = 1\n}"}, None),
        (
            {
                ".manifest": '{"rego_version": 0, "file_rego_versions": {"/bar/*.rego": 1}}',
                "foo/policy1.rego": "package test\np[3] {\n\tinput.x = 1\n}",
                "bar/policy2.rego": "package test\np contains 4 if {\n\tinput.x = 1\n}",
            },
            None,
        ),
        (
            {".manifest": '{"rego_version": 1}', "policy.rego": "package test\np[3] {\n\tinput.x = 1\n}"},
            "`if` keyword is required before rule body",
        ),
    ]
    for i, (files, error) in enumerate(cases):
        root = tmp_path / f"case{i}"
        root.mkdir()
        if as_tar:
            bundle = root / "bundle.tar.gz"
            write_tar_gz(bundle, files)
        else:
            bundle = root
            for name, text in files.items():
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).write_text(text)
        code, out, err = run(capsys, "-b", str(bundle), "data.test.p")
        if error is None:
            assert (code, err) == (0, ""), files
            assert "input.x" in out and "data.test.p" in out
        else:
            assert code == 1 and error in err


def test_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "-d", str(tmp_path / "nope.rego"), "data.x")
    assert code == 1 and err == f"stat {tmp_path / 'nope.rego'}: no such file or directory\n"
    code, _, err = run(capsys, "data.x", "data.y")
    assert code == 1 and "specify exactly one query argument" in err
    code, _, err = run(capsys, "data.x[")
    assert code == 1 and "rego_parse_error" in err


def test_repository_dependencies(capsys: pytest.CaptureFixture[str]) -> None:
    """On a test repository every virtual document is a rule path and every base document
    is rooted at input or at data outside the rules."""
    repo = REPO / "tests" / "repos" / "api_authz"
    code, out, err = run(capsys, "--format", "json", "-d", str(repo), "data.authz")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc["virtual"] and all(r[0]["value"] == "data" for r in doc["virtual"])
    assert all(r[0]["value"] in ("input", "data") for r in doc.get("base", []))


def test_subprocess_and_help(tmp_path: Path) -> None:
    (tmp_path / "p.rego").write_text("package p\n\nq if input.a\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "deps", "-f", "json", "-d", str(tmp_path), "data.p.q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["base"] == [[{"type": "var", "value": "input"}, {"type": "string", "value": "a"}]]
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "deps", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    for text in ("--data", "--bundle", "--format", "BASE DOCUMENTS", "Print dependencies of provided query"):
        assert text in proc.stdout
