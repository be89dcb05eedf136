"""Load on the policy server: decisions per second and latency under wrk, against a ceiling.

For each worker count (``--workers 1,2``) two servers run one after the
other on the loopback, each started, warmed up (``--warmup`` seconds of the
same load, not counted) and measured (``--duration`` seconds) by ``wrk``
with one thread and ``--connections`` connections:

- **pyrego**: ``pyrego run --server --workers N`` serving the nine seed
  benchmark policies (``bench/seed/policies/*_policy.rego``); each is loaded
  under its own package ``bench.<name>`` (they all declare ``package bench``)
  and wrk's Lua script rotates over every (policy, input) pair:
  ``POST /v1/data/bench/<name>/allow`` with ``{"input": ...}`` from
  ``bench/seed/inputs/<name>_input*.json``. ``--policies rbac`` serves one
  policy as it is, at ``/v1/data/bench/allow``, with its inputs.
- **ceiling**: a hello-world JSON endpoint on the same stack (Starlette and
  uvicorn, same worker count, same uvicorn settings; ``server_hello.py``),
  sent the same requests: what this machine allows.

Before the load every request is sent once and its answer compared with
pyrego's in-process engine on the same policy (the server must be right
before it is fast). Errors are non-2xx answers and socket errors (connect,
read, write, timeout) as wrk counts them. The machine's load average and
the CPU the server's processes used are printed beside the figures: the
machine may be shared, and wrk runs on it too.

    python benchmarks/server.py [--duration 60] [--warmup 5] [--connections 16]
        [--workers 1,2] [--policies all|rbac,...] [--servers pyrego,ceiling] [--src DIR]

Writes ``server.json`` and ``server.md`` under ``--out`` (default
``benchmarks/results``); exit status 1 when a server answered wrongly or
had errors.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = ROOT / "src"

#: wrk's Lua script: rotate over the requests (read from a file), print a JSON summary at the end.
LUA = r"""
local reqs = {}
local n = 0
local i = 0

function init(args)
  local f = assert(io.open(args[1], "r"))
  for line in f:lines() do
    local sep = line:find("\t", 1, true)
    local path = line:sub(1, sep - 1)
    local body = line:sub(sep + 1)
    n = n + 1
    reqs[n] = wrk.format("POST", path, {["Content-Type"] = "application/json"}, body)
  end
  f:close()
end

function request()
  i = i % n + 1
  return reqs[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  local out = string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d, ' ..
    '"p50_us": %d, "p90_us": %d, "p99_us": %d, "max_us": %d, "mean_us": %.1f}',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean)
  io.write("WRK_JSON " .. out .. "\n")
end
"""


@dataclass
class Run:
    """One measured server: what ran and what wrk saw."""

    server: str
    workers: int
    connections: int
    duration_s: float
    requests: int = 0
    rps: float = 0.0
    p50_ms: float = 0.0
    p90_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    load_before: list[float] = field(default_factory=list)
    load_after: list[float] = field(default_factory=list)
    server_cpu: float = 0.0  # cores the server's processes used on average while measured

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prepare(shared: Path, policies: list[str], work: Path) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, str]]:
    """Policy files under ``work/policies`` and the requests: ``([(path, body)], {name: policy text})``."""
    seed = shared / "bench" / "seed"
    available = sorted(p.name.removesuffix("_policy.rego") for p in (seed / "policies").glob("*_policy.rego"))
    names = available if policies == ["all"] else policies
    unknown = [n for n in names if n not in available]
    if unknown:
        raise SystemExit(f"unknown policies {unknown}; available: {', '.join(available)}")
    out = work / "policies"
    out.mkdir(parents=True)
    texts: dict[str, str] = {}
    per_policy: list[list[tuple[str, dict[str, Any]]]] = []
    single = len(names) == 1
    for name in names:
        text = (seed / "policies" / f"{name}_policy.rego").read_text()
        if not single:
            lines = text.split("\n")
            idx = next(i for i, line in enumerate(lines) if line.strip() == "package bench")
            lines[idx] = f"package bench.{name}"
            text = "\n".join(lines)
        texts[name] = text
        (out / f"{name}.rego").write_text(text)
        path = "/v1/data/bench/allow" if single else f"/v1/data/bench/{name}/allow"
        inputs = sorted((seed / "inputs").glob(f"{name}_input*.json"))
        per_policy.append([(path, {"input": json.loads(inp.read_text())}) for inp in inputs])
    # Interleaved: the first input of every policy, then the second of every policy, ...
    requests = [r for i in range(max(map(len, per_policy))) for reqs in per_policy for r in reqs[i : i + 1]]
    return requests, texts


def expected_results(requests: list[tuple[str, dict[str, Any]]], texts: dict[str, str]) -> list[Any]:
    """What pyrego's in-process engine decides for each request (``None``: undefined)."""
    sys.path.insert(0, str(SRC))
    from pyrego import Engine
    from pyrego.runtime.values import UNDEF

    engine = Engine()
    engine.add_policies({f"{n}.rego": t for n, t in texts.items()})
    out = []
    for path, body in requests:
        ref = "data." + ".".join(path.removeprefix("/v1/data/").split("/"))
        value = engine.eval_rule(ref, input=body["input"])
        out.append(None if value is UNDEF else value)
    return out


def start(kind: str, workers: int, port: int, policy_dir: Path, log_level: str, extra: list[str], src: Path = SRC) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    if kind == "pyrego":
        cmd = [sys.executable, "-m", "pyrego", "run", "--server", "--addr", f"127.0.0.1:{port}", "--log-level", log_level]
        cmd += ["--workers", str(workers), *extra, str(policy_dir)]
    else:  # the ceiling: the same uvicorn settings as pyrego.server.serve.serve
        cmd = [sys.executable, "-m", "uvicorn", "--app-dir", str(HERE), "server_hello:app", "--host", "127.0.0.1"]
        cmd += ["--port", str(port), "--workers", str(workers), "--log-level", {"warn": "warning"}.get(log_level, log_level)]
        cmd += ["--no-server-header", "--timeout-graceful-shutdown", "10"]
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, start_new_session=True)


def post(port: int, path: str, body: dict[str, Any], timeout: float = 10.0) -> tuple[int, Any]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


def wait_ready(proc: subprocess.Popen[bytes], port: int, workers: int, probe: tuple[str, dict[str, Any]], timeout: float = 120.0) -> None:
    """Until the server answers (with several workers: until every worker has started, by its CPU going idle)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited with status {proc.returncode}")
        try:
            status, _ = post(port, *probe, timeout=2.0)
            if status == 200:
                break
        except OSError:
            pass
        time.sleep(0.2)
    else:
        raise SystemExit("server did not start")
    # Worker processes load and compile on their own: wait until their CPU time stops moving.
    last = -1.0
    while time.monotonic() < deadline:
        now = tree_cpu(proc.pid)
        if len(tree_pids(proc.pid)) >= workers and now - last < 0.05:
            return
        last = now
        time.sleep(0.5)


def tree_pids(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rpartition(")")[2].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid`` and its descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in tree_pids(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / tick


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()


def wrk(port: int, script: Path, reqfile: Path, connections: int, seconds: float, timeout: float) -> dict[str, Any]:
    cmd = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", f"--timeout={timeout:g}s", "-s", str(script)]
    cmd += [f"http://127.0.0.1:{port}", "--", str(reqfile)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("WRK_JSON "))
    return json.loads(line.removeprefix("WRK_JSON "))  # type: ignore[no-any-return]


def measure(kind: str, workers: int, args: argparse.Namespace, work: Path, requests: list[tuple[str, dict[str, Any]]], expected: list[Any]) -> Run:
    port = free_port()
    proc = start(kind, workers, port, work / "policies", args.log_level, args.pyrego_arg, Path(args.src))
    try:
        wait_ready(proc, port, workers, requests[0])
        wrong = []
        for (path, body), want in zip(requests, expected):
            status, got = post(port, path, body)
            if kind == "pyrego" and (status != 200 or got.get("result") != want):
                wrong.append(f"{path} {json.dumps(body)[:80]}: {status} {got!r:.200} (expected result {want!r})")
        if wrong:
            raise SystemExit("pyrego's server answered wrongly:\n  " + "\n  ".join(wrong))
        if args.warmup > 0:
            wrk(port, work / "bench.lua", work / "requests.tsv", args.connections, args.warmup, args.timeout)
        run = Run(kind, workers, args.connections, args.duration, load_before=list(os.getloadavg()))
        cpu0, t0 = tree_cpu(proc.pid), time.monotonic()
        res = wrk(port, work / "bench.lua", work / "requests.tsv", args.connections, args.duration, args.timeout)
        run.server_cpu = (tree_cpu(proc.pid) - cpu0) / (time.monotonic() - t0)
        run.load_after = list(os.getloadavg())
    finally:
        stop(proc)
    run.requests = res["requests"]
    run.duration_s = res["duration_us"] / 1e6
    run.rps = run.requests / run.duration_s
    run.p50_ms, run.p90_ms, run.p99_ms, run.max_ms = (res[k] / 1000 for k in ("p50_us", "p90_us", "p99_us", "max_us"))
    run.errors = {k: res[k] for k in ("status", "connect", "read", "write", "timeout") if res[k]}
    return run


def table(runs: list[Run]) -> str:
    ceilings = {r.workers: r.rps for r in runs if r.server == "ceiling"}
    per_cpu = {r.workers: r.rps / r.server_cpu for r in runs if r.server == "ceiling" and r.server_cpu > 0}
    head = "| server | workers | req/s | ratio | p50 ms | p99 ms | errors | server CPU | req per CPU-s (ratio) | load 1m before/after |"
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for r in runs:
        ratio = f"{r.rps / ceilings[r.workers]:.2f}" if r.server == "pyrego" and r.workers in ceilings else ""
        eff = r.rps / r.server_cpu if r.server_cpu > 0 else 0.0
        eff_text = f"{eff:,.0f}" + (f" ({eff / per_cpu[r.workers]:.2f})" if r.server == "pyrego" and per_cpu.get(r.workers) else "")
        errs = str(r.error_count) if not r.errors else f"{r.error_count} ({', '.join(f'{k} {v}' for k, v in r.errors.items())})"
        lines.append(
            f"| {r.server} | {r.workers} | {r.rps:,.0f} | {ratio} | {r.p50_ms:.2f} | {r.p99_ms:.2f} | {errs} "
            f"| {r.server_cpu:.2f} | {eff_text} | {r.load_before[0]:.2f} / {r.load_after[0]:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=60.0, help="measured seconds per server (default 60)")
    p.add_argument("--warmup", type=float, default=5.0, help="seconds of load before measuring (default 5)")
    p.add_argument("--connections", type=int, default=16, help="wrk connections (default 16)")
    p.add_argument("--timeout", type=float, default=5.0, help="wrk's per-request timeout, seconds (default 5)")
    p.add_argument("--workers", default="1,2", help="worker counts (default 1,2)")
    p.add_argument("--servers", default="ceiling,pyrego", help="ceiling, pyrego or both (default)")
    p.add_argument("--policies", default="all", help="seed policies: all (default) or names (rbac,api_access,...)")
    p.add_argument("--log-level", default="warn", help="server log level, both servers (default warn: no access log)")
    p.add_argument("--pyrego-arg", action="append", default=[], help="extra argument to pyrego run (repeatable)")
    p.add_argument("--shared", default=os.environ.get("PYREGO_SHARED", str(ROOT.parent / "shared")), help="folder holding bench/seed")
    p.add_argument("--src", default=str(SRC), help="the pyrego sources the server runs (another checkout's src, to compare)")
    p.add_argument("--out", default=str(HERE / "results"), help="where server.json and server.md go ('' for none)")
    args = p.parse_args(argv)
    if shutil.which("wrk") is None:
        print("wrk is not installed", file=sys.stderr)
        return 2
    shared = Path(args.shared)
    if not (shared / "bench" / "seed").is_dir():
        shared = Path("/work/shared")
    workers = [int(w) for w in args.workers.split(",")]
    servers = [s for s in ("ceiling", "pyrego") if s in args.servers.split(",")]
    with tempfile.TemporaryDirectory(prefix="pyrego-server-bench-") as tmp:
        work = Path(tmp)
        requests, texts = prepare(shared, args.policies.split(","), work)
        expected = expected_results(requests, texts)
        (work / "bench.lua").write_text(LUA)
        (work / "requests.tsv").write_text("".join(f"{path}\t{json.dumps(body, separators=(',', ':'))}\n" for path, body in requests))
        print(
            f"{len(texts)} policies, {len(requests)} requests rotated; wrk -t1 -c{args.connections}, "
            f"{args.warmup:g} s warm-up, {args.duration:g} s measured; {os.cpu_count()} CPUs",
            flush=True,
        )
        runs: list[Run] = []
        for n in workers:
            for kind in servers:
                run = measure(kind, n, args, work, requests, expected)
                runs.append(run)
                print(f"  {kind} x{n}: {run.rps:,.0f} req/s, p50 {run.p50_ms:.2f} ms, p99 {run.p99_ms:.2f} ms, errors {run.error_count}", flush=True)
    text = table(runs)
    print(text)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        meta = {
            "policies": sorted(texts),
            "requests": len(requests),
            "connections": args.connections,
            "warmup_s": args.warmup,
            "duration_s": args.duration,
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "src": args.src,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        doc = {"meta": meta, "runs": [asdict(r) | {"errors_total": r.error_count} for r in runs]}
        (out / "server.json").write_text(json.dumps(doc, indent=2) + "\n")
        (out / "server.md").write_text(
            f"# Policy server under load\n\n`python benchmarks/server.py` ({meta['time']}): {len(texts)} seed policies, "
            f"{len(requests)} requests rotated, wrk 1 thread {args.connections} connections, {args.warmup:g} s warm-up, "
            f"{args.duration:g} s measured, {meta['cpus']} CPUs shared with wrk. Ratio: pyrego / ceiling "
            f"(hello-world JSON on Starlette + uvicorn, same workers). Server CPU: cores its processes used on average; req per CPU-s: requests per second of the server's CPU time (and its ratio to the ceiling's), the figure a busy machine disturbs least.\n\n{text}\n"
        )
    return 1 if any(r.error_count for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
