"""Material shared by tests/test_distributed_spark.py and tests/test_distributed_dask.py.

Policies: the seed benchmark policies (each in its own package under
``data.bench``, so one payload holds them all) and the inventory policies of
``benchmarks/inventory``; inputs: the seed inputs, generated inventory
documents, and records that fail (not JSON, null, an owner given two ways,
a conflict). :func:`expected` is what one process's ``Engine.eval_rule``
gives for a record, in the shape the cluster front ends write.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyrego
from pyrego.bench.inventory import documents
from pyrego.distributed import PolicyPayload
from pyrego.runtime.convert import loads
from shared_material import SEED, need_shared

REPO_ROOT = Path(__file__).resolve().parent.parent
INVENTORY_DIR = REPO_ROOT / "benchmarks" / "inventory"

#: The seed policy read the clock (time.now_ns): its value may differ between two processes.
CLOCK_POLICIES = {"time_based"}

#: A policy of values whose JSON form is easy to get wrong, and of records that fail.
SPECIAL = """package special

import rego.v1

values := {
	"set": {n | some n in input.xs},
	"big": 12345678901234567890 * 1000,
	"ratio": input.a / 3,
	"exact": input.a * 0.1,
	"keys": {[1, 2]: "array key", 3: "number key"},
	"text": "<a & b>\\u2028",
	"empty": set(),
} if input.xs

conflict := input.a if true

conflict := input.b if true

slow if {
	some i in numbers.range(1, input.n)
	some j in numbers.range(1, input.n)
	i * j < 0
}

allow if input.a > 1
"""


def seed_payload() -> tuple[PolicyPayload, list[Any]]:
    """The seed policies (but the clock's) as packages ``data.bench.<name>``, and the seed inputs."""
    root = need_shared(*SEED)
    texts: dict[str, str] = {}
    for path in sorted((root / "policies").glob("*_policy.rego")):
        name = path.name.removesuffix("_policy.rego")
        if name in CLOCK_POLICIES:
            continue
        texts[path.name] = path.read_text().replace("package bench", f"package bench.{name}", 1)
    inputs = [
        json.loads(p.read_text())
        for p in sorted((root / "inputs").glob("*.json"))
        if not p.name.startswith("time_based")
    ]
    return PolicyPayload.from_policies(texts), inputs


def inventory_payload() -> PolicyPayload:
    """The inventory policies."""
    return PolicyPayload.from_files([INVENTORY_DIR])


def special_payload() -> PolicyPayload:
    return PolicyPayload.from_policies({"special.rego": SPECIAL})


def inventory_docs(n: int = 300, seed: int = 11) -> list[Any]:
    """``n`` generated inventory documents, and two whose owner is given two different ways."""
    docs = list(documents(n, seed))
    for i in (3, 7):
        d = json.loads(json.dumps(documents(1, seed=i).__next__()))
        d.setdefault("metadata", {}).setdefault("labels", {})["owner"] = "a@example.com"
        d["metadata"]["annotations"] = {"owner": "b@example.com"}
        d["kind"] = "Pod"
        d.setdefault("spec", {"containers": []})
        docs.append(d)
    return docs


#: JSON text records that fail before evaluation: (text, error code).
BAD_TEXTS = [("not json", "invalid_input"), ('{"a": ', "invalid_input"), ("[1, 2", "invalid_input")]

Outcome = tuple[Any, str | None, str | None]


def expected(engine: Any, path: str, doc: Any, output: str = "json") -> Outcome:
    """``(decision, error code, error message)`` of one record as ``engine.eval_rule`` gives it:
    the decision as plain JSON (``pyrego.json_ready``), or a boolean."""
    try:
        value = engine.eval_rule(path, input=doc)
    except pyrego.RegoError as err:
        return None, err.code, err.message
    if value is pyrego.UNDEFINED:
        return None, None, None
    if output == "boolean":
        if type(value) is not bool:
            return None, "decision_not_boolean", None
        return value, None, None
    return pyrego.json_ready(value), None, None


def expected_text(engine: Any, path: str, text: str | None, output: str = "json") -> Outcome:
    """:func:`expected` for a record given as JSON text (read as OPA reads JSON)."""
    if text is None:
        return None, "invalid_input", "the input is null"
    try:
        doc = loads(text, what="input JSON")
    except pyrego.RegoError as err:
        return None, "invalid_input", err.message
    return expected(engine, path, doc, output)


def decoded(decision: Any, output: str = "json") -> Any:
    """A decision as written (JSON text, or a boolean), as plain JSON (json_ready's form)."""
    if decision is None or output == "boolean":
        return decision
    return pyrego.json_ready(loads(decision))


def check(outcome: Outcome, want: Outcome, output: str = "json", where: str = "") -> None:
    """Assert a record's decision and error are what one process gives (a message is
    compared when ``want`` has one)."""
    decision, code, message = outcome
    want_decision, want_code, want_message = want
    assert code == want_code, f"{where}: error {code} {message!r}, wanted {want_code} {want_message!r}"
    if want_message is not None:
        assert message == want_message, where
    assert decoded(decision, output) == want_decision, where
