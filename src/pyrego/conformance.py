"""Runner for OPA's conformance cases.

OPA keeps its evaluation test cases as YAML files (``v1/test/cases/testdata/v1``
in the OPA repository; a copy lives in ``../shared/opa-conformance/v1``). Each
file holds a ``cases:`` list; a case has ``note``, ``modules``, ``data``,
``input`` or ``input_term``, ``query`` and what to expect: ``want_result`` (a
list of binding objects), ``want_error_code`` and/or ``want_error``, with the
flags ``sort_bindings`` and ``strict_error``.

This module evaluates the cases the way OPA's own harness does
(``topdown_test.go``'s ``testRun``):

- module ``i`` is added as file ``test-<i>.rego``;
- ``data`` (absent means ``{}``) is loaded as the base document, ``input_term``
  (Rego term text) wins over ``input`` (a JSON value);
- builtin errors are strict when the case sets ``strict_error``;
- ``want_error`` must be a substring of the error text, ``want_error_code``
  must equal the error's code; an error nobody asked for fails the case;
- results are compared as *sets* of binding objects in JSON form (OPA builds
  ``ast.Set`` values for both sides, so order and duplicates do not matter);
  numbers compare by value (``1 == 1.0``); with ``sort_bindings`` each array
  bound in a result is sorted first.

Command line::

    python -m pyrego.conformance [FOLDER ...] [--root DIR] [--verbose]
                                 [--write-known-failures FILE] [--timeout S]

prints ``<folder>: N passed, M failed`` per folder, then the figure for the
language folders (:data:`LANGUAGE_FOLDERS`) and the total.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyrego.yaml_safe import load_yaml

#: Folders that test the language itself (syntax and evaluation semantics:
#: rules, references, unification, comprehensions, ``with``, ``else``,
#: ``default``, functions, conflicts, undefinedness ...) rather than one
#: builtin or one family of builtins. ``aggregates``, ``sets`` and ``type``
#: are builtin families (``count``/``sum``/..., ``intersection``/``union``,
#: ``is_*``/``type_name``) and are not in the list. ``planner-ir`` holds
#: language regressions found by OPA's planner (unification, call-dynamic,
#: ref heads), so it is.
LANGUAGE_FOLDERS: frozenset[str] = frozenset(
    {
        "arithmetic",
        "assignments",
        "baseandvirtualdocs",
        "comparisonexpr",
        "completedoc",
        "compositebasedereference",
        "compositereferences",
        "comprehensions",
        "dataderef",
        "defaultkeyword",
        "disjunction",
        "elsekeyword",
        "eqexpr",
        "evaltermexpr",
        "example",
        "functionerrors",
        "functions",
        "helloworld",
        "indexing",
        "indirectreferences",
        "inputvalues",
        "invalidkeyerror",
        "negation",
        "nestedreferences",
        "partialdocconstants",
        "partialobjectdoc",
        "partialsetdoc",
        "planner-ir",
        "refheads",
        "undos",
        "varreferences",
        "virtualdocs",
        "withkeyword",
    }
)

DEFAULT_TIMEOUT = 10.0


# ---------------------------------------------------------------- locating the cases


def find_shared_dir(start: Path | None = None) -> Path | None:
    """The shared folder: ``$PYREGO_SHARED``, else ``../shared`` beside the repository.

    The repository root is found from ``start`` (default: the current
    directory) and from this file's location, walking up to a folder with a
    ``pyproject.toml``.
    """
    env = os.environ.get("PYREGO_SHARED")
    if env:
        p = Path(env)
        return p if p.is_dir() else None
    candidates: list[Path] = []
    for base in (start or Path.cwd(), Path(__file__).resolve().parent):
        for d in (base, *base.parents):
            if (d / "pyproject.toml").is_file():
                candidates.append(d.parent / "shared")
                candidates.append(d / "shared")
                break
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    return None


def default_root() -> Path | None:
    """The conformance root (``<shared>/opa-conformance/v1``), or None when absent."""
    shared = find_shared_dir()
    if shared is None:
        return None
    root = shared / "opa-conformance" / "v1"
    return root if root.is_dir() else None


# ---------------------------------------------------------------- cases


@dataclass
class Case:
    """One conformance case."""

    id: str
    folder: str
    file: str
    note: str
    query: str
    modules: list[str] = field(default_factory=list)
    data: Any = None
    input: Any = None
    input_given: bool = False
    input_term: str | None = None
    want_result: list[dict[str, Any]] | None = None
    want_error_code: str | None = None
    want_error: str | None = None
    sort_bindings: bool = False
    strict_error: bool = False
    skip: bool = False

    @property
    def has_input(self) -> bool:
        """Whether the case sets an input document (``input`` or ``input_term``)."""
        return self.input_term is not None or self.input_given


def case_id(folder: str, note: str) -> str:
    """``folder/note`` (the note alone when it already starts with ``folder/``)."""
    return note if note.startswith(folder + "/") else f"{folder}/{note}"


def list_folders(root: Path) -> list[str]:
    """The case folders under ``root``, sorted."""
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def iter_cases(root: Path | None = None, folders: Iterable[str] | None = None) -> Iterator[Case]:
    """Yield every case under ``root`` (default :func:`default_root`), in a stable order.

    Folders and files are visited in sorted order, cases in file order. A
    note that occurs more than once gets `` (#2)``, `` (#3)``... appended to
    its id so that every id is unique.
    """
    if root is None:
        root = default_root()
        if root is None:
            raise FileNotFoundError("OPA conformance cases not found (set PYREGO_SHARED or pass a root)")
    wanted = list(folders) if folders else list_folders(root)
    seen: dict[str, int] = {}
    for folder in wanted:
        fdir = root / folder
        if not fdir.is_dir():
            raise FileNotFoundError(f"no such conformance folder: {fdir}")
        for path in sorted(fdir.rglob("*")):
            if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
                continue
            doc = load_yaml(path.read_text(encoding="utf-8")) or {}
            for raw in doc.get("cases") or []:
                note = str(raw.get("note", ""))
                cid = case_id(folder, note)
                n = seen.get(cid, 0) + 1
                seen[cid] = n
                if n > 1:
                    cid = f"{cid} (#{n})"
                yield _make_case(cid, folder, path, raw)


def _make_case(cid: str, folder: str, path: Path, raw: dict[str, Any]) -> Case:
    # OPA reads ``input`` into a pointer: a missing key and ``input: null`` both mean no input.
    given = raw.get("input") is not None
    return Case(
        id=cid,
        folder=folder,
        file=str(path),
        note=str(raw.get("note", "")),
        query=str(raw.get("query", "")),
        modules=[str(m) for m in raw.get("modules") or []],
        data=raw.get("data"),
        input=raw.get("input"),
        input_given=given,
        input_term=raw.get("input_term"),
        want_result=raw.get("want_result"),
        want_error_code=raw.get("want_error_code"),
        want_error=raw.get("want_error"),
        sort_bindings=bool(raw.get("sort_bindings", False)),
        strict_error=bool(raw.get("strict_error", False)),
        skip=bool(raw.get("skip", False)),
    )


# ---------------------------------------------------------------- comparing results


def canonical(value: Any) -> Any:
    """A hashable form of a JSON value in which equal Rego values are equal.

    Numbers compare by value (``1 == 1.0``) and are never equal to booleans;
    objects and arrays keep their structure.
    """
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float, Decimal)):
        return ("num", _num(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, (list, tuple)):
        return ("arr", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("obj", frozenset((str(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(canonical(v) for v in value))
    return ("other", repr(value))


def _num(x: int | float | Decimal) -> Decimal:
    d = x if isinstance(x, Decimal) else Decimal(x) if isinstance(x, int) else Decimal(repr(x))
    return d.normalize() if d.is_finite() else d


_TYPE_RANK = {"null": 0, "bool": 1, "num": 2, "str": 3, "arr": 4, "obj": 5, "set": 6, "other": 7}


def json_sort_key(value: Any) -> Any:
    """A sort key giving OPA's order of JSON values (null < bool < number < string < array < object)."""
    return _canon_key(canonical(value))


def _canon_key(c: Any) -> Any:
    tag = c[0]
    rank = _TYPE_RANK[tag]
    if tag == "null":
        return (rank,)
    if tag in ("bool", "num", "str", "other"):
        return (rank, c[1])
    if tag == "arr":
        return (rank, tuple(_canon_key(x) for x in c[1]))
    if tag == "obj":
        return (rank, tuple(sorted((k, _canon_key(v)) for k, v in c[1])))
    return (rank, tuple(sorted(_canon_key(x) for x in c[1])))


def _binding_sets(bindings: Iterable[dict[str, Any]], sort_arrays: bool) -> frozenset[Any]:
    out = set()
    for b in bindings:
        items = []
        for k, v in b.items():
            if sort_arrays and isinstance(v, list):
                v = sorted(v, key=json_sort_key)
            items.append((k, canonical(v)))
        out.add(frozenset(items))
    return frozenset(out)


def results_equal(want: list[dict[str, Any]], got: list[dict[str, Any]], sort_bindings: bool = False) -> bool:
    """Compare result sets as OPA's harness does: as sets of binding objects.

    With ``sort_bindings`` every array bound in ``got`` is sorted first (the
    expected side is written sorted).
    """
    return _binding_sets(want, False) == _binding_sets(got, sort_bindings)


# ---------------------------------------------------------------- running one case


class CaseTimeout(BaseException):
    """Raised inside a case that runs past its time limit (a BaseException so
    that no ``except Exception`` in evaluated code can swallow it)."""


def _short_json(value: Any, limit: int = 600) -> str:
    from pyrego.runtime.convert import dumps

    try:
        text = dumps(value)
    except Exception:  # noqa: BLE001 - only for messages
        text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _error_text(err: Any) -> str:
    where = f" (at {err.location})" if err.location is not None else ""
    return f"{err.code}: {err.message}{where}"


def _evaluate(case: Case) -> list[dict[str, Any]]:
    """Set up an engine for ``case`` and return its result bindings (errors propagate)."""
    from pyrego.engine import Engine

    engine = Engine()
    engine.set_strict_builtin_errors(case.strict_error)
    # Data first, then every module in one compilation, as OPA loads a case.
    if case.data is not None:
        engine.add_data(case.data)
    engine.add_policies({f"test-{i}.rego": module for i, module in enumerate(case.modules)})
    if case.input_term is not None:
        engine.set_input_term(case.input_term)
    elif case.input_given:
        engine.set_input(case.input)
    res = engine.eval_query(case.query)
    return [dict(r.get("bindings") or {}) for r in res.get("result") or []]


def _check(case: Case, got: list[dict[str, Any]] | None, err: BaseException | None) -> tuple[bool, str]:
    from pyrego.errors import RegoError

    if case.want_result is None and case.want_error_code is None and case.want_error is None:
        return False, "case has none of want_result, want_error_code, want_error"
    if err is not None and not isinstance(err, RegoError):
        return False, f"crashed: {type(err).__name__}: {err}"
    if case.want_error is not None or case.want_error_code is not None:
        if err is None:
            want = case.want_error_code or repr(case.want_error)
            return False, f"expected error {want} but got result {_short_json(got)}"
        assert isinstance(err, RegoError)
        if case.want_error_code is not None and err.code != case.want_error_code:
            return False, f"expected error code {case.want_error_code} but got {_error_text(err)}"
        if case.want_error is not None:
            texts = [str(err), f"{err.code}: {err.message}"]
            if err.location is not None:
                # OPA's text for an evaluation error: "file:row: code: message"
                texts.append(f"{err.location.file}:{err.location.row}: {err.code}: {err.message}")
            if not any(case.want_error in t for t in texts):
                return False, f"expected error text {case.want_error!r} but got {_error_text(err)}"
        return True, f"raised {err.code} as expected"
    if err is not None:
        assert isinstance(err, RegoError)
        return False, f"unexpected error {_error_text(err)}"
    assert got is not None and case.want_result is not None
    if results_equal(case.want_result, got, case.sort_bindings):
        return True, "result matches"
    return False, f"wrong result: want {_short_json(case.want_result)} got {_short_json(got)}"


def run_case(case: Case, timeout: float = DEFAULT_TIMEOUT) -> tuple[bool, str]:
    """Run one case; return ``(passed, detail)``.

    The case runs under a time limit (``SIGALRM`` when called from the main
    thread on a platform that has it, otherwise a watchdog thread); a case
    that runs past it fails with a ``timeout`` detail. Exceptions other than
    :class:`pyrego.RegoError` count as failures (``crashed: ...``).
    """
    if case.skip:
        return False, "skipped by the case file"
    got: list[dict[str, Any]] | None = None
    err: BaseException | None = None
    try:
        got = run_with_timeout(lambda: _evaluate(case), timeout)
    except CaseTimeout:
        return False, f"timeout after {timeout:g}s"
    except RecursionError as exc:
        err = exc
    except Exception as exc:  # noqa: BLE001 - classified in _check
        err = exc
    return _check(case, got, err)


def run_with_timeout(fn: Any, timeout: float) -> Any:
    """Call ``fn()`` and return its result; raise :class:`CaseTimeout` after ``timeout`` seconds.

    Uses ``SIGALRM`` in the main thread (the call is interrupted), else a
    watchdog thread (the call is abandoned, still running, in a daemon thread).
    """
    use_signal = (
        timeout > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not use_signal:
        return _with_thread_timeout(fn, timeout)

    def on_alarm(signum: int, frame: Any) -> None:
        raise CaseTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _with_thread_timeout(fn: Any, timeout: float) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout if timeout > 0 else None)
    if t.is_alive():
        raise CaseTimeout()
    if "error" in box:
        raise box["error"]
    return box.get("value")


# ---------------------------------------------------------------- known failures


def read_known_failures(path: Path) -> dict[str, str]:
    """Read a known-failures file: one case id a line, ``  # reason`` after it."""
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cid, sep, reason = line.partition("  # ")
        out[cid.rstrip()] = reason.strip() if sep else ""
    return out


def write_known_failures(path: Path, failures: Sequence[tuple[str, str]], header: str | None = None) -> None:
    """Write ``(case id, detail)`` pairs as a known-failures file (reasons on one line, shortened).

    A case already listed in ``path`` keeps the reason written there (so a
    reason edited by hand survives regeneration); new cases get ``detail``.
    """
    previous = read_known_failures(path)
    lines = [
        "# " + (header or "OPA conformance cases pyrego is known to fail; regenerate with: "
                "python -m pyrego.conformance --runs 3 --write-known-failures tests/conformance_known_failures.txt"),
        "# One case id a line, the reason after '  # '.",
    ]
    for cid, detail in sorted(failures):
        reason = previous.get(cid) or " ".join(detail.split())
        if len(reason) > 200:
            reason = reason[:197] + "..."
        lines.append(f"{cid}  # {reason}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- command line


@dataclass
class Tally:
    """Pass/fail counts."""

    passed: int = 0
    failed: int = 0

    def __str__(self) -> str:
        return f"{self.passed} passed, {self.failed} failed"


def _run_one(args: tuple[Case, float]) -> tuple[str, str, bool, str, float]:
    case, timeout = args
    start = time.perf_counter()
    try:
        ok, detail = run_case(case, timeout)
    except BaseException as exc:  # noqa: BLE001 - a runner must not die on one case
        ok, detail = False, f"runner error: {type(exc).__name__}: {exc}"
        traceback.print_exc()
    return case.id, case.folder, ok, detail, time.perf_counter() - start


Outcome = tuple[str, str, bool, str, float]


def _run_all(cases: list[Case], timeout: float, jobs: int) -> list[Outcome]:
    work = [(c, timeout) for c in cases]
    if jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=50) as pool:
            return pool.map(_run_one, work, chunksize=4)
    return [_run_one(w) for w in work]


def _run_with_hash_seeds(ns: argparse.Namespace, root: Path) -> list[Outcome]:
    """Run the cases once per ``PYTHONHASHSEED`` in 0..runs-1 (subprocesses);
    a case passes only when it passes in every run."""
    import json
    import subprocess
    import tempfile

    merged: dict[str, Outcome] = {}
    order: list[str] = []
    flaky: set[str] = set()
    for seed in range(ns.runs):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "outcomes.json"
            cmd = [sys.executable, "-m", "pyrego.conformance", *ns.folders, "--root", str(root),
                   "--timeout", str(ns.timeout), "-j", str(ns.jobs), "--json-outcomes", str(out)]
            env = dict(os.environ, PYTHONHASHSEED=str(seed))
            subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
            rows = json.loads(out.read_text())
        for cid, folder, ok, detail, secs in rows:
            if cid not in merged:
                merged[cid] = (cid, folder, ok, detail, secs)
                order.append(cid)
                continue
            if merged[cid][2] != ok:
                flaky.add(cid)
            if not ok and merged[cid][2]:
                merged[cid] = (cid, folder, ok, f"fails with some hash seeds: {detail}", secs)
    if flaky:
        print(f"{len(flaky)} cases pass or fail depending on PYTHONHASHSEED: {', '.join(sorted(flaky))}")
    return [merged[cid] for cid in order]


def main(argv: Sequence[str] | None = None) -> int:
    """Run conformance cases and print per-folder and total figures; exit status 0."""
    ap = argparse.ArgumentParser(prog="python -m pyrego.conformance", description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="*", help="case folders to run (default: all)")
    ap.add_argument("--root", type=Path, help="folder holding the case folders (default: <shared>/opa-conformance/v1)")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every failing case with its detail")
    ap.add_argument("--write-known-failures", type=Path, metavar="FILE", help="write the failing case ids to FILE")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case (default 10)")
    ap.add_argument("--jobs", "-j", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--runs", type=int, default=1,
                    help="run N times with PYTHONHASHSEED=0..N-1; a case passes only if it passes every time")
    ap.add_argument("--json-outcomes", type=Path, help=argparse.SUPPRESS)
    ns = ap.parse_args(argv)

    root = ns.root or default_root()
    if root is None or not root.is_dir():
        print("conformance cases not found: pass --root or set PYREGO_SHARED", file=sys.stderr)
        return 2
    try:
        cases = list(iter_cases(root, ns.folders or None))
    except FileNotFoundError as exc:
        print(str(exc), file=sys.stderr)
        return 2

    if ns.runs > 1:
        outcomes = _run_with_hash_seeds(ns, root)
    else:
        outcomes = _run_all(cases, ns.timeout, ns.jobs)
    if ns.json_outcomes is not None:
        import json

        ns.json_outcomes.write_text(json.dumps(outcomes))

    per_folder: dict[str, Tally] = {}
    failures: list[tuple[str, str]] = []
    for cid, folder, ok, detail, _secs in outcomes:
        tally = per_folder.setdefault(folder, Tally())
        if ok:
            tally.passed += 1
        else:
            tally.failed += 1
            failures.append((cid, detail))
            if ns.verbose:
                print(f"FAIL {cid}: {detail}")

    lang, total = Tally(), Tally()
    for folder in sorted(per_folder):
        t = per_folder[folder]
        print(f"{folder}: {t}")
        total.passed += t.passed
        total.failed += t.failed
        if folder in LANGUAGE_FOLDERS:
            lang.passed += t.passed
            lang.failed += t.failed
    print(f"language folders: {lang}")
    print(f"total: {total}")
    if ns.write_known_failures is not None:
        write_known_failures(ns.write_known_failures, failures)
        print(f"wrote {len(failures)} known failures to {ns.write_known_failures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
