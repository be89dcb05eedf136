"""Small programs with the answer OPA v1.20.2 gives, written down beside them.

A :class:`Case` is run by pyrego (:func:`check_pyrego`, in whichever execution
form the ``execution_form`` fixture set) and by OPA itself
(:func:`check_oracle`, with the ``oracle`` fixture), so a written answer is
both what pyrego must give and a checked fact about OPA.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable

import pyrego
from pyrego.conformance import canonical


@dataclass
class Case:
    id: str
    modules: dict[str, str]
    query: str
    want: Any  # the bindings of the query's one result, or "undefined", or an error code
    # (with ``many``: the list of every result's bindings, in any order)
    input: Any = None
    data: Any = None
    v0: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    # Text the error message holds (in pyrego and in OPA), for error cases.
    message: str | None = None
    # The query has any number of results: ``want`` lists their bindings.
    many: bool = False


def _results(bindings: list[Any]) -> list[Any]:
    """Results' bindings in a canonical order (OPA's order is not compared)."""
    return sorted((canonical(b) for b in bindings), key=repr)


def pyrego_answer(case: Case) -> Any:
    """The bindings of the query's one result, "undefined", or the error raised."""
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    engine.set_rego_v0(case.v0)
    try:
        if case.data is not None:
            engine.add_data(case.data)
        engine.add_policies(case.modules)
        if case.input is not None:
            engine.set_input(case.input)
        results = engine.eval_query(case.query)["result"]
    except pyrego.RegoError as err:
        return err
    if case.many:
        return _results([r.get("bindings") or {} for r in results])
    if not results:
        return "undefined"
    assert len(results) == 1
    return canonical(results[0]["bindings"])


def check_pyrego(case: Case) -> None:
    """pyrego gives the written answer (twice: the second evaluation may run
    code the first one made hot)."""
    want = case.want if isinstance(case.want, str) else _results(case.want) if case.many else canonical(case.want)
    for _ in range(2):
        got = pyrego_answer(case)
        if isinstance(got, pyrego.RegoError):
            assert got.code == want, str(got)
            if case.message is not None:
                assert case.message in str(got)
        else:
            assert got == want


def check_oracle(case: Case, oracle: Any) -> None:
    """OPA gives the written answer."""
    got = oracle.evaluate(case.modules, case.query, input=case.input, data=case.data)
    if got.is_error:
        assert case.want == got.error_code, got.error_message
        if case.message is not None:
            assert case.message in got.error_message
    elif case.many:
        assert not isinstance(case.want, str), f"OPA returned {got.bindings}"
        assert _results(got.bindings) == _results(case.want)
    elif not got.bindings:
        assert case.want == "undefined"
    else:
        assert len(got.bindings) == 1
        assert canonical(got.bindings[0]) == canonical(case.want)


def strict_answers(modules: dict[str, str], query: str, input: Any, *, strict: bool = True, data: Any = None) -> list[Any]:
    """Two evaluations' answers of ``query`` by one engine with strict builtin
    errors (or without, ``strict=False``), on ``data`` if given (bindings,
    canonical and sorted, or an error code): the second may run code the
    first made hot."""
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    if data is not None:
        engine.add_data(data)
    try:
        engine.add_policies(modules)
    except pyrego.RegoError as err:
        return [err.code] * 2
    out: list[Any] = []
    for _ in range(2):
        try:
            results = engine.eval_query(query, input=input)["result"] if input is not None else engine.eval_query(query)["result"]
            out.append(sorted([canonical(r["bindings"]) for r in results], key=repr))
        except pyrego.RegoError as err:
            out.append(err.code)
    return out


def generated_differences(
    oracle: Any, seeds: range, program: Callable[[random.Random], tuple[dict[str, str], Any, list[str]]], forms: tuple[str, ...]
) -> list[str]:
    """The generated programs (one per seed: modules, input, queries) whose
    answers differ from OPA's, each run in one of ``forms`` in turn."""
    from conftest import in_form

    failures = []
    for seed in seeds:
        modules, input, queries = program(random.Random(seed))
        form = forms[seed % len(forms)]
        for query in queries:
            want = oracle.evaluate(modules, query, input=input)
            expected = want.error_code if want.is_error else sorted([canonical(b) for b in want.bindings], key=repr)
            with in_form(form):
                got = strict_answers(modules, query, input)
            if any(g != expected for g in got):
                failures.append(f"seed {seed} ({form}) {query} input={input}\n{modules}\nOPA: {expected}\npyrego: {got}")
    return failures
