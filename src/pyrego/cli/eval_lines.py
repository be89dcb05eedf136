"""``pyrego eval --input-lines FILE|-``: one input document per line, one result per line.

Each output line is OPA's Data API response for that line's input
(``{"result": ...}``, ``{}`` when undefined) or ``{"error": {"code": ...,
"message": ...}}`` for a line that failed or is not JSON (see
:mod:`pyrego.batch.lines`); every line is evaluated whatever the others do.
The exit status is 2 when any line failed (as ``opa eval`` exits on an
error), else 0 (1 with ``--fail`` when some line is undefined, or with
``--fail-defined`` when some line is defined).

A progress bar is drawn on stderr when stderr is a terminal and the results
go to a file or a pipe (never into the results, never in CI logs).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from typing import IO, Any, TextIO

from pyrego.cli.output import UsageError


def check_arguments(ns: argparse.Namespace) -> None:
    """Refuse options that do not go with ``--input-lines``."""
    if ns.input is not None or ns.stdin_input:
        raise UsageError("specify --input-lines or --input/--stdin-input, not both")
    if ns.partial:
        raise UsageError("--input-lines does not go with --partial")
    if ns.input_lines == "-" and ns.stdin:
        raise UsageError("specify --stdin or --input-lines -, not both")
    if ns.processes is not None and ns.processes < 1:
        raise UsageError("--processes must be at least 1")


def _lines(stream: IO[bytes], progress: Any, task: Any) -> Iterator[bytes]:
    for line in stream:
        if progress is not None:
            progress.advance(task, len(line))
        yield line


def _progress(err: TextIO, out: TextIO, total: int | None) -> Any:
    """A rich progress bar on ``err`` when it is a terminal and ``out`` is not (else None)."""
    try:
        if not (err.isatty() and not out.isatty()):
            return None
    except (AttributeError, ValueError):
        return None
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn, TransferSpeedColumn

    columns = [TextColumn("evaluating"), BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeElapsedColumn()]
    return Progress(*columns, console=Console(file=err), transient=True)


def run_input_lines(engine: Any, query: str, ns: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Evaluate the rule ``query`` for each line of ``ns.input_lines``; print one line each."""
    from pyrego.batch import eval_lines

    source = ns.input_lines
    if source == "-":
        stream: IO[bytes] = sys.stdin.buffer
        total = None
    else:
        try:
            stream = open(source, "rb")  # noqa: SIM115 - closed below
            total = os.fstat(stream.fileno()).st_size
        except OSError as exc:
            print(f"open {source}: {exc.strerror or exc}", file=err)
            return 2
    progress = _progress(err, out, total)
    failed = undefined = defined = 0
    try:
        task = progress.add_task("eval", total=total) if progress is not None else None
        if progress is not None:
            progress.start()
        results = eval_lines(engine, query.strip(), _lines(stream, progress, task), processes=ns.processes)
        write = out.write
        for ok, text in results:
            write(text)
            write("\n")
            if not ok:
                failed += 1
            elif text == "{}":
                undefined += 1
            else:
                defined += 1
        out.flush()
    finally:
        if progress is not None:
            progress.stop()
        if stream is not sys.stdin.buffer:
            stream.close()
    if failed:
        return 2
    if ns.fail and (undefined or not defined):
        return 1
    if ns.fail_defined and defined:
        return 1
    return 0


__all__ = ["check_arguments", "run_input_lines"]
