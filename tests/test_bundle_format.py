"""Bundles read and written in OPA's format (``v1/bundle/bundle.go``, the
management-bundles documentation): archive members and their paths, the
manifest's JSON, data at folder paths, roots checks and OPA's error texts,
corrupt archives; and bundles laid out by hand as OPA writes them evaluate
as OPA evaluates the same modules and data (the oracle has no bundle
reader: it is given the modules and the data)."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from opa_oracle import OracleUnavailable, get_oracle
from pyrego.bundle.activate import plan_activation
from pyrego.bundle.model import Bundle, BundleError, Manifest, root_paths_contain, root_paths_overlap
from pyrego.bundle.reader import read_bundle, read_bundle_bytes
from pyrego.bundle.writer import BuildOptions, build_bundle, write_bundle
from pyrego.engine import Engine
from pyrego.plugins.bundle import build_engine


def tar_gz(files: list[tuple[str, bytes | str]]) -> bytes:
    """An archive as OPA's TarGzWriter writes one: regular files, names as given."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb") as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for name, content in files:
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o600
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def members(path: Path) -> list[tuple[str, bytes]]:
    with tarfile.open(path, "r:gz") as tar:
        out = []
        for m in tar:
            assert m.isreg()
            fh = tar.extractfile(m)
            assert fh is not None
            out.append((m.name, fh.read()))
        return out


POLICY = "package authz\n\nallow if {\n\tinput.user in data.authz.users\n}\n"
LIB = "package lib.util\n\ndouble(x) := x * 2\n"


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


# ---------------------------------------------------------------- building


def test_built_archive_layout_member_by_member(tmp_path: Path) -> None:
    src = write(tmp_path / "src", {"authz/policy.rego": POLICY, "authz/users/data.json": '{"x": ["alice"]}', "top.json": '{"b": 2, "a": 1}'})
    out = tmp_path / "bundle.tar.gz"
    b = build_bundle([str(src)], BuildOptions(revision="r7"))
    write_bundle(b, str(out))
    got = members(out)
    names = [n for n, _ in got]
    # OPA's order: data.json, the modules at "/" + the path read, then the manifest.
    assert names == ["/data.json", "/" + str(src / "authz/policy.rego").lstrip("/"), "/.manifest"]
    data = dict(got)
    # Folder data lands at its folder path below the loaded path; keys sorted, compact JSON.
    assert data["/data.json"] == b'{"a":1,"authz":{"users":{"x":["alice"]}},"b":2}'
    assert json.loads(data["/.manifest"]) == {"revision": "r7", "roots": [""], "rego_version": 1}
    assert data["/.manifest"] == b'{"revision":"r7","roots":[""],"rego_version":1}'  # Go struct field order
    # Modules are formatted as opa fmt formats them (opa build does).
    assert data[names[1]] == b"package authz\n\nallow if {\n\tinput.user in data.authz.users\n}\n"
    with tarfile.open(out, "r:gz") as tar:
        assert all(m.mode == 0o600 and m.type == tarfile.REGTYPE for m in tar)


def test_build_read_round_trip_bundle_mode(tmp_path: Path) -> None:
    src = write(
        tmp_path / "b",
        {
            ".manifest": json.dumps({"revision": "abc", "roots": ["authz", "lib"], "metadata": {"z": 1, "a": {"y": 2, "b": 3}}}),
            "authz/policy.rego": POLICY,
            "authz/data.yaml": "users:\n  - alice\n  - bob\n",
            "lib/util.rego": LIB,
        },
    )
    out = tmp_path / "out.tar.gz"
    write_bundle(build_bundle([str(src)], BuildOptions(bundle_mode=True)), str(out))
    manifest = dict(members(out))["/.manifest"]
    assert manifest == b'{"revision":"abc","roots":["authz","lib"],"rego_version":1,"metadata":{"a":{"b":3,"y":2},"z":1}}'
    back = read_bundle(str(out))
    assert back.revision == "abc" and back.roots == ["authz", "lib"]
    assert back.data == {"authz": {"users": ["alice", "bob"]}}
    assert sorted(back.modules) == sorted("/" + str(src / p).lstrip("/") for p in ("authz/policy.rego", "lib/util.rego"))
    engine = build_engine(plan_activation({"b": back}))
    engine.set_input({"user": "bob"})
    assert engine.eval_rule("data.authz.allow") is True


def test_build_revision_and_empty_data(tmp_path: Path) -> None:
    src = write(tmp_path / "p", {"x.rego": "package x\n\np := 1\n"})
    out = tmp_path / "o.tar.gz"
    write_bundle(build_bundle([str(src / "x.rego")], BuildOptions(revision="")), str(out))
    got = dict(members(out))
    assert got["/data.json"] == b"{}"
    assert json.loads(got["/.manifest"])["roots"] == [""]


def test_v0_build_records_rego_version_0(tmp_path: Path) -> None:
    src = write(tmp_path / "p", {"x.rego": "package x\n\np[y] { y := 1 }\n"})
    out = tmp_path / "o.tar.gz"
    write_bundle(build_bundle([str(src)], BuildOptions(rego_v1=False)), str(out))
    assert json.loads(dict(members(out))["/.manifest"])["rego_version"] == 0
    back = read_bundle(str(out))  # read with the manifest's version, whatever the default
    engine = build_engine(plan_activation({"o": back}))
    assert engine.eval_rule("data.x.p") == {1}


# ---------------------------------------------------------------- reading OPA's layout


CASES: list[tuple[str, list[tuple[str, str]], str, Any]] = [
    (
        "nested data and two packages",
        [
            ("/data.json", '{"org": {"name": "acme"}}'),
            ("/roles/data.json", '{"admin": ["alice"], "dev": ["bob", "carol"]}'),
            ("/roles/grants/data.yaml", "admin: [read, write]\ndev: [read]\n"),
            ("/authz/policy.rego", "package authz\n\nimport rego.v1\n\nallow if some r in data.roles[input.role]\n\nperms contains p if some p in data.roles.grants[input.role]\n"),
            ("/.manifest", '{"revision": "r1"}'),
        ],
        "x := {\"allow\": data.authz.allow, \"perms\": data.authz.perms, \"org\": data.org.name}",
        {"role": "dev"},
    ),
    (
        "roots and metadata, no leading slash",
        [
            ("app/rules.rego", "package app\n\ndeny contains msg if {\n\tsome u in data.app.users\n\tnot u.active\n\tmsg := sprintf(\"%s inactive\", [u.name])\n}\n"),
            ("app/users/data.json", "[{\"name\": \"a\", \"active\": true}, {\"name\": \"b\", \"active\": false}]"),
            (".manifest", '{"revision": "2", "roots": ["app"], "metadata": {"k": "v"}}'),
        ],
        "x := data.app.deny",
        None,
    ),
    (
        "rego v0 bundle",
        [
            ("/v0/p.rego", "package v0\n\nnames[n] { n := input.names[_] }\nok { count(names) > 1 }\n"),
            ("/.manifest", '{"rego_version": 0, "roots": ["v0"]}'),
        ],
        "x := [data.v0.names, data.v0.ok]",
        {"names": ["p", "q"]},
    ),
]


@pytest.mark.parametrize("title,files,query,input_doc", CASES, ids=[c[0] for c in CASES])
def test_hand_written_bundles_evaluate_as_opa(title: str, files: list[tuple[str, str]], query: str, input_doc: Any) -> None:
    b = read_bundle_bytes(tar_gz([(n, t) for n, t in files]))
    plan = plan_activation({"b": b})
    engine = build_engine(plan)
    if input_doc is not None:
        engine.set_input(input_doc)
    ours = engine.eval_query(query)
    try:
        oracle = get_oracle()
    except OracleUnavailable as exc:
        pytest.skip(f"OPA oracle unavailable: {exc}")
    from pyrego.formatter import format_module

    # The oracle reads Rego v1 only: a v0 module is given to it as opa fmt --v0-v1 rewrites it.
    modules = {
        f"b/{path.lstrip('/')}": text if b.module_rego_v1[path] else format_module(text, path, rego_v1=False, v0_to_v1=True)
        for path, text in b.modules.items()
    }
    assert sorted(modules) == sorted(plan.policies)
    theirs = oracle.evaluate(modules, query, input=input_doc, data=plan.data)
    assert not theirs.is_error, theirs.error_message
    got = json.loads(json.dumps([r["bindings"] if "bindings" in r else r for r in ours["result"]], default=str))
    want = json.loads(json.dumps(theirs.bindings, default=str))
    assert [r.get("x") for r in got] == [r.get("x") for r in want]
    assert got, "the query should be defined"


def test_folder_and_archive_read_the_same(tmp_path: Path) -> None:
    files = {"a/b/data.json": '{"v": 1}', "a/p.rego": "package a\n\nq := data.a.b.v + 1\n", ".manifest": '{"roots": ["a"], "revision": "x"}'}
    folder = write(tmp_path / "bundle", files)
    archive = read_bundle_bytes(tar_gz([("/" + n, t) for n, t in files.items()]))
    from_folder = read_bundle(str(folder))
    assert from_folder.data == archive.data == {"a": {"b": {"v": 1}}}
    assert from_folder.manifest == archive.manifest
    assert list(archive.modules) == ["/a/p.rego"]
    assert list(from_folder.modules) == [str(folder / "a/p.rego")]


def test_other_files_are_ignored_and_data_yml_read() -> None:
    b = read_bundle_bytes(tar_gz([("/README.md", "hi"), ("/x/data.yml", "k: 1\n"), ("/x/other.json", '{"no": 1}')]))
    assert b.data == {"x": {"k": 1}} and b.modules == {}


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "files,message",
    [
        (
            [("/.manifest", '{"roots": ["a"]}'), ("/b/data.json", "{}")],
            "manifest roots [a] do not permit data at path '/b' (hint: check bundle directory structure)",
        ),
        (
            [("/.manifest", '{"roots": ["a"]}'), ("/x.rego", "package b\n\np := 1\n")],
            "manifest roots [a] do not permit 'package b' in module '/x.rego'",
        ),
        ([("/.manifest", '{"roots": ["a", "a/b"]}')], "manifest has overlapped roots: 'a' and 'a/b'"),
        ([("/data.json", "[1]")], "bundle load failed on /data.json: root value must be object"),
        ([("/a/data.json", '{"x": 1}'), ("/data.json", '{"a": {"x": 2}}')], "failed to insert data file from path"),
        ([("/.manifest", '{"revision": 3}')], "bundle load failed on manifest decode: json: cannot unmarshal number into Go struct field Manifest.revision of type string"),
        ([("/.manifest", "{not json")], "bundle load failed on manifest decode"),
        ([("/data.json", "{bad")], "bundle load failed on /data.json"),
        ([("/x.rego", "package x\n"), ("/x.rego", "package y\n")], "duplicate file '/x.rego'"),
    ],
)
def test_bad_bundles_give_opas_errors(files: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(BundleError) as info:
        read_bundle_bytes(tar_gz(files))
    assert message in str(info.value)


_MANIFEST = "bundle load failed on manifest decode: json: cannot unmarshal "


@pytest.mark.parametrize(
    "manifest,message",
    [
        # Go's decoder names the JSON value's kind and the field's Go type,
        # reports the first wrong field in the text's order, and matches
        # field names without regard to case.
        ('{"revision": 1.5}', "number into Go struct field Manifest.revision of type string"),
        ('{"Revision": true}', "bool into Go struct field Manifest.revision of type string"),
        ('{"roots": "a"}', "string into Go struct field Manifest.roots of type []string"),
        ('{"roots": ["a", 1]}', "number into Go struct field Manifest.roots of type string"),
        ('{"roots": [{}], "revision": 2}', "object into Go struct field Manifest.roots of type string"),
        ('{"revision": 2, "roots": [{}]}', "number into Go struct field Manifest.revision of type string"),
        ('{"rego_version": 1.5}', "number 1.5 into Go struct field Manifest.rego_version of type int"),
        ('{"rego_version": 9223372036854775808}', "number 9223372036854775808 into Go struct field Manifest.rego_version of type int"),
        ('{"rego_version": "1"}', "string into Go struct field Manifest.rego_version of type int"),
        ('{"file_rego_versions": {"/x.rego": "0"}}', "string into Go struct field Manifest.file_rego_versions of type int"),
        ('{"file_rego_versions": []}', "array into Go struct field Manifest.file_rego_versions of type map[string]int"),
        ('{"metadata": [1]}', "array into Go struct field Manifest.metadata of type map[string]interface {}"),
        ('{"wasm": {}}', "object into Go struct field Manifest.wasm of type []bundle.WasmResolver"),
        ('{"wasm": ["m"]}', "string into Go struct field Manifest.wasm of type bundle.WasmResolver"),
        ("[]", "array into Go value of type bundle.Manifest"),
        ('"x"', "string into Go value of type bundle.Manifest"),
    ],
)
def test_manifest_fields_of_the_wrong_type_give_gos_decode_error(manifest: str, message: str) -> None:
    with pytest.raises(BundleError) as info:
        read_bundle_bytes(tar_gz([("/.manifest", manifest)]))
    assert str(info.value) == _MANIFEST + message


def test_manifest_nulls_and_field_names_in_any_case_read_as_go_reads_them() -> None:
    assert read_bundle_bytes(tar_gz([("/.manifest", "null")])).manifest.is_empty()
    b = read_bundle_bytes(tar_gz([("/.manifest", '{"REVISION": "r", "Roots": [null], "revision": null, "file_rego_versions": {"/x.rego": null}}')]))
    assert (b.manifest.revision, b.manifest.roots, b.manifest.file_rego_versions) == ("r", [""], {"/x.rego": 0})


def test_data_under_roots_is_allowed_and_objects_on_the_way_too() -> None:
    b = read_bundle_bytes(tar_gz([("/.manifest", '{"roots": ["a/b", "c"]}'), ("/a/b/data.json", '{"x": 1}'), ("/c/data.json", "[1]")]))
    assert b.data == {"a": {"b": {"x": 1}}, "c": [1]}


def test_module_parse_error_is_a_rego_error() -> None:
    from pyrego.errors import RegoParseError

    with pytest.raises(RegoParseError) as info:
        read_bundle_bytes(tar_gz([("/x.rego", "package x\n\np := \n")]))
    assert info.value.location is not None and info.value.location.file == "/x.rego"


def test_corrupt_and_truncated_archives(tmp_path: Path) -> None:
    good = tar_gz([("/x.rego", "package x\n\n" + "".join(f"p{i} := {i}\n" for i in range(300))), ("/data.json", json.dumps({"k": list(range(2000))}))])
    with pytest.raises(BundleError, match=r"^bundle read failed: archive read failed: gzip: invalid header$"):
        read_bundle_bytes(b"this is no archive")
    for cut in (10, len(good) // 2, len(good) - 9):
        with pytest.raises(BundleError, match="bundle read failed"):
            read_bundle_bytes(good[:cut])
    garbage = gzip.compress(b"\x00garbage that is no tar header" * 30)
    with pytest.raises(BundleError, match="bundle read failed"):
        read_bundle_bytes(garbage)
    missing = tmp_path / "none.tar.gz"
    with pytest.raises(BundleError, match="no such file or directory"):
        read_bundle(str(missing))


def test_overlapping_roots_between_bundles_are_refused() -> None:
    a = read_bundle_bytes(tar_gz([("/.manifest", '{"roots": ["x"]}')]))
    b = read_bundle_bytes(tar_gz([("/.manifest", '{"roots": ["x/y"]}')]))
    c = read_bundle_bytes(tar_gz([("/.manifest", '{"roots": ["z"]}')]))
    with pytest.raises(BundleError, match=r"^detected overlapping roots in bundle manifest with: \[a b\]$"):
        plan_activation({"a": a, "b": b})
    plan = plan_activation({"a": a, "c": c})
    assert plan.roots == {"a": ["x"], "c": ["z"]}
    rootless = read_bundle_bytes(tar_gz([("/d/data.json", "{}")]))  # roots [""] own everything
    with pytest.raises(BundleError, match="detected overlapping roots"):
        plan_activation({"c": c, "all": rootless})


def test_two_bundles_merge_modules_and_data_under_their_names() -> None:
    a = read_bundle_bytes(tar_gz([("/.manifest", '{"roots": ["a"]}'), ("/a/p.rego", "package a\n\np := data.a.v\n"), ("/a/data.json", '{"v": 1}')]))
    b = read_bundle_bytes(tar_gz([("/.manifest", '{"roots": ["b"]}'), ("/b/p.rego", "package b\n\nq := data.a.p + 1\n")]))
    plan = plan_activation({"one": a, "two": b})
    assert sorted(plan.policies) == ["one/a/p.rego", "two/b/p.rego"]  # OPA names a bundle's modules name/path
    engine = build_engine(plan)
    assert engine.eval_rule("data.b.q") == 2


def test_root_path_helpers_match_opa() -> None:
    assert root_paths_overlap("a", "a/b") and root_paths_overlap("", "x") and not root_paths_overlap("a", "ab")
    assert root_paths_contain(["a/b"], "a/b/c") and not root_paths_contain(["a/b"], "a")
    assert Manifest().is_empty() and not Manifest(revision="x").is_empty()
    assert Bundle().roots == [""]


def test_non_compiling_bundle_raises_before_an_engine_exists() -> None:
    bad = read_bundle_bytes(tar_gz([("/p.rego", "package p\n\nx := y\n")]))
    from pyrego.errors import RegoError

    with pytest.raises(RegoError):
        build_engine(plan_activation({"bad": bad}))
    assert isinstance(Engine(), Engine)


def test_file_rego_versions_globs_cross_folders() -> None:
    """``file_rego_versions`` patterns are gobwas globs without separators: ``*`` crosses ``/``."""
    b = read_bundle_bytes(
        tar_gz(
            [
                ("/.manifest", '{"rego_version": 1, "file_rego_versions": {"/legacy/*.rego": 0}}'),
                ("/legacy/deep/old.rego", "package legacy\n\nnames[n] { n := [\"a\"][_] }\n"),
                ("/new.rego", "package new\n\nok if data.legacy.names[\"a\"]\n"),
            ]
        )
    )
    assert b.module_rego_v1 == {"/legacy/deep/old.rego": False, "/new.rego": True}
    engine = build_engine(plan_activation({"b": b}))
    assert engine.eval_rule("data.new.ok") is True
    with pytest.raises(BundleError, match="unknown bundle rego-version 7"):
        read_bundle_bytes(tar_gz([("/.manifest", '{"rego_version": 7}'), ("/x.rego", "package x\n")]))
