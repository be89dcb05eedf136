"""``pyrego inspect``: bundles and Rego files summarised as ``opa inspect`` does.

Expected outputs come from OPA's command tests (``cmd/inspect_test.go``:
the exact tables of a bundle archive, the annotation listing, the JSON of
``Info``), from ``cmd/inspect.go`` and ``internal/bundle/inspect`` (JSON key
order of the Info struct, namespaces of data files and Wasm entrypoints,
``error: ...`` messages), and from OPA itself: the annotation values pyrego
writes are compared with what OPA v1.20.2's ``rego.metadata.rule()`` returns
for the same METADATA.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from opa_oracle import OracleUnavailable, get_oracle
from pyrego.ast.json_annotations import annotation_json
from pyrego.cli import main
from pyrego.parse.parser import parse_module

REPO = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["inspect", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_tar_gz(path: Path, files: list[tuple[str, str]]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


# ---------------------------------------------------------------- cmd/inspect_test.go


def test_pretty_bundle_as_opa_inspect_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestDoInspectPretty: manifest and namespace tables (long values truncated, long
    paths shortened in the middle, repeated cells merged), Wasm entrypoints as namespaces."""
    root = "metadata/" + "foobar" * 20 + "/features"
    manifest = json.dumps(
        {
            "revision": "foobar" * 10,
            "roots": ["foo", "bar", "fuz", "http", "a", "x", root],
            "metadata": {"hello": "world" * 100},
            "wasm": [
                {"entrypoint": "http/example/authz", "module": "/policy.wasm"},
                {"entrypoint": "http/example/foo/allow", "module": "/example/policy.wasm"},
            ],
        }
    )
    files = [
        ("/.manifest", manifest),
        ("/data.json", '{"x": {"y": true}, "a": {"b": {"z": true}}}'),
        ("/http/example/authz/foo.rego", "package http.example.authz"),
        ("/http/example/authz/data.json", '{"faz": "baz"}'),
        ("/example/foo.rego", "package foo"),
        ("/a/b/y/foo.rego", "package a.b.y"),
        ("/a/xxxxxxxxxxxxxxxxxxxxxx/yyyyyyyyyyyyyyyyyyyy/foo.rego", "package a.b.y"),
        ("/example/policy.wasm", "modules-compiled-as-wasm-binary"),
        ("/http/example/policy.wasm", "modules-compiled-as-wasm-binary"),
        ("/policy.wasm", "modules-compiled-as-wasm-binary"),
    ]
    bundle = tmp_path / "bundle.tar.gz"
    write_tar_gz(bundle, files)
    code, out, err = run(capsys, str(bundle))
    assert (code, err) == (0, "")
    assert out.strip() == (
        """\
MANIFEST:
┌──────────┬────────────────────────────────────────────────────┐
│  FIELD   │                       VALUE                        │
├──────────┼────────────────────────────────────────────────────┤
│ Revision │ foobarfoobarfoobarfoobarfoobarfoobarfoobarfooba... │
│ Roots    │ a                                                  │
│          │ bar                                                │
│          │ foo                                                │
│          │ fuz                                                │
│          │ http                                               │
│          │ metadata/...oobarfoobarfoobarfoobarfoobar/features │
│          │ x                                                  │
│ Metadata │ {"hello":"worldworldworldworldworldworldworldwo... │
└──────────┴────────────────────────────────────────────────────┘
NAMESPACES:
┌─────────────────────────────┬────────────────────────────────────────────────────┐
│          NAMESPACE          │                        FILE                        │
├─────────────────────────────┼────────────────────────────────────────────────────┤
│ data                        │ /data.json                                         │
│ data.a.b.y                  │ /a/b/y/foo.rego                                    │
│                             │ /a/...xxxxxxxxxxxxxx/yyyyyyyyyyyyyyyyyyyy/foo.rego │
│ data.foo                    │ /example/foo.rego                                  │
│ data.http.example.authz     │ /http/example/authz/foo.rego                       │
│                             │ /http/example/authz/data.json                      │
│                             │ /policy.wasm                                       │
│ data.http.example.foo.allow │ /example/policy.wasm                               │
└─────────────────────────────┴────────────────────────────────────────────────────┘"""
    )


def test_manifest_single_root_as_opa_inspect_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestDoInspectPrettyManifestOnlySingleRoot."""
    root = "metadata/" + "foobar" * 6 + "/features"
    bundle = tmp_path / "bundle.tar.gz"
    write_tar_gz(bundle, [("/.manifest", json.dumps({"roots": [root], "metadata": {"hello": "world"}}))])
    code, out, _ = run(capsys, str(bundle))
    assert code == 0
    assert out.strip() == (
        """\
MANIFEST:
┌──────────┬────────────────────────────────────────────────────┐
│  FIELD   │                       VALUE                        │
├──────────┼────────────────────────────────────────────────────┤
│ Roots    │ metadata/...oobarfoobarfoobarfoobarfoobar/features │
│ Metadata │ {"hello":"world"}                                  │
└──────────┴────────────────────────────────────────────────────┘"""
    )


def test_json_bundle_as_opa_inspect_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestDoInspect: the Info JSON (Go struct order: manifest, signatures_config,
    namespaces, capabilities); a v1 module requires the rego_v1 feature."""
    bundle = tmp_path / "bundle.tar.gz"
    write_tar_gz(
        bundle,
        [
            ("/.manifest", '{"revision": "rev", "roots": ["foo", "bar", "fuz", "baz", "a", "x"]}'),
            ("/data.json", '{"x": {"y": true}, "a": {"b": {"z": true}}}'),
            ("/example/foo.rego", "package foo"),
        ],
    )
    code, out, _ = run(capsys, "--format", "json", str(bundle))
    assert code == 0
    doc = json.loads(out)
    assert doc == {
        "capabilities": {"features": ["rego_v1"]},
        "manifest": {"revision": "rev", "roots": ["foo", "bar", "fuz", "baz", "a", "x"]},
        "signatures_config": {},
        "namespaces": {"data": ["/data.json"], "data.foo": ["/example/foo.rego"]},
    }
    assert list(doc) == ["manifest", "signatures_config", "namespaces", "capabilities"]


ANNOTATED = """\
# METADATA
# title: pkg-title
# description: pkg-descr
# organizations:
# - pkg-org
# related_resources:
# - https://pkg
# - ref: https://pkg
#   description: rr-pkg-note
# authors:
# - pkg-author
# schemas:
# - input: {"type": "boolean"}
# custom:
#  pkg: pkg-custom
package test

# METADATA
# scope: document
# title: doc-title
# description: doc-descr
# organizations:
# - doc-org
# related_resources:
# - https://doc
# - ref: https://doc
#   description: rr-doc-note
# authors:
# - doc-author
# schemas:
# - input: {"type": "integer"}
# custom:
#  doc: doc-custom

# METADATA
# title: rule-title
# description: rule-title
# organizations:
# - rule-org
# related_resources:
# - https://rule
# - ref: https://rule
#   description: rr-rule-note
# authors:
# - rule-author
# schemas:
# - input: {"type": "string"}
# custom:
#  rule: rule-custom
p = 1"""


def test_annotations_pretty_as_opa_inspect_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestDoInspectWithAnnotations (pretty): sorted by path, then annotation location."""
    (tmp_path / "x.rego").write_text(ANNOTATED)
    code, out, _ = run(capsys, "-a", str(tmp_path))
    assert code == 0
    sections = []
    for kind, org, schema_type in (("pkg", "pkg", "boolean"), ("doc", "doc", "integer"), ("rule", "rule", "string")):
        title = f"{kind}-title"
        descr = "rule-title" if kind == "rule" else f"{kind}-descr"
        rule = "" if kind == "pkg" else "Rule:     p\n"
        row = 16 if kind == "pkg" else 50
        scope = {"pkg": "package", "doc": "document", "rule": "rule"}[kind]
        sections.append(
            f"{title}\n{'=' * len(title)}\n\n{descr}\n\nPackage:  test\n{rule}Location: {tmp_path}/x.rego:{row}\n"
            f"Scope: {scope}\n\nOrganizations:\n {org}-org\n\nAuthors:\n {org}-author\n\n"
            f'Schemas:\n input: {{"type":"{schema_type}"}}\n\nRelated Resources:\n https://{org}\n'
            f' https://{org} rr-{org}-note\n\nCustom:\n {org}: "{org}-custom"\n'
        )
    idx = out.index("ANNOTATIONS")
    assert out[idx:].strip() == ("ANNOTATIONS:\n" + "\n".join(sections)).strip()


def test_annotations_json_as_opa_inspect_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestDoInspectWithAnnotations (json): AnnotationsRef with the described node's
    location; annotations as sorted Go maps (schemas keep path before definition)."""
    (tmp_path / "x.rego").write_text(ANNOTATED)
    code, out, _ = run(capsys, "-a", "--format", "json", str(tmp_path))
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == ["manifest", "signatures_config", "namespaces", "annotations", "capabilities"]
    assert doc["manifest"] == {"revision": "", "roots": [""]}
    assert doc["namespaces"] == {"data.test": [f"{tmp_path}/x.rego"]}
    assert doc["capabilities"] == {"features": ["rego_v1"]}

    def expected(kind: str, scope: str, schema_type: str, row: int, path: list[str]) -> dict[str, Any]:
        return {
            "annotations": {
                "authors": [{"name": f"{kind}-author"}],
                "custom": {kind: f"{kind}-custom"},
                "description": "rule-title" if kind == "rule" else f"{kind}-descr",
                "organizations": [f"{kind}-org"],
                "related_resources": [
                    {"ref": f"https://{kind}"},
                    {"description": f"rr-{kind}-note", "ref": f"https://{kind}"},
                ],
                "schemas": [{"path": [{"type": "var", "value": "input"}], "definition": {"type": schema_type}}],
                "scope": scope,
                "title": f"{kind}-title",
            },
            "location": {"file": f"{tmp_path}/x.rego", "row": row, "col": 1},
            "path": [{"type": "var", "value": "data"}] + [{"type": "string", "value": p} for p in path],
        }

    assert doc["annotations"] == [
        expected("pkg", "package", "boolean", 16, ["test"]),
        expected("doc", "document", "integer", 50, ["test", "p"]),
        expected("rule", "rule", "string", 50, ["test", "p"]),
    ]
    raw = out[out.index('"schemas"') :]
    assert raw.index('"path"') < raw.index('"definition"')


def test_exactly_one_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """TestInspectMultiBundleError."""
    code, out, err = run(capsys, str(tmp_path), str(tmp_path))
    assert (code, out) == (1, "")
    assert err == "error: specify exactly one OPA bundle or path\n"


# ---------------------------------------------------------------- more shapes


def test_single_rego_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A .rego file: no manifest; the capabilities it needs (builtins it calls)."""
    path = tmp_path / "p.rego"
    path.write_text('package a["b-c"]\n\nallow if count(input.x) > 0\n')
    code, out, _ = run(capsys, "--format", "json", str(path))
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == ["signatures_config", "namespaces", "capabilities"]
    assert doc["namespaces"] == {'data.a["b-c"]': [str(path)]}
    assert [b["name"] for b in doc["capabilities"]["builtins"]] == ["count", "gt"]
    code, out, _ = run(capsys, str(path))
    assert out.startswith("NAMESPACES:\n┌")
    assert 'data.a["b-c"]' in out


def test_folder_data_files_and_v0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """data.json/data.yaml files give namespaces by folder; other JSON is not data."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.yaml").write_text("a: 1\n")
    (tmp_path / "data.json").write_text("{}")
    (tmp_path / "input.json").write_text("{}")
    (tmp_path / "p.rego").write_text("package p\n\nq[x] { x := 1 }\n")
    code, _, err = run(capsys, str(tmp_path))
    # (as OPA: both v1 rule checks fail, `if` and `contains`)
    assert code == 1 and err.startswith("error: 2 errors occurred:")
    assert "rego_parse_error: `if` keyword is required before rule body" in err
    code, out, _ = run(capsys, "--v0-compatible", "--format", "json", str(tmp_path))
    assert code == 0
    assert json.loads(out)["namespaces"] == {
        "data": [str(tmp_path / "data.json")],
        "data.p": [str(tmp_path / "p.rego")],
        "data.sub": [str(tmp_path / "sub" / "data.yaml")],
    }


def test_missing_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(tmp_path / "nope"))
    assert (code, out) == (1, "")
    assert err == f"error: stat {tmp_path / 'nope'}: no such file or directory\n"


def test_repositories(capsys: pytest.CaptureFixture[str]) -> None:
    """Every test repository: one namespace per package, listing each of its files."""
    for repo in sorted((REPO / "tests" / "repos").iterdir()):
        v0 = ["--v0-compatible"] if repo.name.endswith("_v0") else []
        code, out, err = run(capsys, *v0, "-a", "--format", "json", str(repo))
        assert (code, err) == (0, ""), repo
        doc = json.loads(out)
        expected: dict[str, list[str]] = {}
        for path in sorted(repo.rglob("*.rego")):
            module = parse_module(path.read_text(), str(path), rego_v1=not v0)
            name = "data." + ".".join(str(p.value) for p in module.package.path)
            expected.setdefault(name, []).append(str(path))
        for name, files in expected.items():
            assert doc["namespaces"][name] == files
        code, out, _ = run(capsys, *v0, "-a", str(repo))
        assert code == 0 and "NAMESPACES:" in out


# ---------------------------------------------------------------- OPA as oracle for annotation values


METADATA_CASES = {
    "everything": "# METADATA\n# title: T\n# description: D\n# entrypoint: true\n# organizations: [o1, o2]\n"
    "# related_resources:\n# - https://example.com/x\n# - ref: https://example.com/y\n#   description: why\n"
    "# authors:\n# - Jane Doe <jane@example.com>\n# - name: Joe\n#   email: joe@example.com\n# - solo\n"
    "# custom:\n#   n: 1.5\n#   big: 12345678901234567890\n#   nested: {b: [1, 2, {c: null}], a: true}\n",
    "schemas": "# METADATA\n# schemas:\n# - input.x: {type: string}\n# - data.y: {type: object}\n",
    "document scope": "# METADATA\n# scope: document\n# title: doc\n",
}


def _as_metadata_value(annotation: dict[str, Any]) -> dict[str, Any]:
    """OPA's rego.metadata values write schema paths as lists of names."""
    out = dict(annotation)
    if "schemas" in out:
        out["schemas"] = [
            {**{k: v for k, v in s.items() if k != "path"}, "path": [t["value"] for t in s["path"]]}
            for s in out["schemas"]
        ]
    return out


@pytest.mark.parametrize("name", sorted(METADATA_CASES))
def test_annotation_values_agree_with_opa(name: str) -> None:
    """The annotation pyrego writes has the values OPA's rego.metadata.chain() gives."""
    try:
        oracle = get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    text = "package t\n\n" + METADATA_CASES[name] + "p := rego.metadata.chain()\n"
    result = oracle.evaluate({"t.rego": text}, "x := data.t.p")
    assert not result.is_error, result.error_message
    chain = json.loads(json.dumps(result.bindings[0]["x"], default=float))
    opa_annotations = [entry["annotations"] for entry in chain if "annotations" in entry]
    module = parse_module(text, "t.rego")
    mine = [_as_metadata_value(json.loads(json.dumps(annotation_json(a, "t.rego")))) for a in module.annotations]
    assert mine == opa_annotations


def test_subprocess_and_help(tmp_path: Path) -> None:
    (tmp_path / "p.rego").write_text("package p\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "inspect", "-f", "json", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["namespaces"] == {"data.p": [str(tmp_path / "p.rego")]}
    proc = subprocess.run(
        [sys.executable, "-m", "pyrego", "inspect", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0
    for text in ("--annotations", "--format", "{pretty,json}", "Inspect OPA bundle(s)"):
        assert text in proc.stdout
