"""Instructions per inventory document, part by part, counted by valgrind (callgrind).

Wall-clock figures move by up to 2x on a shared machine; instruction counts do
not. This runs itself under callgrind over ``--docs`` documents of the
generated inventory (written by ``benchmarks/distributed.py`` to ``--work``,
or generated here), after a warm-up, and reports per document:

    parse      pyrego's loads of the line
    evaluate   Engine.eval_rule(path, input=doc) of a parsed document
    write      dumps(from_python(value)) of the decision
    loop       the three, as benchmarks/distributed.py's loop runner does them
    regorus    set_input_json + eval_rule_as_json (and set_input_json alone)

Each part is delimited by a call of ``os.getppid``, before which callgrind
dumps its counts (``--dump-before=getppid``). Needs valgrind on PATH and the
regorus package; takes a minute or two.

    python benchmarks/inventory_instructions.py [--docs 300] [--path data.inventory.main.report]
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("parse", "evaluate", "write", "loop", "regorus: set_input_json", "regorus: set_input_json + eval_rule_as_json")


def measure(warm: list[str], lines: list[str], path: str) -> None:
    """The parts over ``lines`` (after ``warm``), each followed by os.getppid() (callgrind dumps before it)."""
    import regorus

    import pyrego
    from pyrego.distributed import PolicyPayload
    from pyrego.runtime.convert import dumps, from_python, loads

    payload = PolicyPayload.from_files([ROOT / "benchmarks" / "inventory"])
    engine = payload.build()
    for line in warm:  # (the code takes its fast form)
        try:
            engine.eval_rule(path, input=loads(line))
        except pyrego.RegoError:
            pass
    docs = [loads(line) for line in lines]
    values = []
    for doc in docs:
        try:
            values.append(engine.eval_rule(path, input=doc))
        except pyrego.RegoError:
            values.append(None)
    reg = regorus.Engine()
    for name, text in payload.policies:
        reg.add_policy(name, text)
    reg.set_input_json(lines[0])
    reg.eval_rule_as_json(path)
    gc.collect()
    gc.freeze()
    os.getppid()
    for line in lines:
        loads(line)
    os.getppid()
    for doc in docs:
        try:
            engine.eval_rule(path, input=doc)
        except pyrego.RegoError:
            pass
    os.getppid()
    for value in values:
        if value is not None:
            dumps(from_python(value))
    os.getppid()
    for line in lines:
        try:
            value = engine.eval_rule(path, input=loads(line))
        except pyrego.RegoError:
            continue
        zlib.crc32(dumps(from_python(value)).encode())
    os.getppid()
    for line in lines:
        reg.set_input_json(line)
    os.getppid()
    for line in lines:
        reg.set_input_json(line)
        try:
            reg.eval_rule_as_json(path)
        except RuntimeError:
            pass
    os.getppid()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--path", default="data.inventory.main.report")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", default=str(ROOT / ".cache" / "distributed-bench"))
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from pyrego.bench.inventory import json_lines

    data = Path(args.work) / f"inventory-{args.docs + 1000}-{args.seed}.jsonl"
    if not data.exists():
        data.parent.mkdir(parents=True, exist_ok=True)
        data.write_text("".join(json_lines(args.docs + 1000, args.seed)), encoding="utf-8")
    lines = data.read_text(encoding="utf-8").splitlines(True)
    if args.inside:
        measure(lines[:200], lines[1000 : 1000 + args.docs], args.path)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = [
            "valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
            sys.executable, __file__, "--inside", "--docs", str(args.docs), "--path", args.path,
            "--seed", str(args.seed), "--work", args.work,
        ]  # fmt: skip
        subprocess.run(cmd, check=True, capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT / "src")))
        counts = []
        for k in range(2, 2 + len(PARTS)):
            text = Path(f"{out}.{k}").read_text()
            m = re.search(r"^summary: (\d+)", text, re.M)
            assert m is not None, f"no summary in dump {k}"
            counts.append(int(m.group(1)))
    print(f"{args.path}, {args.docs} documents; instructions per document:")
    for name, n in zip(PARTS, counts, strict=True):
        print(f"  {name:48} {n / args.docs / 1000:9,.0f} k")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
