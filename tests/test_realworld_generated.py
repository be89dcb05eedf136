"""Differences with OPA found on machine-written policies (checks of
infrastructure code in Rego v0 and v1, many of which do not compile) run on
inputs built from what they read; each case is a minimal program written
here, evaluated by OPA v1.20.2 and by pyrego in every execution form, with
strict builtin errors on and off (off: only where OPA raised no error),
comparing the value, undefined, or the error's code and message."""

from __future__ import annotations

from typing import Any

import pytest

import pyrego
from opa_compare import NO_INPUT, Outcome, agree, opa_outcome, pyrego_outcome
from pyrego.conformance import canonical


def _agree_both(oracle: Any, module: str, ref: str, input: Any = NO_INPUT) -> None:
    agree(oracle, module, ref, input, by_query=(False, True))


_P = "package p\n\nimport rego.v1\n\n"

# A call of a function a package does not define, by a name that is a
# keyword (a helper ``contains`` of a Rego v0 library, read from v1 code):
# OPA prints the name as it prints a ref, the keyword key in brackets.
UNDEFINED_FUNCTION_CASES = {
    "contains": "import data.q\n\nr if q.contains(1)\n",
    "as a value": "import data.q\n\nr := q.contains(1)\n",
    "negated": "import data.q\n\nr if not q.contains(1)\n",
    "in a comprehension": "import data.q\n\nr := [x | x := q.contains(1)]\n",
    "a keyword inside the name": "r if data.q.every.x(1)\n",
    "in": "import data.q\n\nr if q.in(1)\n",
    "null": "import data.q\n\nr if q.null(1)\n",
    "no keyword": "import data.q\n\nr if q.a.b(1)\n",
}


@pytest.mark.parametrize("name", list(UNDEFINED_FUNCTION_CASES))
def test_undefined_function_named_asopa_outcome(oracle: Any, name: str) -> None:
    _agree_both(oracle, _P + UNDEFINED_FUNCTION_CASES[name], "data.p.r")


# OPA iterates objects and sets in sorted order; pyrego iterates them in
# Python's order where that cannot show in a value. It shows in which of
# several errors comes first (a builtin given values of the wrong type in
# an input object whose keys are not in order, or in a set built from it),
# and in whether an error comes at all before a rule's first value. pyrego
# reported the error of the first member in its own order.
ERROR_ORDER_CASES = {
    "object values": ("r if {\n\tsome v in input\n\tregex.match(\"a\", v)\n}\n", {"b": 1, "a": None}),
    "object values by ref": ("r if regex.match(\"a\", input[_])\n", {"b": 1, "a": None}),
    "object keys": ("r if {\n\tsome k, _ in input\n\tupper(k)\n}\n", {"b": 1, "a": None}),
    "a partial set": ("r contains v if {\n\tsome v in input\n\tlower(v)\n}\n", {"b": 1, "a": None}),
    "a set from a comprehension": (
        "r if {\n\ts := {x | some x in input}\n\tsome y in s\n\tregex.match(\"a\", y)\n}\n",
        [1, None],
    ),
    "a set of objects": (
        "r if {\n\ts := {x | some x in input}\n\tsome y in s\n\tregex.match(\"a\", y.v)\n}\n",
        [{"v": 1}, {"v": None}],
    ),
    "a set rule": ("s contains x if some x in input\n\nr if regex.match(\"a\", s[_])\n", [1, None]),
    "a set from walk": (
        "r if {\n\ts := {x | walk(input, [_, x]); x.t == 1}\n\tsome y in s\n\tlower(y.v)\n}\n",
        [{"v": 1, "t": 1}, {"v": True, "t": 1}],
    ),
    "a value before the error": ("r if {\n\tsome v in input\n\tregex.match(\"a\", v)\n}\n", {"b": 1, "a": "a"}),
    "a function's argument": (
        "f(o) if {\n\tsome v in o\n\tstartswith(v, \"x\")\n}\n\nr if f(input)\n",
        {"z": ["x"], "y": 2},
    ),
}


@pytest.mark.parametrize("name", list(ERROR_ORDER_CASES))
def test_first_error_in_opa_iteration_order(oracle: Any, name: str) -> None:
    body, input = ERROR_ORDER_CASES[name]
    _agree_both(oracle, _P + body, "data.p.r", input)


def _batch_outcome(result: Any) -> Outcome:
    if result.error is not None:
        return ("error", result.error.code), str(result.error).split("\n")[0]
    if result.value is pyrego.UNDEFINED:
        return ("undefined", None), ""
    return ("value", canonical(pyrego.json_ready(result.value))), ""


@pytest.mark.parametrize("name", list(ERROR_ORDER_CASES))
def test_first_error_of_prepared_and_batched_rules_asopa_outcome(oracle: Any, execution_form: str, name: str) -> None:
    body, input = ERROR_ORDER_CASES[name]
    want = opa_outcome(oracle, _P + body, "data.p.r", input)
    engine = pyrego.Engine()
    engine.set_strict_builtin_errors(True)
    engine.add_policy("p.rego", _P + body)
    rule = engine.prepare_rule("data.p.r")
    for _ in range(3):  # (the first calls go through eval_rule, the later ones not)
        got = pyrego_outcome(_P + body, "data.p.r", input, True, False, _Prepared(rule))
        assert got == want
    batches = [list(engine.eval_many("data.p.r", [input] * n)) for n in (2, 40)]
    assert [_batch_outcome(r) for batch in batches for r in batch] == [want] * 42


class _Prepared:
    """An engine stand-in whose eval_rule calls a prepared rule."""

    def __init__(self, rule: Any) -> None:
        self.rule = rule
        self.input: Any = None

    def set_strict_builtin_errors(self, strict: bool) -> None:
        pass

    def add_policy(self, path: str, text: str) -> None:
        pass

    def set_input(self, input: Any) -> None:
        self.input = input

    def eval_rule(self, path: str) -> Any:
        return self.rule(self.input)


# The lines a failed evaluation printed are taken back when pyrego runs it
# again in OPA's order, which here reaches the rule's value first.
_PRINTS = """r if {
	some k, v in input
	print(k)
	regex.match("x", v)
}
"""


@pytest.mark.parametrize("by_query", [False, True])
def test_prints_of_an_evaluation_run_again_asopa_outcome(oracle: Any, execution_form: str, by_query: bool) -> None:
    input = {"c": 3, "b": 2, "a": "x"}
    opa_prints: list[str] = []
    want = opa_outcome(oracle, _P + _PRINTS, "data.p.r", input, opa_prints)
    engine = pyrego.Engine()
    got = pyrego_outcome(_P + _PRINTS, "data.p.r", input, True, by_query, engine)
    assert (got, engine.take_prints()) == (want, opa_prints)


# A ref with a scalar head (``"x"[_]``, ``1.a``) as a value after an
# object's first pair: OPA notes the error and reads on, so it reports the
# ref; only when the rest of the object does not read either is the error
# "non-terminated object". pyrego reported "non-terminated object" for all.
SCALAR_HEAD_REF_CASES = {
    "a second value": 'r := {"a": 1, "b": "x"[_]}\n',
    "a middle value": 'r := {"a": 1, "b": "x"[_], "c": 2}\n',
    "a number head": 'r := {"a": 1, "b": 2[_]}\n',
    "a null head, dotted": 'r := {"a": 1, "b": null.x}\n',
    "inside an array value": 'r := {"a": 1, "b": [1, "x".y]}\n',
    "in an operand": 'r := {"a": 1, "b": "x"[_] + 1}\n',
    "the rest does not read": 'r := {"a": 1, "b": "x"[_], "c" 2}\n',
    "a number then a dot": 'r := {"a": 1, "b": 1.a}\n',
    "the first value": 'r := {"b": "x"[_]}\n',
}


@pytest.mark.parametrize("name", list(SCALAR_HEAD_REF_CASES))
def test_scalar_head_ref_in_object_asopa_outcome(oracle: Any, name: str) -> None:
    _agree_both(oracle, _P + SCALAR_HEAD_REF_CASES[name], "data.p.r")


# A program with a recursive function and an unsafe variable (elsewhere or
# in the recursive rule): OPA checks the safety of bodies a stage before
# recursion and reports the variable; pyrego reported the recursion.
UNSAFE_AND_RECURSIVE_CASES = {
    "in another rule": "f(x) := y if y := f(x)\n\nr if {\n\tcount(a) > 1\n}\n",
    "in the recursive function": "f(x) := y if {\n\ty := f(x)\n\tz == 1\n}\n",
    "a set rule on the cycle": "s contains x if {\n\tsome x in s\n}\n\nr if {\n\tu > 1\n}\n",
    "only recursion": "f(x) := y if y := f(x)\n\nr := 1\n",
}


@pytest.mark.parametrize("name", list(UNSAFE_AND_RECURSIVE_CASES))
def test_unsafe_variable_before_recursion_asopa_outcome(oracle: Any, name: str) -> None:
    _agree_both(oracle, _P + UNSAFE_AND_RECURSIVE_CASES[name], "data.p")


# The run in OPA's order after a failure is the same query: http.send's
# request is not sent again (nor time.now_ns() taken again).
_REPLAY_SENDS = """r if {
	resp := http.send({"method": "GET", "url": input.url})
	some v in input.obj
	startswith(v, "a")
}
"""


@pytest.mark.parametrize("by_query", [False, True])
def test_run_again_sends_no_request_twice(oracle: Any, execution_form: str, by_query: bool) -> None:
    import http.server
    import threading

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        # Python's order meets 1 first (a type error); OPA's sorted order "abc".
        input = {"url": f"http://127.0.0.1:{server.server_port}/x", "obj": {"b": 1, "a": "abc"}}
        want = opa_outcome(oracle, _P + _REPLAY_SENDS, "data.p.r", input)
        assert want[0][0] == "value"
        del hits[:]
        engine = pyrego.Engine()
        engine.set_strict_builtin_errors(True)
        engine.add_policy("p.rego", _P + _REPLAY_SENDS)
        if by_query:
            value = engine.eval_query("x := data.p.r", input=input)["result"][0]["bindings"]["x"]
        else:
            value = engine.eval_rule("data.p.r", input=input)
        assert (("value", canonical(value)), hits) == (want[0], ["/x"])
    finally:
        server.shutdown()
        server.server_close()
