"""pyrego.distributed.spark: decisions as a DataFrame column, on a real Spark (``local[2]``).

One SparkSession for the module (its start-up is the slow part). Java must be
on the machine: without it these tests fail, saying so, unless
``PYREGO_NO_SPARK=1`` is set (then they are skipped). Every row is compared
with what ``Engine.eval_rule`` gives in this process for the same input.
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import shutil
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from distributed_cases import (
    BAD_TEXTS,
    check,
    expected,
    expected_text,
    inventory_docs,
    inventory_payload,
    seed_payload,
    special_payload,
)

SRC = str(Path(__file__).resolve().parent.parent / "src")


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and Path(home, "bin", "java").exists():
        return str(Path(home, "bin", "java"))
    return shutil.which("java")


@pytest.fixture(scope="module")
def spark() -> Any:
    if os.environ.get("PYREGO_NO_SPARK") == "1":
        pytest.skip("PYREGO_NO_SPARK=1: the Spark tests are not run")
    if _java() is None:
        pytest.fail(
            "Spark needs Java and none was found (no JAVA_HOME, no java on PATH): install a JRE "
            "(Debian: apt-get install openjdk-17-jre-headless), or set PYREGO_NO_SPARK=1 to skip these tests"
        )
    try:
        import pyspark  # noqa: F401
    except ImportError as exc:
        pytest.fail(
            f"pyspark is not installed (it is in the dev extra: pip install -e '.[dev]'), or set PYREGO_NO_SPARK=1: {exc}"
        )
    # The executors' Python workers are this interpreter, and import this pyrego.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("pyrego-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "512m")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "64")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _text_frame(spark: Any, texts: list[str | None], partitions: int = 4) -> Any:
    return spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "id long, doc string").repartition(partitions)


def _outcomes(
    rows: list[Any], output_col: str = "decision", error_col: str = "decision_error"
) -> dict[int, tuple[Any, Any, Any]]:
    out = {}
    for row in rows:
        err = row[error_col]
        out[row["id"]] = (row[output_col], err["code"] if err else None, err["message"] if err else None)
    return out


@pytest.mark.parametrize("mode", ["arrow", "pandas"])
def test_seed_and_inventory_decisions_match_one_process(spark: Any, mode: str) -> None:
    from pyrego.distributed.spark import with_decision

    seeds, seed_inputs = seed_payload()
    inventory = inventory_payload()
    texts: list[str | None] = [json.dumps(d) for d in seed_inputs + inventory_docs()]
    texts += [t for t, _ in BAD_TEXTS] + [None]
    df = _text_frame(spark, texts)
    for payload, path in ((seeds, "data.bench"), (inventory, "data.inventory.main.report")):
        engine = payload.build()
        got = _outcomes(with_decision(df, payload, path, input_col="doc", mode=mode).collect())
        assert sorted(got) == list(range(len(texts)))
        for i, text in enumerate(texts):
            check(got[i], expected_text(engine, path, text), where=f"{path} record {i}")
    codes = {got[i][1] for i in got}
    assert {None, "invalid_input", "eval_conflict_error"} <= codes


def test_special_values_and_errors(spark: Any) -> None:
    from pyrego.distributed.spark import with_decision

    payload = special_payload()
    engine = payload.build()
    docs = [
        {"xs": [3, 1, 2, 1], "a": 1, "b": 1},
        {"xs": [], "a": 7, "b": 8},
        {"a": 2.5, "b": 2.5},
        {"xs": ["z", 1, [1]], "a": 10**30},
    ]
    texts = [json.dumps(d) for d in docs]
    df = _text_frame(spark, texts, 2)
    for path in ("data.special.values", "data.special.conflict", "data.special"):
        got = _outcomes(with_decision(df, payload, path, input_col="doc").collect())
        for i, text in enumerate(texts):
            check(got[i], expected_text(engine, path, text), where=f"{path} record {i}")
    # The exact text: sets sorted, big numbers whole, non-string keys as text.
    rows = with_decision(df, payload, "data.special.values", input_col="doc").orderBy("id").collect()
    value = json.loads(rows[0]["decision"])
    assert value["set"] == [1, 2, 3] and value["empty"] == []
    assert '"big":12345678901234567890000' in rows[0]["decision"]
    assert value["keys"] == {"3": "number key", "[1,2]": "array key"}
    assert rows[1]["decision_error"] is None and rows[1]["decision"] is not None
    assert rows[1]["decision"] != rows[0]["decision"]


def test_boolean_output(spark: Any) -> None:
    from pyspark.sql.types import BooleanType

    from pyrego.distributed.spark import with_decision

    payload = inventory_payload()
    engine = payload.build()
    docs = inventory_docs(120, seed=5)
    texts = [json.dumps(d) for d in docs]
    df = _text_frame(spark, texts)
    out = with_decision(
        df, payload, "data.inventory.main.allow", input_col="doc", output="boolean", output_col="ok", error_col="err"
    )
    assert out.schema["ok"].dataType == BooleanType()
    got = _outcomes(out.collect(), "ok", "err")
    for i, doc in enumerate(docs):
        check(got[i], expected(engine, "data.inventory.main.allow", doc, "boolean"), "boolean", where=f"record {i}")
    assert {v for v, _, _ in got.values()} == {True, False}
    # A decision that is not a boolean is that record's error.
    rows = with_decision(df, payload, "data.inventory.main.severity", input_col="doc", output="boolean").collect()
    assert {r["decision_error"]["code"] for r in rows} == {"decision_not_boolean"}
    assert all(r["decision"] is None for r in rows)


def test_typed_rows_become_plain_inputs(spark: Any) -> None:
    """Struct, array, map, decimal, timestamp, date and binary columns reach the policy as
    plain JSON values, exactly; a NaN is that record's error."""
    from pyrego.distributed import PolicyPayload
    from pyrego.distributed.spark import with_decision
    from pyrego.errors import ArgumentError

    schema = (
        "id long, name string, replicas int, ratio decimal(20,2), score double, labels map<string,string>, "
        "containers array<struct<name:string,image:string,ports:array<int>,sc:struct<privileged:boolean>>>, "
        "created timestamp, day date, blob binary, nested map<string,array<map<string,bigint>>>"
    )
    ts = datetime.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=datetime.timezone.utc)
    rows = [
        (
            0,
            "web",
            3,
            Decimal("12.50"),
            0.25,
            {"app": "web", "team": "a"},
            [("c1", "nginx:1", [80, 443], (True,))],
            ts,
            datetime.date(2024, 2, 29),
            b"\x00\xffhi",
            {"k": [{"x": 2**62}]},
        ),
        (1, None, None, None, None, None, [], None, None, None, None),
        (
            2,
            "nan",
            1,
            Decimal("1.00"),
            float("nan"),
            {},
            [("c", None, None, None)],
            ts,
            datetime.date(2024, 1, 1),
            b"",
            {},
        ),
    ]
    df = spark.createDataFrame(rows, schema).repartition(2)
    payload = PolicyPayload.from_policies({"echo.rego": "package echo\nr := input\n"})
    engine = payload.build()
    want_row0 = {
        "id": 0,
        "name": "web",
        "replicas": 3,
        "ratio": 12.5,
        "score": 0.25,
        "labels": {"app": "web", "team": "a"},
        "containers": [{"name": "c1", "image": "nginx:1", "ports": [80, 443], "sc": {"privileged": True}}],
        "created": "2024-05-06T07:08:09.123456Z",
        "day": "2024-02-29",
        "blob": base64.b64encode(b"\x00\xffhi").decode(),
        "nested": {"k": [{"x": 2**62}]},
    }
    got = {r["id"]: r for r in with_decision(df, payload, "data.echo.r").collect()}
    assert json.loads(got[0]["decision"]) == want_row0
    check((got[0]["decision"], None, None), expected(engine, "data.echo.r", want_row0), where="row 0")
    want_row1 = {k: None for k in want_row0} | {"id": 1, "containers": []}
    assert json.loads(got[1]["decision"]) == want_row1
    assert got[2]["decision"] is None and got[2]["decision_error"]["code"] == "invalid_input"
    assert "NaN" in got[2]["decision_error"]["message"]
    # One column (an array of structs), and a few columns as an object.
    got = {r["id"]: r for r in with_decision(df, payload, "data.echo.r", input_col="containers").collect()}
    assert json.loads(got[0]["decision"]) == want_row0["containers"]
    got = {r["id"]: r for r in with_decision(df, payload, "data.echo.r", input_cols=["name", "labels"]).collect()}
    assert json.loads(got[0]["decision"]) == {"name": "web", "labels": {"app": "web", "team": "a"}}
    with pytest.raises(ArgumentError, match="JSON text column"):
        with_decision(df, payload, "data.echo.r", input_cols=["name"], mode="pandas")


def test_time_limit_per_record(spark: Any) -> None:
    from pyrego.distributed.spark import with_decision

    payload = special_payload()
    texts = [json.dumps({"n": 3, "a": 2}), json.dumps({"n": 5000, "a": 2}), json.dumps({"n": 4, "a": 0})]
    df = _text_frame(spark, texts, 1)
    got = _outcomes(with_decision(df, payload, "data.special.slow", input_col="doc", timeout=0.2).collect())
    assert got[0] == (None, None, None) and got[2] == (None, None, None)
    assert got[1][0] is None and got[1][1] == "eval_cancel_error"


def test_policy_is_built_once_per_python_worker(spark: Any) -> None:
    """Eight tasks on two cores: each Python worker builds the payload once, whatever tasks it runs."""
    import pyarrow as pa

    from pyrego.distributed.payload import builds_in_process, evaluator

    payload = inventory_payload()
    path = "data.inventory.main.allow"
    key = (payload.digest, path)
    shipped = spark.sparkContext.broadcast(payload)
    texts = [json.dumps(d) for d in inventory_docs(80, seed=2)]

    def probe(batches: Any) -> Any:
        # What with_decision's tasks do: the broadcast payload, the process's evaluator.
        for batch in batches:
            ev = evaluator(shipped.value, path)
            assert ev.path == path
            builds = builds_in_process().get(key, 0)
            yield pa.RecordBatch.from_pydict(
                {"pid": [os.getpid()] * batch.num_rows, "builds": [builds] * batch.num_rows}
            )

    rows = _text_frame(spark, texts, 8).mapInArrow(probe, "pid long, builds long").collect()
    assert len(rows) == len(texts)
    per_worker: dict[int, set[int]] = {}
    for r in rows:
        per_worker.setdefault(r["pid"], set()).add(r["builds"])
    assert all(b == {1} for b in per_worker.values()), per_worker
    assert len(per_worker) < 8


def test_compiled_artifact_payload(spark: Any, tmp_path: Path) -> None:
    """A compiled artifact ships and evaluates as the policy texts do (pyrego.artifact)."""
    artifact = pytest.importorskip(
        "pyrego.artifact", reason="pyrego.artifact (compiled policy artifacts) is not in this tree"
    )
    from pyrego.distributed import PolicyPayload
    from pyrego.distributed.spark import with_decision

    texts_payload = inventory_payload()
    engine = texts_payload.build()
    artifact.write_artifact(engine, tmp_path / "inventory_policy.py")
    payload = PolicyPayload.from_artifact(tmp_path / "inventory_policy.py")
    texts = [json.dumps(d) for d in inventory_docs(100, seed=9)]
    got = _outcomes(
        with_decision(_text_frame(spark, texts), payload, "data.inventory.main.report", input_col="doc").collect()
    )
    for i, text in enumerate(texts):
        check(got[i], expected_text(engine, "data.inventory.main.report", text), where=f"record {i}")


def test_arguments_are_checked(spark: Any) -> None:
    from pyrego.distributed.spark import with_decision
    from pyrego.errors import ArgumentError

    df = _text_frame(spark, ["{}"], 1)
    payload = special_payload()
    with pytest.raises(ArgumentError, match="no column"):
        with_decision(df, payload, "data.special.allow", input_col="nope")
    with pytest.raises(ArgumentError, match="already has a column"):
        with_decision(df, payload, "data.special.allow", input_col="doc", output_col="id")
    with pytest.raises(ArgumentError, match="output must be"):
        with_decision(df, payload, "data.special.allow", input_col="doc", output="yaml")
