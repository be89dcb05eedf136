"""How long pyrego takes to start: each row a new process, best of N runs.

Rows (the interpreter's own start, ``python -c pass``, is measured the same
way, shown, and subtracted in the "pyrego's part" column):

- ``import pyrego``;
- ``from pyrego import Engine``;
- ``pyrego version`` (the console script next to this interpreter, if any)
  and ``python -m pyrego version``;
- ``pyrego eval -d p.rego data.p.allow`` on a one-rule policy, with a warm
  code cache (a second run on the same cache directory) and with
  ``--no-cache``.

The modules come from this checkout's ``src`` (``PYTHONPATH`` is set to it),
with their bytecode caches written as an installed package has them
(``PYTHONDONTWRITEBYTECODE`` is dropped, and each row runs once unmeasured
first): without them every run would compile the modules it imports.
Wall-clock times on a shared machine vary: the best of N is the figure least
disturbed by other work. ``--importtime K`` adds the K slowest imports of
``python -X importtime`` for ``import pyrego``, ``from pyrego import Engine``
and ``pyrego version``; ``--instructions`` counts each row's instructions
with valgrind (callgrind), which the machine's load does not move.

    python benchmarks/startup.py [-n RUNS] [--importtime K] [--instructions] [--src DIR]

(``--src`` measures another checkout's ``src``, e.g. to compare with a branch.)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
POLICY = "package p\n\nallow if input.user == \"admin\"\n"


def _env(cache: str, src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(src) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYREGO_CACHE_DIR"] = cache
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def best_of(argv: list[str], runs: int, env: dict[str, str], cwd: str) -> tuple[float, float]:
    """The shortest wall-clock time and the shortest CPU time (user + system)
    of ``runs`` runs of ``argv``, in milliseconds. (CPU time moves less than
    wall-clock time when other work shares the machine.)"""
    subprocess.run(argv, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best = cpu = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        best = min(best, time.perf_counter() - start)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise subprocess.CalledProcessError(proc.returncode, argv)
        cpu = min(cpu, usage.ru_utime + usage.ru_stime)
    return best * 1000, cpu * 1000


def importtime(argv: list[str], env: dict[str, str], cwd: str, top: int) -> list[tuple[int, str]]:
    """The ``top`` imports of largest cumulative time (microseconds, module)."""
    out = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    rows = []
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


def instructions(argv: list[str], env: dict[str, str], cwd: str) -> int:
    """Instructions one run of ``argv`` executes, counted by valgrind (callgrind):
    unlike times, the count does not move with the machine's load."""
    with tempfile.NamedTemporaryFile(prefix="pyrego-startup-callgrind.", delete=False) as f:
        out = f.name
    try:
        proc = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
            env=dict(env, PYTHONHASHSEED="0"),
            cwd=cwd,
            capture_output=True,
            text=True,
        )
        m = re.search(r"Collected : (\d+)", proc.stderr)
        if proc.returncode or m is None:
            raise SystemExit(f"valgrind failed on {argv}:\n{proc.stderr[-2000:]}")
        return int(m.group(1))
    finally:
        os.unlink(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", "--runs", type=int, default=5, help="runs per row (default 5)")
    ap.add_argument("--importtime", type=int, default=0, metavar="K", help="show the K slowest imports per path")
    ap.add_argument("--instructions", action="store_true", help="also count each row's instructions with valgrind")
    ap.add_argument("--src", type=Path, default=SRC, help="the pyrego sources to measure (default this checkout's)")
    ns = ap.parse_args(argv)
    py = sys.executable
    script = Path(py).with_name("pyrego")
    tmp = tempfile.mkdtemp(prefix="pyrego-startup-")
    try:
        Path(tmp, "p.rego").write_text(POLICY, encoding="utf-8")
        env = _env(os.path.join(tmp, "cache"), ns.src.resolve())
        rows: list[tuple[str, list[str]]] = [
            ("python -c pass", [py, "-c", "pass"]),
            ("import pyrego", [py, "-c", "import pyrego"]),
            ("from pyrego import Engine", [py, "-c", "from pyrego import Engine"]),
        ]
        if script.exists():
            rows.append(("pyrego version", [str(script), "version"]))
        rows.append(("python -m pyrego version", [py, "-m", "pyrego", "version"]))
        evaluate = ["eval", "-d", "p.rego", "-i", "input.json", "data.p.allow"]
        Path(tmp, "input.json").write_text('{"user": "admin"}', encoding="utf-8")
        eval_cmd = [str(script)] if script.exists() else [py, "-m", "pyrego"]
        subprocess.run([*eval_cmd, *evaluate], env=env, cwd=tmp, check=True, stdout=subprocess.DEVNULL)  # fills the cache
        rows.append(("pyrego eval (warm code cache)", [*eval_cmd, *evaluate]))
        rows.append(("pyrego eval --no-cache", [*eval_cmd, *evaluate[:1], "--no-cache", *evaluate[1:]]))
        results = [(label, best_of(cmd, ns.runs, env, tmp)) for label, cmd in rows]
        base, base_cpu = results[0][1]
        print(f"Best of {ns.runs} runs, Python {sys.version.split()[0]}; pyrego's part is the time less `python -c pass`.\n")
        print("| command | best (ms) | pyrego's part (ms) | best CPU (ms) | pyrego's part of CPU (ms) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for label, (ms, cpu) in results:
            part, cpu_part = ("—", "—") if label == "python -c pass" else (f"{ms - base:.0f}", f"{cpu - base_cpu:.0f}")
            print(f"| `{label}` | {ms:.0f} | {part} | {cpu:.0f} | {cpu_part} |")
        if ns.instructions:
            counts = [(label, instructions(cmd, env, tmp)) for label, cmd in rows]
            base_count = counts[0][1]
            print("\nInstructions per run (valgrind callgrind; millions):\n")
            print("| command | instructions (M) | pyrego's part (M) |")
            print("| --- | ---: | ---: |")
            for label, count in counts:
                part = "—" if label == "python -c pass" else f"{(count - base_count) / 1e6:.1f}"
                print(f"| `{label}` | {count / 1e6:.1f} | {part} |")
        if ns.importtime:
            for label, cmd in rows[1:4]:
                print(f"\n`{label}`: slowest imports (cumulative µs)\n")
                for us, module in importtime(cmd if cmd[0] == py else [py, "-m", "pyrego", "version"], env, tmp, ns.importtime):
                    print(f"    {us:>8}  {module}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
