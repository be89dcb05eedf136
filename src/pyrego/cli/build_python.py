"""``pyrego build --target python -o OUT PATHS``: write a compiled policy artifact.

The policies and data under ``PATHS`` (files or folders, loaded as
``pyrego eval -d`` loads them) are compiled and written to ``OUT`` as one
Python source file (see :mod:`pyrego.artifact`), loaded later with
``pyrego.artifact.load_artifact(OUT)`` or imported as a module: no parsing,
checking or code generation at load. An ``OUT`` ending in ``.whl`` is a
wheel holding that file (``NAME-VERSION-py3-none-any.whl``, installed by
``pip install`` as module ``NAME``, or ``--module``: see
:mod:`pyrego.artifact.wheel`). Prints the rules the artifact holds.
Exit status 0, 1 when the policies do not compile or cannot be written as
an artifact, 2 for usage errors (a wheel name pip would not install).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``pyrego build --target python`` (``-o`` and the paths)."""
    parser.add_argument("-o", "--output", metavar="FILE", help="the artifact to write (a .py file is importable; NAME-VERSION-py3-none-any.whl: a wheel)")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="policy or data file, or folder (as pyrego eval -d)")
    parser.add_argument("--v0-compatible", action="store_true", help="parse policies with Rego v0 syntax")
    parser.add_argument("--module", metavar="NAME", help="with a .whl output: the module's name in the wheel (default: the wheel's NAME)")
    parser.add_argument("--strict-builtin-errors", action="store_true", help="builtin errors end evaluations (the artifact's default)")


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Write the artifact ``args.output`` from ``args.paths``; returns the exit status."""
    from pyrego.artifact.format import ArtifactError
    from pyrego.artifact.wheel import wheel_name, write_artifact_wheel
    from pyrego.artifact.write import write_artifact
    from pyrego.cli.eval_cmd import load_data_args
    from pyrego.cli.output import PlainError, format_errors
    from pyrego.engine import Engine
    from pyrego.errors import RegoError

    out = out or sys.stdout
    err = err or sys.stderr
    output = getattr(args, "output", None)
    paths: Sequence[str] = getattr(args, "paths", None) or []
    if not output or not paths:
        print("pyrego build --target python: need -o FILE and at least one PATH", file=err)
        return 2
    module = getattr(args, "module", None)
    wheel = output.endswith(".whl")
    if module is not None and not wheel:
        print("error: --module names the module in a wheel: it needs -o NAME-VERSION-py3-none-any.whl", file=err)
        return 2
    if wheel:
        try:  # before compiling: a name pip would refuse is a usage error
            wheel_name(output, module)
        except ArtifactError as exc:
            print(f"error: {exc.message}", file=err)
            return 2
    engine = Engine()
    engine.set_type_check(True)
    try:
        engine.set_rego_v0(bool(getattr(args, "v0_compatible", False)))
        engine.set_strict_builtin_errors(bool(getattr(args, "strict_builtin_errors", False)))
        load_data_args(engine, list(paths))
        meta = write_artifact_wheel(engine, output, module=module) if wheel else write_artifact(engine, output)
    except ArtifactError as exc:
        print(f"{output}: {exc.message}", file=err)
        return 1
    except (RegoError, PlainError) as exc:
        print(format_errors([exc], "pretty"), file=err)
        return 1
    except OSError as exc:
        print(f"{output}: {exc.strerror or exc}", file=err)
        return 1
    what = f" (module {meta['wheel']['module']})" if wheel else ""
    print(f"wrote {output}{what}: {len(meta['policies'])} policies, rules {', '.join(meta['rules']) or '(none)'}", file=out)
    return 0


__all__ = ["add_arguments", "run"]
