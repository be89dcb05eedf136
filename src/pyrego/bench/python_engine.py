"""The ``python`` engine of ``pyrego bench``: the hand-written seed policies
(:mod:`.handwritten`) behind the bench's adapter interface."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyrego import UNDEFINED
from pyrego.bench.adapter_base import UNDEFINED_MARK, Adapter, EngineUnavailable, Evaluator, Prepared
from pyrego.bench.handwritten import HANDWRITTEN
from pyrego.bench.workloads import SEED_QUERY, PolicySet


class _PythonPrepared(Prepared):
    """A hand-written decision function (:mod:`pyrego.bench.handwritten`) standing in for a prepared engine."""

    def __init__(self, name: str, fn: Callable[[Any], Any]) -> None:
        self.name = name
        self.fn = fn
        self._input: Any = None

    def set_input(self, value: Any) -> None:
        self._input = value

    def set_input_json(self, text: str) -> None:
        self._input = json.loads(text)

    def _check(self, query: str) -> None:
        if query != SEED_QUERY:
            raise EngineUnavailable(f"the hand-written {self.name} answers {SEED_QUERY} only, not {query}")

    def eval(self, query: str) -> Any:
        self._check(query)
        return _python_value(self.fn(self._input))

    def add_data(self, data: Any) -> None:
        raise EngineUnavailable("hand-written policies take no data")

    def clone(self) -> Prepared:
        return _PythonPrepared(self.name, self.fn)

    def evaluator(self, query: str, json_input: bool) -> Evaluator:
        self._check(query)
        fn = self.fn
        undef = UNDEFINED
        mark = UNDEFINED_MARK
        if json_input:
            loads = json.loads

            def run_json(text: Any) -> Any:
                v = fn(loads(text))
                return mark if v is undef else v

            return run_json

        def run(value: Any) -> Any:
            v = fn(value)
            return mark if v is undef else v

        return run


def _python_value(v: Any) -> Any:
    return UNDEFINED_MARK if v is UNDEFINED else v


class PythonAdapter(Adapter):
    """The seed policies written by hand in Python (:mod:`pyrego.bench.handwritten`): the baseline to beat."""

    name = "python"
    title = "hand-written Python"
    supports_v0 = False
    workloads = ("seed", "allow")
    engine_uses = ("prepared",)
    notes = (
        "Not a Rego engine: the 9 seed policies written by hand as plain Python functions over the input "
        "(pyrego.bench.handwritten), exact on any JSON input (tests/test_bench_handwritten.py compares them with "
        "pyrego on mutated inputs). Runs the seed and allow workloads with prepared 'engines' only; JSON text is "
        "parsed with json.loads.",
    )

    def available(self) -> str | None:
        return None

    def version(self) -> str:
        import platform

        return f"Python {platform.python_version()}"

    def prepare(self, ps: PolicySet, modules: list[tuple[str, str]] | None = None) -> Prepared:
        fn = HANDWRITTEN.get(ps.name)
        if fn is None or ps.v0 or ps.data is not None:
            raise EngineUnavailable(f"no hand-written version of policy set {ps.name!r}")
        return _PythonPrepared(ps.name, fn)

    def fresh_evaluator(self, ps: PolicySet, query: str, json_input: bool, cold: bool) -> Evaluator:
        raise EngineUnavailable("hand-written policies have no engine to create afresh")


