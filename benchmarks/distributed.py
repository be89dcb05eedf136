"""Decisions per second over a generated inventory: one process, two processes, Spark, Dask, regorus, OPA.

    python benchmarks/distributed.py --docs 100000
    python benchmarks/distributed.py --docs 1000000 --only pyrego-loop,spark-arrow,dask

The inventory (``pyrego.bench.inventory``: Kubernetes workloads and Azure
resources, about 1 kB each) is written once as JSON Lines to ``--work``;
every runner then reads that file, parses each line and evaluates
``--path`` (default ``data.inventory.main.report``, a report object with sets
of messages) under the policies of ``benchmarks/inventory``. Times are wall
clock from the first line read to the last decision made, start-up excluded
(Spark session, Dask cluster, worker processes and their compiles are up
before the clock starts; compiles inside workers are included).

Every runner reads JSON text (pyrego with its loader, regorus in Rust with
``set_input_json``, OPA's binding with ``json.loads``, which its ctypes
wrapper writes again with ``json.dumps``) and gives each decision as JSON
text (the pyrego runners with pyrego's writer, regorus with
``eval_rule_as_json``), except OPA, whose binding parses the result JSON it
gets from Go into Python values.

Agreement: the pyrego runners (loop, eval_many, processes, Spark, Dask) all
write OPA's JSON text with pyrego's writer; each reports, over all
documents, the number of decisions per error code and the sum of the CRC-32
of the decision texts: these must be equal. regorus and OPA are compared on
the first ``--sample`` documents (values as plain JSON, errors as errors).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# This file's folder must not be on the path: its name would hide the ``distributed`` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT / "benchmarks"]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

from pyrego.bench.inventory import json_lines  # noqa: E402
from pyrego.distributed import PolicyPayload  # noqa: E402
from pyrego.distributed.records import json_input  # noqa: E402

POLICY_DIR = ROOT / "benchmarks" / "inventory"
RUNNERS = [
    "pyrego-loop",
    "pyrego-eval_many",
    "pyrego-2proc",
    "spark-arrow",
    "spark-pandas",
    "dask",
    "dask-bag",
    "regorus",
    "opa",
]
CHUNK = 2000

Summary = dict[str, Any]  # {"docs": n, "codes": Counter, "crc": int}


def summarize(texts: list[str | None], codes: list[str | None], into: Summary | None = None) -> Summary:
    s = into if into is not None else {"docs": 0, "codes": Counter(), "crc": 0}
    s["docs"] += len(texts)
    crc = 0
    for t in texts:
        if t is not None:
            crc += zlib.crc32(t.encode())
    s["crc"] += crc
    s["codes"].update(c or "ok" for c in codes)
    return s


def merge(parts: list[Summary]) -> Summary:
    out: Summary = {"docs": 0, "codes": Counter(), "crc": 0}
    for p in parts:
        out["docs"] += p["docs"]
        out["crc"] += p["crc"]
        out["codes"].update(p["codes"])
    return out


def read_chunks(path: Path, size: int = CHUNK) -> Iterator[list[str]]:
    with open(path, encoding="utf-8") as f:
        chunk: list[str] = []
        for line in f:
            chunk.append(line)
            if len(chunk) >= size:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


# -- the runners: each returns (seconds, summary or None, note) ---------------


def run_loop(payload: PolicyPayload, path: str, data: Path, args: Any) -> tuple[float, Summary, str]:
    """One process, Engine.eval_rule per document (what a plain loop does)."""
    import pyrego
    from pyrego.runtime.convert import dumps, from_python, loads

    engine = payload.build()
    engine.eval_rule(path, input={})
    total: Summary = {"docs": 0, "codes": Counter(), "crc": 0}
    start = time.perf_counter()
    for chunk in read_chunks(data):
        texts: list[str | None] = []
        codes: list[str | None] = []
        for line in chunk:
            try:
                value = engine.eval_rule(path, input=loads(line))
            except pyrego.RegoError as err:
                texts.append(None)
                codes.append(err.code)
                continue
            texts.append(None if value is pyrego.UNDEFINED else dumps(from_python(value)))
            codes.append(None)
        summarize(texts, codes, total)
    return time.perf_counter() - start, total, "Engine.eval_rule in a loop"


def run_eval_many(
    payload: PolicyPayload, path: str, data: Path, args: Any, processes: int | None = None
) -> tuple[float, Summary | None, str]:
    """pyrego.batch.eval_many (when the package has it)."""
    try:
        from pyrego.batch import eval_many  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return 0.0, None, "PLACEHOLDER: pyrego.batch is not in this tree (eval_many lands with it; this row then runs)"
    import pyrego
    from pyrego.runtime.convert import dumps, from_python, loads

    engine = payload.build()

    def inputs() -> Iterator[Any]:
        for chunk in read_chunks(data):
            for line in chunk:
                yield loads(line)

    total: Summary = {"docs": 0, "codes": Counter(), "crc": 0}
    start = time.perf_counter()
    texts: list[str | None] = []
    codes: list[str | None] = []
    for value, err in eval_many(engine, path, inputs(), processes=processes):
        if err is not None:
            texts.append(None)
            codes.append(err.code)
        else:
            texts.append(None if value is pyrego.UNDEFINED else dumps(from_python(value)))
            codes.append(None)
        if len(texts) >= CHUNK:
            summarize(texts, codes, total)
            texts, codes = [], []
    summarize(texts, codes, total)
    return time.perf_counter() - start, total, f"eval_many(processes={processes})"


_WORKER: Any = None


def _init_worker(payload: PolicyPayload, path: str) -> None:
    global _WORKER
    from pyrego.distributed.payload import evaluator

    _WORKER = evaluator(payload, path)


def _worker_chunk(lines: list[str]) -> Summary:
    texts, codes, _ = _WORKER.decisions([json_input(line) for line in lines])
    return summarize(texts, codes)


def run_processes(payload: PolicyPayload, path: str, data: Path, args: Any) -> tuple[float, Summary, str]:
    """Two worker processes (eval_many(processes=2) when pyrego.batch is there, else a multiprocessing pool)."""
    try:
        import pyrego.batch  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        pass
    else:
        seconds, summary, note = run_eval_many(payload, path, data, args, processes=2)
        assert summary is not None
        return seconds, summary, note
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2, initializer=_init_worker, initargs=(payload, path)) as pool:
        pool.map(_worker_chunk, [['{"kind": "Pod"}']] * 2)  # (both workers up and compiled)
        start = time.perf_counter()
        parts = list(pool.imap(_worker_chunk, read_chunks(data), chunksize=1))
        seconds = time.perf_counter() - start
    return seconds, merge(parts), "multiprocessing pool of 2 (spawn), 2,000 lines a task"


def _spark_session() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("pyrego-distributed-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.files.maxPartitionBytes", str(8 << 20))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_spark(payload: PolicyPayload, path: str, data: Path, args: Any, mode: str) -> tuple[float, Summary, str]:
    from pyspark.sql import functions as F

    from pyrego.distributed.spark import with_decision

    spark = args.spark
    if spark is None:
        spark = args.spark = _spark_session()
        # A first job: the Python workers start and compile (not timed).
        warm = spark.createDataFrame([('{"kind": "Pod"}',)] * 4, "value string").repartition(2)
        with_decision(warm, payload, path, input_col="value").collect()
    start = time.perf_counter()
    df = spark.read.text(str(data))
    if df.rdd.getNumPartitions() < 2:
        df = df.repartition(2)
    out = with_decision(df, payload, path, input_col="value", mode=mode)
    rows = (
        out.select(
            F.coalesce(F.col("decision_error.code"), F.lit("ok")).alias("code"), F.crc32(F.col("decision")).alias("crc")
        )
        .groupBy("code")
        .agg(F.count("*").alias("n"), F.sum(F.coalesce(F.col("crc"), F.lit(0))).alias("crc"))
        .collect()
    )
    seconds = time.perf_counter() - start
    summary: Summary = {
        "docs": sum(r["n"] for r in rows),
        "codes": Counter({r["code"]: r["n"] for r in rows}),
        "crc": sum(int(r["crc"]) for r in rows),
    }
    parts = df.rdd.getNumPartitions()
    return (
        seconds,
        summary,
        f"local[2], spark.read.text, {parts} partitions, map{'InArrow' if mode == 'arrow' else 'InPandas'}",
    )


def _dask_client(args: Any) -> Any:
    if args.dask_client is None:
        from distributed import Client, LocalCluster

        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, host="127.0.0.1"
        )
        args.dask_client = Client(cluster)
    return args.dask_client


def _bag_summary(items: list[dict[str, Any]]) -> list[Summary]:
    return [summarize([d["decision"] for d in items], [d["error"] and d["error"]["code"] for d in items])]


def _frame_summary(frame: Any) -> Any:
    import pandas as pd

    s = summarize(frame["decision"].tolist(), [e and e["code"] for e in frame["decision_error"].tolist()])
    return pd.DataFrame(
        {"code": list(s["codes"]), "n": list(s["codes"].values()), "crc": [s["crc"]] + [0] * (len(s["codes"]) - 1)}
    )


def run_dask_bag(payload: PolicyPayload, path: str, data: Path, args: Any) -> tuple[float, Summary, str]:
    import dask.bag as db

    from pyrego.distributed.dask import bag_decisions

    client = _dask_client(args)
    bag_decisions(db.from_sequence(['{"kind": "Pod"}'] * 4, npartitions=2), payload, path, client=client).compute()
    start = time.perf_counter()
    bag = db.read_text(str(data), blocksize="16MiB")
    parts = bag_decisions(bag, payload, path, client=client).map_partitions(_bag_summary).compute()
    seconds = time.perf_counter() - start
    return seconds, merge(list(parts)), f"2 workers x 1 thread, read_text, {bag.npartitions} partitions, bag_decisions"


def run_dask_frame(payload: PolicyPayload, path: str, data: Path, args: Any) -> tuple[float, Summary, str]:
    import dask.dataframe as dd
    import pandas as pd

    from pyrego.distributed.dask import with_decision

    client = _dask_client(args)
    start = time.perf_counter()
    ddf = dd.read_csv(
        str(data),
        sep="\x01",
        header=None,
        names=["doc"],
        blocksize="16MiB",
        quoting=3,
        dtype={"doc": object},
        keep_default_na=False,
    )
    out = with_decision(ddf, payload, path, input_col="doc", client=client)
    meta = pd.DataFrame(
        {"code": pd.Series([], dtype=object), "n": pd.Series([], dtype="int64"), "crc": pd.Series([], dtype="int64")}
    )
    frame = out.map_partitions(_frame_summary, meta=meta).compute()
    seconds = time.perf_counter() - start
    codes: Counter[str] = Counter()
    for code, n in zip(frame["code"], frame["n"], strict=True):
        codes[code] += int(n)
    summary: Summary = {"docs": int(frame["n"].sum()), "codes": codes, "crc": int(frame["crc"].sum())}
    return seconds, summary, f"2 workers x 1 thread, read_csv of the lines, {ddf.npartitions} partitions, with_decision"


def run_regorus(payload: PolicyPayload, path: str, data: Path, args: Any) -> tuple[float, Summary | None, str]:
    import regorus

    engine = regorus.Engine()
    for name, text in payload.policies:
        engine.add_policy(name, text)
    n = 0
    codes: Counter[str] = Counter()
    sample: list[Any] = []
    start = time.perf_counter()
    for chunk in read_chunks(data):
        for line in chunk:
            engine.set_input_json(line)
            try:
                # JSON text out, as the pyrego runners write each decision (their checksums are of it).
                value: Any = engine.eval_rule_as_json(path)
                codes["ok"] += 1
            except RuntimeError as err:
                value = ("error", str(err)[:200])
                codes["error"] += 1
            if n < args.sample:
                sample.append(value)
            n += 1
    seconds = time.perf_counter() - start
    args.sample_regorus = [v if isinstance(v, tuple) else json.loads(v) for v in sample]  # (after the clock)
    return seconds, {"docs": n, "codes": codes, "crc": None}, "regorus.Engine: set_input_json + eval_rule_as_json per document"


def run_opa(payload: PolicyPayload, path: str, data: Path, args: Any) -> tuple[float, Summary | None, str]:
    from opa_oracle import get_oracle

    get_oracle()  # (puts the OPA library on sys.path)
    from opa_bindings.engine import OpaEngine, OpaError

    engine = OpaEngine()
    engine.print_handler = lambda message, location: None
    for name, text in payload.policies:
        engine.add_policy(name, text)
    query = f"x := {path}"
    n = 0
    codes: Counter[str] = Counter()
    args.sample_opa = []
    start = time.perf_counter()
    for chunk in read_chunks(data):
        for line in chunk:
            try:
                rs = engine.eval_query(query, json.loads(line))
                value = rs[0]["x"] if rs else None
                codes["ok"] += 1
            except OpaError as err:
                value = ("error", err.code)
                codes["error"] += 1
            if n < args.sample:
                args.sample_opa.append(value)
            n += 1
    seconds = time.perf_counter() - start
    engine.close()
    return seconds, {"docs": n, "codes": codes, "crc": None}, "OPA v1.20.2 library (ctypes): eval_query per document"


# -- agreement on a sample ------------------------------------------------------


def _plain(v: Any) -> Any:
    """A value with sets and arrays alike as arrays sorted by their JSON text (the
    report's arrays are all sets: only their members are compared)."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (set, frozenset, list, tuple)):
        return sorted((_plain(x) for x in v), key=lambda x: json.dumps(x, sort_keys=True))
    return v


def reference_sample(payload: PolicyPayload, path: str, data: Path, n: int) -> list[Any]:
    import pyrego

    engine = payload.build()
    out: list[Any] = []
    for chunk in read_chunks(data):
        for line in chunk:
            if len(out) >= n:
                return out
            try:
                out.append(pyrego.json_ready(engine.eval_rule(path, input=json.loads(line))))
            except pyrego.RegoError as err:
                out.append(("error", err.code))
    return out


def agreement(reference: list[Any], other: list[Any]) -> tuple[int, int]:
    same = 0
    for a, b in zip(reference, other, strict=False):
        if isinstance(a, tuple) or isinstance(b, tuple):
            same += isinstance(a, tuple) and isinstance(b, tuple)
        else:
            same += _plain(a) == _plain(b)
    return same, min(len(reference), len(other))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--path", default="data.inventory.main.report")
    parser.add_argument("--only", default=",".join(RUNNERS), help=f"comma-separated, of {RUNNERS}")
    parser.add_argument("--sample", type=int, default=1000, help="documents compared with regorus and OPA")
    parser.add_argument("--work", default=str(ROOT / ".cache" / "distributed-bench"))
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args(argv)
    args.spark = None
    args.dask_client = None
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"inventory-{args.docs}-{args.seed}.jsonl"
    if not data.exists():
        t = time.perf_counter()
        tmp = data.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(json_lines(args.docs, args.seed))
        tmp.rename(data)
        print(
            f"generated {args.docs:,} documents ({data.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s",
            flush=True,
        )
    payload = PolicyPayload.from_files([POLICY_DIR])
    table: dict[str, Callable[..., tuple[float, Summary | None, str]]] = {
        "pyrego-loop": run_loop,
        "pyrego-eval_many": run_eval_many,
        "pyrego-2proc": run_processes,
        "spark-arrow": lambda *a: run_spark(*a, mode="arrow"),
        "spark-pandas": lambda *a: run_spark(*a, mode="pandas"),
        "dask": run_dask_frame,
        "dask-bag": run_dask_bag,
        "regorus": run_regorus,
        "opa": run_opa,
    }
    print(
        f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs; {args.docs:,} documents; rule {args.path}"
    )
    results = []
    for name in args.only.split(","):
        load = os.getloadavg()[0]
        try:
            seconds, summary, note = table[name](payload, args.path, data, args)
        except Exception as exc:  # noqa: BLE001 - a runner that cannot run is reported, the others go on
            print(f"{name:18} FAILED: {type(exc).__name__}: {exc}", flush=True)
            results.append({"runner": name, "error": f"{type(exc).__name__}: {exc}"})
            continue
        if summary is None:
            print(f"{name:18} {note}", flush=True)
            results.append({"runner": name, "note": note})
            continue
        rate = summary["docs"] / seconds
        codes = dict(sorted(summary["codes"].items()))
        print(
            f"{name:18} {summary['docs']:>9,} docs {seconds:8.1f} s {rate:9,.0f} docs/s  load {load:4.1f}->{os.getloadavg()[0]:4.1f}  {codes} crc={summary['crc']}  ({note})",
            flush=True,
        )
        results.append(
            {
                "runner": name,
                "docs": summary["docs"],
                "seconds": seconds,
                "docs_per_s": rate,
                "codes": codes,
                "crc": summary["crc"],
                "note": note,
                "load": load,
            }
        )
    pyrego_rows = [r for r in results if r.get("crc") is not None]
    if pyrego_rows:
        same = {(r["docs"], json.dumps(r["codes"], sort_keys=True), r["crc"]) for r in pyrego_rows}
        print(f"pyrego runners agree on every document: {len(same) == 1} ({len(pyrego_rows)} runners)")
    if getattr(args, "sample_regorus", None) or getattr(args, "sample_opa", None):
        ref = reference_sample(payload, args.path, data, args.sample)
        for name, sample in (
            ("regorus", getattr(args, "sample_regorus", None)),
            ("opa", getattr(args, "sample_opa", None)),
        ):
            if sample:
                same, n = agreement(ref, sample)
                print(f"{name} agrees with pyrego on {same}/{n} sampled documents")
                for r in results:
                    if r["runner"] == name:
                        r["agreement"] = [same, n]
    if args.spark is not None:
        args.spark.stop()
    if args.dask_client is not None:
        args.dask_client.close()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
