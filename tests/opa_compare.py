"""One program's outcome in OPA and in pyrego, for the tests that compare
minimal programs with OPA v1.20.2 (the value, undefined, or the error's code
and the first line of its message), and the comparison in every execution
form with strict builtin errors on and off (off: only where OPA raised no
error, since the oracle evaluates with strict builtin errors)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pyrego
from conftest import EXECUTION_FORMS, in_form
from pyrego.conformance import canonical

#: What OPA's messages start with before the first error's own text.
HEADER = re.compile(r"^(?:bundle activation failed: )?\d+ errors? occurred:[ \n]")

#: ("value", canonical value), ("undefined", None) or ("error", code), and the message's first line.
Outcome = tuple[tuple[str, Any], str]

#: No input given (``input`` is then undefined).
NO_INPUT: Any = object()


def opa_outcome(oracle: Any, module: str, ref: str, input: Any = NO_INPUT, prints: list[str] | None = None) -> Outcome:
    """``x := <ref>`` evaluated by OPA with ``module`` as ``p.rego``."""
    extra = {} if input is NO_INPUT else {"input": input}
    res = oracle.evaluate({"p.rego": module}, f"x := {ref}", prints=prints, **extra)
    if res.is_error:
        return ("error", res.error_code), HEADER.sub("", res.error_message or "").split("\n")[0]
    if not res.bindings:
        return ("undefined", None), ""
    return ("value", canonical(res.bindings[0]["x"])), ""


def pyrego_outcome(module: str, ref: str, input: Any = NO_INPUT, strict: bool = True, by_query: bool = False, engine: Any = None) -> Outcome:
    """``ref`` evaluated by ``engine`` (a new one by default) with ``module``
    as ``p.rego``: by ``eval_rule``, or by ``eval_query`` of ``x := <ref>``."""
    engine = engine or pyrego.Engine()
    engine.set_strict_builtin_errors(strict)
    try:
        engine.add_policy("p.rego", module)
        if input is not NO_INPUT:
            engine.set_input(input)
        if by_query:
            found = engine.eval_query(f"x := {ref}")["result"]
            value = found[0]["bindings"]["x"] if found else pyrego.UNDEFINED
        else:
            value = engine.eval_rule(ref)
    except pyrego.RegoError as exc:
        return ("error", exc.code), str(exc).split("\n")[0]
    if value is pyrego.UNDEFINED:
        return ("undefined", None), ""
    return ("value", canonical(pyrego.json_ready(value))), ""


def agree(
    oracle: Any,
    module: str,
    ref: str,
    input: Any = NO_INPUT,
    *,
    by_query: tuple[bool, ...] = (False,),
    opa_text: Callable[[str], str] | None = None,
) -> None:
    """pyrego's outcome is OPA's in every execution form, with strict builtin
    errors (and without them where OPA raised no error), by ``eval_rule``
    and, with ``by_query=(False, True)``, by ``eval_query`` too.
    ``opa_text``: one form for a message OPA words in ways that vary from
    process to process."""
    want = opa_outcome(oracle, module, ref, input)
    if opa_text is not None:
        want = want[0], opa_text(want[1])
    for form in EXECUTION_FORMS:
        for strict in (True, False):
            if not strict and want[0][0] == "error":
                continue
            for query in by_query:
                with in_form(form):
                    got = pyrego_outcome(module, ref, input, strict, query)
                assert got == want, f"{form}, strict={strict}, query={query}"
