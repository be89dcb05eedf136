"""Which definition of a document OPA evaluates first, where that decides
which of two errors it reports; and the location of a builtin's error at a
call a ``with`` can replace. Found by the random-program differential hunt
(tests/test_program_differential.py). Each case is a minimal program
evaluated by OPA v1.20.2 and by pyrego in every execution form, strict
builtin errors on and off (off: only where OPA raised no error), comparing
the value, undefined, or the error's code and message (location included).

OPA's rule tree holds a partial object's rule whose key is a constant
(``o[null] := 0``, ``o["a"].b := 1``) below the object's node, yet indexes
it, and evaluates the whole object, together with the node's own rules
(``o[input.k] := 1``): its own first, then its children's (in Go's map
order, which varies between children, so each case here has one child, or
children the index orders). The index returns the rules it does not test
first, then down its trie those with no condition on a ref, those requiring
it defined, those requiring a value of it: a key read from ``input``
(``__local0__ = input.k``, moved into the body) is such a test, so a child
whose body tests nothing runs before the node's own rule."""

from __future__ import annotations

from typing import Any

import pytest

from opa_compare import agree

_P = "package p\n\n"

ORDER_CASES = {
    # The hunt's program, reduced: o[null]'s type error comes before the
    # builtin error of the rule that o[input.xs[0]] reads.
    "hunt 284: a constant key's rule before a key read from input": (
        "o[input.xs[0]] := false if {\n\tr[v]\n}\n\n"
        'r.y[$`x{1.0}a b{null}`] := null if {\n\tnot (to_number("true") * count(input.s))\n}\n\n'
        'o[null] := 0 if {\n\tinput.xs | {v5 | some v5 in {}} | input.s\n\ttrue in {3.0}\n}\n',
        {"xs": [1], "s": "a,b"},
    ),
    "child untested, own keyed by input: the child first": (
        'o[input.xs[0]] := false if to_number("own")\no[null] := 0 if to_number("child")\n',
        {"xs": [1]},
    ),
    "the same, the child written first": (
        'o[null] := 0 if to_number("child")\no[input.xs[0]] := false if to_number("own")\n',
        {"xs": [1]},
    ),
    "a string key": (
        'o[input.a] := 1 if to_number("own")\no["k"] := 0 if to_number("child")\n',
        {"a": "A"},
    ),
    "a key bound in the body from input": (
        'o[x] := 1 if {\n\tto_number("own")\n\tx := input.a\n}\no["k"] := 0 if to_number("child")\n',
        {"a": "A"},
    ),
    "a child's longer path": (
        'o[input.b] := 1 if to_number("own")\no["a"].b := 0 if to_number("child")\n',
        {"b": 2},
    ),
    "both untested: the node's own first": (
        'o[x] := 1 if {\n\tx := concat("", ["k"])\n\tto_number("own")\n}\no["a"] := 0 if to_number("child")\n',
        {"a": "A"},
    ),
    "the child tests a value, its own nothing: its own first": (
        'o["a"] := 0 if {\n\tinput.a == "A"\n\tto_number("child")\n}\no[x] := 1 if {\n\tx := concat("", ["k"])\n\tto_number("own")\n}\n',
        {"a": "A"},
    ),
    "the child's value test under the own rule's any": (
        'o[input.b] := 1 if to_number("own")\no["a"] := 0 if {\n\tinput.a == "A"\n\tto_number("child")\n}\n',
        {"a": "A", "b": 2},
    ),
    "the child's test fails: its own rule's error": (
        'o[input.b] := 1 if to_number("own")\no["a"] := 0 if {\n\tinput.a == "B"\n\tto_number("child")\n}\n',
        {"a": "A", "b": 2},
    ),
    "no error: the whole object": (
        'o[input.b] := 1 if to_number("1")\no["a"] := 0 if to_number("2")\no[null] := 2\n',
        {"a": "A", "b": 2},
    ),
}


@pytest.mark.parametrize("name", list(ORDER_CASES))
def test_partial_object_definition_order(oracle: Any, name: str) -> None:
    body, input = ORDER_CASES[name]
    agree(oracle, _P + body, "data.p.o", input)


# A call of a builtin that a ``with`` replaces somewhere in the program is
# made through the replacement mechanism: its error still names the call's
# place, as OPA's does, and so does the error of a builtin put in its place.
LOCATION_CASES = {
    "a replaceable builtin's own error": (
        's contains 1 if input.xs[1] with to_number as "a,b"\n\nr if {\n\tnot (to_number("true") * 2)\n}\n',
        "data.p.r",
    ),
    "the error of a builtin put in another's place": (
        'q if {\n\tcount("x")\n}\n\nr if {\n\tq with count as to_number\n}\n',
        "data.p.r",
    ),
    "the same in one expression": (
        'r if {\n\tx := "x"\n\tcount(x) with count as to_number\n}\n',
        "data.p.r",
    ),
    "a function put in a builtin's place: the function's location": (
        'f(x) := to_number(x)\n\nq if {\n\tcount("x")\n}\n\nr if {\n\tq with count as f\n}\n',
        "data.p.r",
    ),
}


@pytest.mark.parametrize("name", list(LOCATION_CASES))
def test_replaceable_call_error_location(oracle: Any, name: str) -> None:
    body, ref = LOCATION_CASES[name]
    agree(oracle, _P + body, ref, {"xs": [1]})
