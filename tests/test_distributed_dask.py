"""pyrego.distributed.dask: decisions over Dask DataFrames and Bags on a real cluster.

A ``distributed`` LocalCluster of two worker processes (one thread each) for
the module. Every record is compared with what ``Engine.eval_rule`` gives in
this process for the same input; a sample also with OPA (the oracle).
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from distributed_cases import (
    BAD_TEXTS,
    check,
    decoded,
    expected,
    expected_text,
    inventory_docs,
    inventory_payload,
    seed_payload,
    special_payload,
)

try:
    import dask.dataframe as dd
    import pandas as pd
except ImportError as exc:  # (in the dev extra: a missing one is a failure, not a skip)
    raise ImportError(
        f"tests/test_distributed_dask.py needs dask[dataframe], distributed and pandas (pip install -e '.[dev]'): {exc}"
    ) from exc

SRC = str(Path(__file__).resolve().parent.parent / "src")


# (These two run first, before the module's cluster exists: they use no distributed client.)


def test_local_scheduler_without_client() -> None:
    """Without a distributed client the tasks carry the payload (Dask's threads scheduler here)."""
    import dask

    from pyrego.distributed.dask import ship, with_decision

    payload = special_payload()
    engine = payload.build()
    texts = [json.dumps({"a": a}) for a in range(6)]
    from distributed import default_client

    try:
        default_client()
    except ValueError:
        pass
    else:
        pytest.fail("a default client exists: this test needs none")
    assert ship(payload).payload is payload
    with dask.config.set(scheduler="threads"):
        got = _outcomes(with_decision(_frame(texts, 2), payload, "data.special.allow", input_col="doc").compute())
    for i, text in enumerate(texts):
        check(got[i], expected_text(engine, "data.special.allow", text), where=f"record {i}")


def test_arguments_are_checked() -> None:
    from pyrego.distributed.dask import with_decision
    from pyrego.errors import ArgumentError

    ddf = _frame(["{}"], 1)
    with pytest.raises(ArgumentError, match="no column"):
        with_decision(ddf, special_payload(), "data.special.allow", input_col="nope")
    with pytest.raises(ArgumentError, match="not both"):
        with_decision(ddf, special_payload(), "data.special.allow", input_col="doc", input_cols=["doc"])


@pytest.fixture(scope="module")
def client() -> Any:
    from distributed import Client, LocalCluster

    # The workers are new processes: they import this pyrego.
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (SRC, os.environ.get("PYTHONPATH")) if p)
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1")
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def _frame(texts: list[Any], partitions: int = 4) -> Any:
    pdf = pd.DataFrame({"id": range(len(texts)), "doc": pd.Series(texts, dtype=object)})
    return dd.from_pandas(pdf, npartitions=partitions)


def _outcomes(
    frame: Any, output_col: str = "decision", error_col: str = "decision_error"
) -> dict[int, tuple[Any, Any, Any]]:
    out = {}
    for row in frame.to_dict("records"):
        err = row[error_col]
        decision = row[output_col]
        out[row["id"]] = (
            None if decision is pd.NA else decision,
            err["code"] if err else None,
            err["message"] if err else None,
        )
    return out


def test_seed_and_inventory_decisions_match_one_process(client: Any) -> None:
    from pyrego.distributed.dask import with_decision

    seeds, seed_inputs = seed_payload()
    inventory = inventory_payload()
    texts: list[str | None] = [json.dumps(d) for d in seed_inputs + inventory_docs()]
    texts += [t for t, _ in BAD_TEXTS] + [None]
    ddf = _frame(texts)
    codes = set()
    for payload, path in ((seeds, "data.bench"), (inventory, "data.inventory.main.report")):
        engine = payload.build()
        got = _outcomes(with_decision(ddf, payload, path, input_col="doc", client=client).compute())
        assert sorted(got) == list(range(len(texts)))
        for i, text in enumerate(texts):
            check(got[i], expected_text(engine, path, text), where=f"{path} record {i}")
        codes |= {c for _, c, _ in got.values()}
    assert {None, "invalid_input", "eval_conflict_error"} <= codes


def test_dict_cells_and_whole_rows(client: Any) -> None:
    import dask

    from pyrego.distributed import PolicyPayload
    from pyrego.distributed.dask import with_decision

    payload = PolicyPayload.from_policies({"echo.rego": "package echo\nr := input\n"})
    docs = inventory_docs(40, seed=4)
    # (Dask turns object columns into text by default: dict cells need that off.)
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = _frame(docs, 3)
    got = _outcomes(with_decision(ddf, payload, "data.echo.r", input_col="doc", client=client).compute())
    for i, doc in enumerate(docs):
        assert decoded(got[i][0]) == json.loads(json.dumps(doc))
    # Whole rows: numpy numbers become plain numbers, a missing float null, lists stay lists.
    pdf = pd.DataFrame(
        {
            "id": [0, 1],
            "name": ["a", "b"],
            "score": [0.5, math.nan],
            "tags": [["x", "y"], []],
            "when": pd.to_datetime(["2024-05-06T07:08:09Z", None], utc=True),
        }
    )
    with dask.config.set({"dataframe.convert-string": False}):
        whole = dd.from_pandas(pdf, npartitions=2)
        some = dd.from_pandas(pdf, npartitions=1)
    out = with_decision(whole, payload, "data.echo.r", client=client).compute()
    got = _outcomes(out)
    assert decoded(got[0][0]) == {
        "id": 0,
        "name": "a",
        "score": 0.5,
        "tags": ["x", "y"],
        "when": "2024-05-06T07:08:09Z",
    }
    assert decoded(got[1][0]) == {"id": 1, "name": "b", "score": None, "tags": [], "when": None}
    got = _outcomes(with_decision(some, payload, "data.echo.r", input_cols=["name", "tags"], client=client).compute())
    assert decoded(got[0][0]) == {"name": "a", "tags": ["x", "y"]}


def test_boolean_output_and_not_boolean(client: Any) -> None:
    from pyrego.distributed.dask import with_decision

    payload = inventory_payload()
    engine = payload.build()
    docs = inventory_docs(150, seed=6)
    ddf = _frame([json.dumps(d) for d in docs])
    out = with_decision(
        ddf, payload, "data.inventory.main.allow", input_col="doc", output="boolean", client=client
    ).compute()
    assert str(out["decision"].dtype) == "boolean"
    got = _outcomes(out)
    for i, doc in enumerate(docs):
        check(got[i], expected(engine, "data.inventory.main.allow", doc, "boolean"), "boolean", where=f"record {i}")
    assert {v for v, _, _ in got.values()} >= {True, False}
    out = with_decision(
        ddf, payload, "data.inventory.main.severity", input_col="doc", output="boolean", client=client
    ).compute()
    assert {e["code"] for e in out["decision_error"]} == {"decision_not_boolean"}


def test_bag_keeps_order_and_reports_errors(client: Any) -> None:
    import dask.bag as db

    from pyrego.distributed.dask import bag_decisions

    payload = special_payload()
    engine = payload.build()
    items: list[Any] = [{"xs": [2, 1], "a": i, "b": i % 3} for i in range(30)] + [
        "[1",
        json.dumps({"xs": [1], "a": 1, "b": 1}),
        {"a": float("nan")},
    ]
    for path in ("data.special", "data.special.values"):
        results = bag_decisions(db.from_sequence(items, npartitions=4), payload, path, client=client).compute()
        assert len(results) == len(items)
        for i, (item, result) in enumerate(zip(items, results, strict=True)):
            err = result["error"]
            outcome = (result["decision"], err and err["code"], err and err["message"])
            if isinstance(item, str):
                check(outcome, expected_text(engine, path, item), where=f"{path} item {i}")
            elif i == len(items) - 1:
                assert outcome[1] == "invalid_input" and "NaN" in outcome[2]
            else:
                check(outcome, expected(engine, path, item), where=f"{path} item {i}")


def test_payload_is_shipped_once_and_built_once_per_worker(client: Any) -> None:
    from pyrego.distributed.dask import ship, with_decision
    from pyrego.distributed.payload import builds_in_process, installed

    payload = inventory_payload()
    ref = ship(payload, client)
    assert ref.payload is None  # tasks carry the digest only
    texts = [json.dumps(d) for d in inventory_docs(60, seed=8)]
    with_decision(_frame(texts, 12), payload, "data.inventory.main.allow", input_col="doc", client=client).compute()
    assert all(payload.digest in digests for digests in client.run(installed).values())
    builds = client.run(builds_in_process)
    key = (payload.digest, "data.inventory.main.allow")
    assert len(builds) == 2
    assert sum(b.get(key, 0) for b in builds.values()) >= 1
    assert all(b.get(key, 0) <= 1 for b in builds.values()), builds


def test_time_limit_per_record(client: Any) -> None:
    from pyrego.distributed.dask import with_decision

    texts = [json.dumps({"n": 3}), json.dumps({"n": 5000}), json.dumps({"n": 4})]
    got = _outcomes(
        with_decision(
            _frame(texts, 1), special_payload(), "data.special.slow", input_col="doc", timeout=0.2, client=client
        ).compute()
    )
    assert got[0] == (None, None, None) and got[2] == (None, None, None)
    assert got[1][1] == "eval_cancel_error"


def test_decisions_agree_with_opa(client: Any, oracle: Any) -> None:
    """The JSON text the cluster writes is OPA's value (sets, big numbers, non-string keys)."""
    from decimal import Decimal

    from pyrego.distributed.dask import with_decision

    docs = [{"xs": [3, 1, 2], "a": 1, "b": 1}, {"xs": ["b", "a"], "a": 10**25, "b": 0}]
    inventory = inventory_docs(25, seed=12)
    cases = [
        (special_payload(), "data.special.values", docs),
        (inventory_payload(), "data.inventory.main.report", inventory),
    ]
    for payload, path, items in cases:
        got = _outcomes(
            with_decision(
                _frame([json.dumps(d) for d in items], 2), payload, path, input_col="doc", client=client
            ).compute()
        )
        modules = dict(payload.policies)
        for i, doc in enumerate(items):
            answer = oracle.evaluate(modules, f"x := {path}", input=doc)
            if answer.is_error:
                assert got[i][1] == answer.error_code, (path, i)
                continue
            assert got[i][1] is None, got[i]
            assert json.loads(got[i][0], parse_float=Decimal) == answer.bindings[0]["x"], (path, i)


def test_no_cluster_library_is_imported_by_pyrego() -> None:
    """pyrego, its CLI and pyrego.distributed itself import neither Spark nor Dask."""
    import subprocess

    code = "import pyrego, pyrego.distributed, pyrego.cli, sys; print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark','dask','distributed','pandas','pyarrow')))"
    env = dict(os.environ, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_payloads_pickle_digest_and_build() -> None:
    """A payload is plain data: pickled it keeps its digest; equal contents, equal digests;
    from_engine carries an engine's policies, data and time limit."""
    import pickle

    import pyrego
    from pyrego.distributed import PolicyPayload
    from pyrego.errors import ArgumentError

    text = "package p\n\nallow if input.user in data.admins\n"
    a = PolicyPayload.from_policies({"p.rego": text}, {"admins": ["ann"]})
    b = pickle.loads(pickle.dumps(a))
    assert b == a and b.digest == a.digest
    assert PolicyPayload.from_policies({"p.rego": text}, {"admins": ["bob"]}).digest != a.digest
    assert a.with_timeout(1.5).digest != a.digest and a.with_timeout(1.5).timeout == 1.5
    engine = pyrego.Engine()
    engine.add_policy("p.rego", text)
    engine.add_data({"admins": ["ann"]})
    engine.set_eval_timeout(2.0)
    c = PolicyPayload.from_engine(engine)
    assert c.timeout == 2.0 and dict(c.policies) == {"p.rego": text}
    built = c.build()
    assert built.eval_rule("data.p.allow", input={"user": "ann"}) is True
    assert built.eval_rule("data.p.allow", input={"user": "bob"}) is pyrego.UNDEFINED
    engine.add_extension("ext.f", 1, lambda x: x)
    with pytest.raises(ArgumentError, match="extension"):
        PolicyPayload.from_engine(engine)
    with pytest.raises(ArgumentError, match="artifact's bytes"):
        PolicyPayload("artifact")
    with pytest.raises(ArgumentError, match="timeout"):
        PolicyPayload.from_policies({"p.rego": text}, timeout=0)
    with pytest.raises(pyrego.RegoError):
        PolicyPayload.from_policies({"bad.rego": "package p\nallow if {"}).build()
