"""Instructions per cold engine, stage by stage, counted by valgrind (callgrind).

Wall-clock figures of a cold start move by tens of percent on a shared machine;
instruction counts do not. For each stage this runs the seed workload twice
under callgrind, with 0 and with 27 never-seen policy texts (a unique comment
appended), after the same warm-up, and reports the difference per engine:

    parse     pyrego.parse.parser.parse_module
    compile   + pyrego.compile.pipeline.compile_modules
    typecheck + OPA's type checker (compile_modules(type_check=True))
    codegen   + pyrego.codegen.generator.generate_program
    full      a whole fresh engine: Engine(), add_policy, set_input, eval_rule
              (adds Python's compile() of the code run, the GC, the evaluation)

Each figure is cumulative. Engines check types by default: the typecheck
stage shows the checker's cost over compile, and codegen and full include
it; with ``--no-type-check`` codegen and full are counted without it
(``Engine.set_type_check(False)``). Needs valgrind on PATH; takes a few
minutes.

    python benchmarks/cold_instructions.py [--shared DIR] [--no-type-check] [parse compile typecheck codegen full]
"""

from __future__ import annotations

import argparse
import compileall
import glob
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
STAGES = ("parse", "compile", "typecheck", "codegen", "full")
WARMUP = 9
MEASURED = 27


def run_stage(shared: Path, stage: str, count: int, type_check: bool = True) -> None:
    """The workload itself (run inside valgrind)."""
    sys.path.insert(0, str(REPO / "src"))
    import pyrego
    from pyrego.codegen.generator import generate_program
    from pyrego.compile.pipeline import compile_modules
    from pyrego.parse.parser import parse_module

    policies = sorted(glob.glob(str(shared / "bench" / "seed" / "policies" / "*.rego")))
    texts = [Path(p).read_text() for p in policies]
    inputs: list[Any] = []
    for p in policies:
        name = os.path.basename(p).replace("_policy.rego", "")
        inputs.append(json.loads((shared / "bench" / "seed" / "inputs" / f"{name}_input.json").read_text()))
    unique = itertools.count()

    def one(i: int) -> None:
        k = i % len(policies)
        text = texts[k] + f"\n# run {next(unique)}\n"
        if stage == "full":
            engine = pyrego.Engine()
            engine.set_type_check(type_check)
            engine.add_policy(policies[k], text)
            engine.set_input(inputs[k])
            engine.eval_rule("data.bench.allow")
            return
        module = parse_module(text, policies[k], rego_v1=True)
        if stage == "parse":
            return
        tree = compile_modules([module], type_check=stage == "typecheck" or (type_check and stage != "compile"))
        if stage in ("compile", "typecheck"):
            return
        generate_program(tree)

    for i in range(WARMUP):  # imports, builtin modules, regex compilation
        one(i)
    for i in range(count):
        one(i)


def instructions(shared: Path, stage: str, count: int, type_check: bool = True) -> subprocess.Popen[str]:
    out = f"/tmp/pyrego-callgrind.{os.getpid()}.{stage}.{count}"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__]
    cmd += ["--shared", str(shared), "--run", stage, str(count)] + ([] if type_check else ["--no-type-check"])
    env = dict(os.environ, PYTHONHASHSEED="0")
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)


def collected(proc: subprocess.Popen[str]) -> int:
    text = proc.communicate()[0]
    m = re.search(r"Collected : (\d+)", text)
    if m is None or proc.returncode != 0:
        raise SystemExit(f"valgrind failed:\n{text[-3000:]}")
    return int(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("PYREGO_SHARED", REPO.parent / "shared")))
    ap.add_argument("--no-type-check", dest="type_check", action="store_false", help="codegen and full without the type checker")
    ap.add_argument("--run", nargs=2, metavar=("STAGE", "COUNT"), help=argparse.SUPPRESS)
    ap.add_argument("stages", nargs="*", metavar="STAGE", help=f"any of {', '.join(STAGES)} (default: all)")
    args = ap.parse_args()
    unknown = [s for s in args.stages if s not in STAGES]
    if unknown:
        ap.error(f"unknown stage {unknown[0]!r}: choose from {', '.join(STAGES)}")
    args.stages = args.stages or list(STAGES)
    if args.run:
        run_stage(args.shared, args.run[0], int(args.run[1]), args.type_check)
        return
    # The two runs of a stage start at once: where a module's bytecode is not
    # cached yet (a fresh checkout, an edited file), one of them would compile
    # it and the other read what the first wrote, moving the difference by
    # up to half a million instructions either way. Compiled here first.
    compileall.compile_dir(str(REPO / "src"), quiet=1)
    previous = 0.0
    for stage in args.stages:
        base, measured = instructions(args.shared, stage, 0, args.type_check), instructions(args.shared, stage, MEASURED, args.type_check)
        per_engine = (collected(measured) - collected(base)) / MEASURED / 1e6
        print(f"{stage:9s} {per_engine:7.3f} M instructions per cold engine (+{per_engine - previous:.3f})", flush=True)
        if stage != "typecheck" or args.type_check:
            previous = per_engine  # (with --no-type-check, later stages build on compile, not on typecheck)


if __name__ == "__main__":
    main()
