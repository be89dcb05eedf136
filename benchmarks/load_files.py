"""Loading a repository file by file against all at once: the time of each, and their ratio.

A generated policy repository of ``--files`` files (500 by default) laid out
as real ones are: helper packages (``lib.*``, each split over two files, with
its tests), service packages (``services.<name>``: a policy and its
``_test.rego`` beside it) and check packages (``checks.<area>``: one file per
check, all adding to the package's ``violation`` set, each with its test),
and a ``main`` package that gathers every check and service. Policies call
the helper functions of other files and packages through imports, so a file
often comes, in path order, before the files defining what it uses.

Two ways to load it, each from an empty compile cache, then one evaluation
(which compiles the whole program):

- ``add_policy`` once per file, in path order (``--order``: or shuffled, or
  helpers first);
- one ``add_policies`` call with every file.

Both must give the same answer (the run stops otherwise). Printed: the
median of ``--repeat`` runs of each (taken in turns), split into the time of
the add calls and of the first evaluation, and the ratio of the two totals.
Times are CPU seconds of the process (``time.process_time``), which other
work on the machine does not stretch as it does wall-clock time.
The goal is a ratio within 1.3x: adding a file only parses it, and the
program is compiled once, at the first evaluation, whichever way it was
loaded.

    python benchmarks/load_files.py [--files 500] [--repeat 5] [--order path|shuffled|deps]
                                    [--check] [--write DIR]

``--check`` also evaluates every ``test_*`` rule (all must be true), and in
OPA too when the oracle is at hand (``tests/opa_oracle.py``); ``--write DIR``
writes the repository there (``pyrego test DIR`` runs its tests).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyrego

AREAS = ["k8s", "aws", "gcp", "azure", "docker", "terraform", "network", "iam", "storage", "logging"]
KINDS = ["Pod", "Deployment", "Bucket", "Instance", "Role", "Service", "Volume", "Firewall"]
FIELDS = ["replicas", "cpu", "memory", "ports", "age_days", "size_gb", "retention_days"]
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]

LIB_FILES: dict[str, str] = {
    "lib/strings/format.rego": """package lib.strings

# tag(t, msg): a message tagged with the check that made it.
tag(t, msg) := sprintf("[%s] %s", [t, msg])

normalize(path) := trim_suffix(lower(path), "/")
""",
    "lib/strings/match.rego": """package lib.strings

tagged(msgs, t) if {
	some m in msgs
	startswith(m, sprintf("[%s]", [t]))
}

has_prefix_any(s, prefixes) if {
	some p in prefixes
	startswith(s, p)
}
""",
    "lib/strings/strings_test.rego": """package lib.strings_test

import data.lib.strings

test_tag if strings.tag("a_001", "x") == "[a_001] x"

test_tagged if strings.tagged({"[a_001] x", "[b] y"}, "a_001")

test_prefix if strings.has_prefix_any("/api/v1/x", ["/other", "/api/"])

test_normalize if strings.normalize("/API/X/") == "/api/x"
""",
    "lib/objects/get.rego": """package lib.objects

get_number(obj, key, fallback) := v if {
	v := object.get(obj, key, fallback)
	is_number(v)
} else := fallback
""",
    "lib/objects/paths.rego": """package lib.objects

get_path(obj, path, fallback) := object.get(obj, path, fallback)

has_key(obj, key) if _ = obj[key]
""",
    "lib/objects/objects_test.rego": """package lib.objects_test

import data.lib.objects

test_number if objects.get_number({"a": 2}, "a", 0) == 2

test_not_number if objects.get_number({"a": "2"}, "a", 0) == 0

test_path if objects.get_path({"a": {"b": 1}}, ["a", "b"], 0) == 1

test_has_key if objects.has_key({"a": null}, "a")
""",
    "lib/resources/select.rego": """package lib.resources

import data.lib.objects

of_kind(doc, kind) := [r | some r in objects.get_path(doc, ["resources"], []); r.kind == kind]
""",
    "lib/resources/names.rego": """package lib.resources

import data.lib.objects

names(rs) := {r.name | some r in rs}

labelled(r, label) if objects.has_key(object.get(r, "labels", {}), label)
""",
    "lib/resources/resources_test.rego": """package lib.resources_test

import data.lib.resources

test_of_kind if count(resources.of_kind({"resources": [{"kind": "Pod"}, {"kind": "Role"}]}, "Pod")) == 1

test_names if resources.names([{"name": "a"}, {"name": "b"}]) == {"a", "b"}

test_labelled if resources.labelled({"labels": {"team": "x"}}, "team")
""",
    "lib/authz/roles.rego": """package lib.authz

has_role(user, role) if role in object.get(user, "roles", [])

is_admin(user) if has_role(user, "admin")
""",
    "lib/authz/session.rego": """package lib.authz

is_authenticated(user) if user.authenticated == true

in_tenant(user, tenant) if user.tenant == tenant
""",
    "lib/authz/authz_test.rego": """package lib.authz_test

import data.lib.authz

test_role if authz.has_role({"roles": ["a"]}, "a")

test_admin if authz.is_admin({"roles": ["admin"]})

test_authenticated if authz.is_authenticated({"authenticated": true})

test_tenant if authz.in_tenant({"tenant": "t1"}, "t1")
""",
}

MAIN_FILES: dict[str, str] = {
    "main/decision.rego": """package main

import data.checks
import data.lib.authz
import data.services

violations contains msg if {
	some area
	some msg in checks[area].violation
}

default service_allows := false

service_allows if services[input.service].allow

default admin := false

admin if authz.is_admin(input.user)

decision := {"allow": service_allows, "violations": count(violations), "admin": admin} if input.service

default decision := {"allow": false, "violations": 0, "admin": false}
""",
    "main/decision_test.rego": """package main_test

import data.main

test_default if main.decision == {"allow": false, "violations": 0, "admin": false} with input as {}

test_admin if main.decision.admin with input as {"service": "svc000", "user": {"roles": ["admin"]}}
""",
}


def _service(rng: random.Random, name: str) -> tuple[str, str]:
    methods = sorted(rng.sample(METHODS, rng.randint(1, 3)))
    limit = rng.choice([256, 1024, 4096])
    policy = f"""package services.{name}

import data.lib.authz
import data.lib.strings

default allow := false

allowed_methods := {json.dumps(methods)}

allow if authz.has_role(input.user, "{name}-admin")

allow if {{
	input.method in allowed_methods
	strings.has_prefix_any(input.path, ["/{name}/", "/api/v1/{name}/"])
	authz.in_tenant(input.user, input.tenant)
	count(deny) == 0
}}

deny contains "unauthenticated" if not authz.is_authenticated(input.user)

deny contains msg if {{
	count(object.get(input, "body", "")) > {limit}
	msg := sprintf("body over {limit} bytes: %d", [count(input.body)])
}}

route := strings.normalize(input.path)
"""
    user = {"authenticated": True, "tenant": "t1", "roles": []}
    ok = {"user": user, "method": methods[0], "path": f"/{name}/items", "tenant": "t1"}
    test = f"""package services.{name}_test

import data.services.{name}

test_admin if {name}.allow with input as {{"user": {{"roles": ["{name}-admin"]}}}}

test_member if {name}.allow with input as {json.dumps(ok)}

test_other_tenant if not {name}.allow with input as {json.dumps({**ok, "tenant": "t2"})}

test_unauthenticated if "unauthenticated" in {name}.deny with input as {{"user": {{}}}}

test_large_body if count({name}.deny) == 1 with input as {json.dumps({**ok, "body": "x" * (limit + 1)})}

test_route if {name}.route == "/{name}/items" with input as {{"path": "/{name.upper()}/Items/"}}
"""
    return policy, test


def _check(rng: random.Random, area: str, i: int) -> tuple[str, str]:
    tag = f"{area}_{i:03d}"
    kind, field, limit = rng.choice(KINDS), rng.choice(FIELDS), rng.randint(0, 50)
    label = rng.choice(["owner", "team", "cost-center"])
    policy = f"""package checks.{area}

import data.lib.objects
import data.lib.resources
import data.lib.strings

violation contains msg if {{
	some r in resources.of_kind(input, "{kind}")
	v := objects.get_number(r, "{field}", 0)
	v > {limit}
	msg := strings.tag("{tag}", sprintf("%s: {field} is %v, above {limit}", [r.name, v]))
}}

violation contains msg if {{
	some r in resources.of_kind(input, "{kind}")
	objects.get_number(r, "{field}", 0) > {limit // 2}
	not resources.labelled(r, "{label}")
	msg := strings.tag("{tag}", sprintf("%s: needs a {label} label", [r.name]))
}}
"""
    over = {"resources": [{"kind": kind, "name": "r1", field: limit + 1, "labels": {label: "x"}}]}
    under = {"resources": [{"kind": kind, "name": "r1", field: limit, "labels": {label: "x"}}]}
    test = f"""package checks.{area}_test

import data.checks.{area}
import data.lib.strings

test_{tag}_flags if strings.tagged({area}.violation, "{tag}") with input as {json.dumps(over)}

test_{tag}_passes if not strings.tagged({area}.violation, "{tag}") with input as {json.dumps(under)}
"""
    return policy, test


def repository(files: int, seed: int = 0) -> dict[str, str]:
    """A repository of exactly ``files`` files (at least 30), path -> text, in path order."""
    if files < 30:
        raise ValueError("the smallest repository has 30 files")
    rng = random.Random(seed)
    out = {**LIB_FILES, **MAIN_FILES}
    rest = files - len(out)
    services = rest * 2 // 5 // 2
    for n in range(services):
        name = f"svc{n:03d}"
        out[f"services/{name}/policy.rego"], out[f"services/{name}/policy_test.rego"] = _service(rng, name)
    i = 0
    while len(out) < files:
        area = AREAS[i % len(AREAS)]
        policy, test = _check(rng, area, i)
        out[f"checks/{area}/check_{i:03d}.rego"] = policy
        if len(out) < files:
            out[f"checks/{area}/check_{i:03d}_test.rego"] = test
        i += 1
    return dict(sorted(out.items()))


def ordered(repo: dict[str, str], order: str) -> list[str]:
    """The paths of ``repo`` in the order add_policy takes them."""
    paths = list(repo)
    if order == "shuffled":
        random.Random(1).shuffle(paths)
    elif order == "deps":  # helpers first, main last, tests after policies: each file after what it uses
        rank = {"lib": 0, "services": 1, "checks": 1, "main": 2}
        paths.sort(key=lambda p: (rank[p.split("/")[0]], p.endswith("_test.rego"), p))
    return paths


INPUT = {
    "service": "svc001",
    "user": {"authenticated": True, "tenant": "t1", "roles": ["admin"]},
    "method": "GET",
    "path": "/svc001/items",
    "tenant": "t1",
    "resources": [{"kind": k, "name": f"{k.lower()}-{n}", f: n * 7} for n, (k, f) in enumerate(zip(KINDS * 2, FIELDS * 3))],
}
QUERY = "data.main.decision"


def one_by_one(repo: dict[str, str], paths: list[str]) -> tuple[Any, float, float]:
    """(answer, seconds adding, seconds of the first evaluation) adding one file at a time."""
    pyrego.clear_compile_cache()
    gc.collect()  # the garbage of the run before is not collected during this one
    engine = pyrego.Engine()
    engine.set_input(INPUT)
    start = time.process_time()
    for path in paths:
        engine.add_policy(path, repo[path])
    added = time.process_time()
    answer = engine.eval_rule(QUERY)
    return answer, added - start, time.process_time() - added


def all_at_once(repo: dict[str, str], paths: list[str]) -> tuple[Any, float, float]:
    """(answer, seconds adding, seconds of the first evaluation) with one add_policies call."""
    pyrego.clear_compile_cache()
    gc.collect()  # the garbage of the run before is not collected during this one
    engine = pyrego.Engine()
    engine.set_input(INPUT)
    start = time.process_time()
    engine.add_policies({p: repo[p] for p in paths})
    added = time.process_time()
    answer = engine.eval_rule(QUERY)
    return answer, added - start, time.process_time() - added


def check(repo: dict[str, str]) -> int:
    """Evaluate every test rule in pyrego (and OPA when it can be had); the number that are not true."""
    rules = sorted({f"data.{m.group(1)}.{t}" for text in repo.values() if (m := re.search(r"^package ([\w.]+)", text, re.M))
                    for t in re.findall(r"^(test_\w+) if", text, re.M)})
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    engine.add_policies(repo)
    failed = [r for r in rules if engine.eval_rule(r) is not True]
    print(f"pyrego: {len(rules) - len(failed)} of {len(rules)} test rules true" + (f"; not: {failed[:5]}" if failed else ""))
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from opa_oracle import OracleUnavailable, get_oracle

        oracle = get_oracle()
    except (ImportError, OracleUnavailable) as exc:
        print(f"OPA: not checked ({exc})")
        return len(failed)
    entries = ", ".join(f"{json.dumps(r)}: {r}" for r in rules)
    res = oracle.evaluate(repo, f"x := {{{entries}}}")
    got = res.bindings[0]["x"] if res.bindings else {}
    opa_failed = [r for r in rules if got.get(r) is not True]
    print(f"OPA: {len(rules) - len(opa_failed)} of {len(rules)} test rules true" + (f" ({res.error_message})" if res.is_error else ""))
    want = oracle.evaluate(repo, f"x := {QUERY}", input=INPUT)
    ours = engine.eval_rule(QUERY, input=INPUT)
    same = bool(want.bindings) and json.loads(json.dumps(want.bindings[0]["x"], default=float)) == ours
    print(f"OPA's {QUERY}: {'the same' if same else 'DIFFERENT: ' + str(want.bindings or want.error_message)}")
    return len(failed) + len(opa_failed) + (not same)


def _median(runs: list[tuple[Any, float, float]]) -> tuple[float, float, float]:
    return (statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs), statistics.median(r[1] + r[2] for r in runs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--files", type=int, default=500, help="files in the repository (default 500)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each loading, median taken (default 5)")
    ap.add_argument("--order", choices=["path", "shuffled", "deps"], default="path", help="add_policy order (default: path)")
    ap.add_argument("--check", action="store_true", help="evaluate every test rule first, in pyrego and OPA")
    ap.add_argument("--write", type=Path, metavar="DIR", help="write the repository to DIR and stop")
    ns = ap.parse_args(argv)

    repo = repository(ns.files)
    lines = sum(t.count("\n") for t in repo.values())
    packages = {m.group(1) for t in repo.values() if (m := re.search(r"^package ([\w.]+)", t, re.M))}
    if ns.write is not None:
        for path, text in repo.items():
            (ns.write / path).parent.mkdir(parents=True, exist_ok=True)
            (ns.write / path).write_text(text, encoding="utf-8")
        print(f"wrote {len(repo)} files to {ns.write}")
        return 0
    print(f"{len(repo)} files, {len(packages)} packages, {lines} lines; add_policy order: {ns.order}")
    if ns.check and check(repo):
        return 1
    paths = ordered(repo, ns.order)
    runs: dict[str, list[tuple[Any, float, float]]] = {"one by one": [], "at once": []}
    ways: dict[str, Callable[[dict[str, str], list[str]], tuple[Any, float, float]]] = {"one by one": one_by_one, "at once": all_at_once}
    for i in range(ns.repeat):
        for name in (list(ways) if i % 2 == 0 else list(reversed(ways))):
            try:
                runs[name].append(ways[name](repo, paths))
            except pyrego.RegoError as err:
                print(f"{name}: {err.code}: {' '.join(str(err).split())[:300]}")
                return 1
    answers = {json.dumps(r[0], sort_keys=True, default=str) for rs in runs.values() for r in rs}
    if len(answers) != 1:
        print(f"the two loadings disagree: {sorted(answers)}")
        return 1
    figures = {name: _median(rs) for name, rs in runs.items()}
    labels = {"one by one": f"add_policy x{len(repo)} + 1 evaluation", "at once": "add_policies x1 + 1 evaluation"}
    for name, (adding, first, total) in figures.items():
        print(f"{labels[name]:36} {total:7.3f} s CPU  (adding {adding:6.3f} s, first evaluation {first:6.3f} s; median of {ns.repeat})")
    ratio = figures["one by one"][2] / figures["at once"][2]
    print(f"ratio: {ratio:.2f}x (goal: within 1.3x)  answer: {next(iter(answers))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
