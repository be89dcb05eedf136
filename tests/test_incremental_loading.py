"""Policies added file by file, in any order, removed and added again, into one
engine that evaluates between the steps: each state answers as an engine
given the same files at once, and the whole program as OPA does.

A repository is loaded one file at a time (a watcher, a bundle being
unpacked, an editor plugin); each file may use rules of files not yet added.
The random whole programs of :mod:`program_gen` (several packages and files,
imports, every rule kind) are loaded here in shuffled orders, with a file
removed and added back, and every query of the program is asked after every
step (an error is an answer too: a compile error while a file is missing is
what a fresh engine with those files says).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

import pyrego
from opa_oracle import Oracle
from program_gen import gen_program
from test_program_differential import Answer, _bindings_answer, _query_answer

PROGRAMS = 40
SEED = "pyrego-incremental-loading"


def _fresh_answer(modules: dict[str, str], data: Any, query: str, inp: Any) -> Answer:
    e = pyrego.Engine()
    e.set_strict_builtin_errors(True)
    e.add_data(data)
    try:
        e.add_policies(modules)
    except pyrego.RegoError as exc:
        return ("error", exc.code)
    return _query_answer(e, query, inp)


def test_file_by_file_in_any_order_answers_as_all_at_once(oracle: Oracle) -> None:
    r = random.Random(SEED)
    checked = 0
    for n in range(PROGRAMS):
        prog = gen_program(r)
        files = list(prog.modules)
        order = files[:]
        r.shuffle(order)
        victim = r.choice(files)
        steps = [("add", f) for f in order] + [("remove", victim), ("add", victim)]
        engine = pyrego.Engine()
        engine.set_strict_builtin_errors(True)
        engine.add_data(prog.data)
        loaded: dict[str, str] = {}
        for op, f in steps:
            try:
                if op == "add":
                    engine.add_policy(f, prog.modules[f])
                    loaded[f] = prog.modules[f]
                else:
                    engine.remove_policy(f)
                    del loaded[f]
            except pyrego.RegoError as exc:
                # A file refused on its own is refused by a fresh engine too.
                assert _fresh_answer({**loaded, f: prog.modules[f]}, prog.data, "x := 1", {})[0] == "error", (n, f, exc)
                continue
            for query, _path in prog.queries:
                for inp in prog.inputs[:2]:
                    got = _query_answer(engine, query, inp)
                    want = _fresh_answer(loaded, prog.data, query, inp)
                    assert got == want, (n, op, f, sorted(loaded), query, inp)
                    checked += 1
        # The whole program, loaded this way, answers as OPA (where the
        # random program is not one of the known differences).
        if sorted(loaded) == sorted(files):
            query, _ = prog.queries[0]
            res = oracle.evaluate(prog.modules, query, input=prog.inputs[0], data=prog.data)
            want = ("error", res.error_code) if res.is_error else _bindings_answer(res.bindings)
            got = _query_answer(engine, query, prog.inputs[0])
            if got != want and want[0] != "error" and got[0] != "error":
                pytest.fail(f"program {n}: {query}: OPA {want} != pyrego {got}")
    assert checked > 500
