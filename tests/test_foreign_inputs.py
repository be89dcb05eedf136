"""Input values of no Rego type (an ``OrderedDict``, a ``StrEnum``) are never misread.

``eval_rule(path, input=x)`` and the other per-call forms read the caller's
objects as they are, with exact type tests. A value of another type
(a subclass of dict, list, str or int included) must either give the answer
its plain equivalent gives or end the evaluation with an ``EvalTypeError``
naming its type: never another answer (an undefined ``deny`` is a fail-open
decision). Each case runs in every form: compact code, the fast form of a hot
program, prepared rules, ``eval_many`` (a small and a larger batch) and
``eval_query``; the plain answers are OPA's.
"""

from __future__ import annotations

import collections
import enum
import json
import types
from collections.abc import Mapping
from typing import Any, Callable

import pytest

import pyrego
from pyrego.codegen import tiers
from pyrego.errors import EvalTypeError

POLICY = """package q
import rego.v1

allow if input.user.role == "admin"
deny if input.user.banned
default deny_strict := false
deny_strict if input.user.banned == true
not_admin if not input.user.role == "admin"
same_role if input.user.role == input.role2
small if input.user.n < 5
cnt := count(input.user.tags)
cnt_user := count(input.user)
keys contains k if some k, _ in input.user
tag_vals contains v if some v in input.user.tags
tag_idx contains i if input.user.tags[i]
names contains n if n := input.items[_].name
has_a if "a" in input.user.tags
known_role if input.user.role in ["admin", "root"]
pair if "role", "admin" in input.user
get := object.get(input.user, "role", "none")
get_path := object.get(input, ["user", "attrs", "k"], "none")
tn := type_name(input.user)
tn_role := type_name(input.user.role)
isobj := is_object(input.user)
isstr := is_string(input.user.role)
isarr := is_array(input.user.tags)
whole := input.user
tags_ok if every x in input.user.tags { x != "bad" }
walked := [p | walk(input.user, [p, _])]
sorted_tags := sort(input.user.tags)
user_keys := object.keys(input.user)
marshalled := json.marshal(input.user)
total := sum([x.n | some x in input.items])
attr_vals contains v if v := input.user.attrs[_]
by_role := {"admin": 1, "root": 2}[input.user.role]
user_set_size := count({input.user, input.user})
attrs_kv if input.user.attrs == {"k": "v"}
tags_ab if input.user.tags == ["a", "b"]
printed := sprintf("%v", [input.user.role])
upper_role := upper(input.user.role)
starts if startswith(input.user.role, "ad")
joined := concat(",", input.user.tags)
merged := object.union(input.user.attrs, {"z": 1})
more_tags := array.concat(input.user.tags, ["c"])
items_sorted := sort(input.items)
n_plus := input.user.n + 1
"""

RULES = [line.split()[0] for line in POLICY.splitlines()[2:] if line and not line.startswith("default")]


def plain_input() -> dict[str, Any]:
    return {
        "user": {"role": "admin", "banned": True, "tags": ["a", "b"], "n": 3, "attrs": {"k": "v"}},
        "items": [{"name": "x", "n": 1}, {"name": "y", "n": 2}],
        "role2": "admin",
    }


# ---------------------------------------------------------------- foreign values


class MyDict(dict):  # type: ignore[type-arg]
    pass


class MyList(list):  # type: ignore[type-arg]
    pass


class MyStr(str):
    pass


class MyInt(int):
    pass


class MyFloat(float):
    pass


class Role(enum.StrEnum):
    ADMIN = "admin"
    Y = "y"


class Count(enum.IntEnum):
    ONE = 1
    THREE = 3


class View(Mapping):  # type: ignore[type-arg]
    """A mapping that is not a dict."""

    def __init__(self, d: dict[str, Any]) -> None:
        self._d = d

    def __getitem__(self, k: str) -> Any:
        return self._d[k]

    def __iter__(self) -> Any:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)


class Record:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


DICT_WRAPPERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "OrderedDict": collections.OrderedDict,
    "defaultdict": lambda d: collections.defaultdict(int, d),
    "Counter": collections.Counter,
    "MyDict": MyDict,
    "mappingproxy": types.MappingProxyType,
    "UserDict": collections.UserDict,
    "View": View,
    "Record": lambda d: Record(**d),  # (no plain equivalent)
}
LIST_WRAPPERS: dict[str, Callable[[list[Any]], Any]] = {
    "MyList": MyList,
    "UserList": collections.UserList,
    "deque": collections.deque,
}
STR_WRAPPERS: dict[str, Callable[[str], Any]] = {
    "MyStr": MyStr,
    "StrEnum": lambda s: Role(s),
    "bytes": lambda s: s.encode(),  # (no plain equivalent)
}
INT_WRAPPERS: dict[str, Callable[[int], Any]] = {
    "MyInt": MyInt,
    "IntEnum": lambda n: Count(n),
    "MyFloat": lambda n: MyFloat(n),
}


def to_plain(value: Any) -> Any:
    """The plain value a caller meant (None: no plain equivalent)."""
    if isinstance(value, (bytes, Record)):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return "" + value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Mapping) or isinstance(value, collections.UserDict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, collections.UserList, collections.deque)):
        return [to_plain(v) for v in value]
    return value


PATHS: list[tuple[Any, ...]] = [
    (),
    ("user",),
    ("user", "attrs"),
    ("user", "tags"),
    ("items",),
    ("items", 1),
    ("user", "role"),
    ("items", 1, "name"),
    ("user", "n"),
    ("items", 0, "n"),
]


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _put(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def variants() -> list[tuple[str, Callable[[], Any], Any]]:
    """(case id, a maker of the foreign input, its plain equivalent or None)."""
    out = []
    for path in PATHS:
        leaf = _get(plain_input(), path)
        wrappers: dict[str, Callable[[Any], Any]]
        if type(leaf) is dict:
            wrappers = DICT_WRAPPERS  # type: ignore[assignment]
        elif type(leaf) is list:
            wrappers = LIST_WRAPPERS  # type: ignore[assignment]
        elif type(leaf) is str:
            wrappers = STR_WRAPPERS  # type: ignore[assignment]
        else:
            wrappers = INT_WRAPPERS  # type: ignore[assignment]
        for name, wrap in wrappers.items():

            def make(path: tuple[Any, ...] = path, wrap: Callable[[Any], Any] = wrap) -> Any:
                doc = plain_input()
                return _put(doc, path, wrap(_get(doc, path)))

            plain = None if name in ("Record", "bytes") else to_plain(make())
            out.append(("/".join(map(str, path)) + ":" + name, make, plain))
    return out


VARIANTS = variants()

# ---------------------------------------------------------------- the forms

Outcome = tuple[str, Any]  # ("value", v) or ("error", message)


def _outcome(fn: Callable[[], Any]) -> Outcome:
    try:
        return ("value", fn())
    except EvalTypeError as exc:
        return ("error", str(exc))


def _engine() -> pyrego.Engine:
    e = pyrego.Engine()
    e.add_policy("q.rego", POLICY)
    return e


def _compact(fn: Callable[[], Any]) -> Any:
    """``fn()`` with promotion to the fast form put off (its engine's program stays compact)."""
    saved = tiers.PROMOTE_AFTER
    tiers.PROMOTE_AFTER = 10**12
    try:
        return fn()
    finally:
        tiers.PROMOTE_AFTER = saved


@pytest.fixture(scope="module")
def compact_engine() -> Any:
    e = pyrego.Engine()
    # (Its own text: the build cache must not hand it a program another test made hot.)
    e.add_policy("q.rego", POLICY + "\n# compact\n")
    return e


@pytest.fixture(scope="module")
def hot_engine() -> pyrego.Engine:
    e = _engine()
    for _ in range(200):
        e.eval_query("data.q", input=plain_input())
    assert e.program().code.gen.hot
    return e


def forms(compact: pyrego.Engine, hot: pyrego.Engine) -> dict[str, Callable[[str, Any], Outcome]]:
    def many(n: int) -> Callable[[str, Any], Outcome]:
        def run(rule: str, make: Any) -> Outcome:
            results = list(hot.eval_many(f"data.q.{rule}", [make() for _ in range(n)]))
            outs: list[Outcome] = []
            for r in results:
                if r.error is not None:
                    assert isinstance(r.error, EvalTypeError), r.error
                    outs.append(("error", str(r.error)))
                else:
                    outs.append(("value", r.value))
            assert all(o == outs[0] for o in outs), outs
            return outs[0]

        return run

    def query(rule: str, make: Any) -> Outcome:
        got = _outcome(lambda: hot.eval_query(f"x := data.q.{rule}", input=make()))
        if got[0] == "value":
            result = got[1]["result"]
            return ("value", result[0]["bindings"]["x"] if result else pyrego.UNDEFINED)
        return got

    return {
        "compact": lambda rule, make: _outcome(lambda: _compact(lambda: compact.eval_rule(f"data.q.{rule}", input=make()))),
        "hot": lambda rule, make: _outcome(lambda: hot.eval_rule(f"data.q.{rule}", input=make())),
        "prepared": lambda rule, make: _outcome(lambda: hot.prepare_rule(f"data.q.{rule}")(make())),
        "many_1": many(1),
        "many_100": many(100),
        "query": query,
    }


_PLAIN_ANSWERS: dict[tuple[str, str, str], Outcome] = {}


def _plain_answer(form: str, rule: str, run: Callable[[str, Any], Outcome], plain: Any) -> Outcome:
    key = (form, rule, json.dumps(plain, sort_keys=True))
    got = _PLAIN_ANSWERS.get(key)
    if got is None:
        got = _PLAIN_ANSWERS[key] = run(rule, lambda: json.loads(key[2]))
    return got


@pytest.mark.parametrize("case", [v[0] for v in VARIANTS])
def test_foreign_value_is_plain_answer_or_clear_error(case: str, compact_engine: Any, hot_engine: pyrego.Engine) -> None:
    _, make, plain = next(v for v in VARIANTS if v[0] == case)
    type_name = case.rsplit(":", 1)[1]
    runners = forms(compact_engine, hot_engine)
    assert hot_engine.program().code.gen.hot
    for rule in RULES:
        kinds = {}
        for form, run in runners.items():
            if plain is not None:
                allowed = [_plain_answer(form, rule, run, plain)]
            else:
                # No plain equivalent: the answer may not depend on the value.
                a = runners[form](rule, lambda: _put(make(), _path_of(case), None))
                b = runners[form](rule, lambda: _put(make(), _path_of(case), "zzz"))
                allowed = [a] if a == b else []
            got = run(rule, make)
            kinds[form] = got[0]
            if got[0] == "error":
                assert "is not a Rego value" in got[1] and "plain dict" in got[1], (rule, form, got)
                assert _type_named(type_name) in got[1], (rule, form, got)
            else:
                assert got in allowed, (rule, form, got, allowed)
        # Every form reads the value the same way: all of them answer, or all fail.
        assert len(set(kinds.values())) == 1, (rule, kinds)
    assert not compact_engine.program().code.gen.hot

def _path_of(case: str) -> tuple[Any, ...]:
    text = case.rsplit(":", 1)[0]
    return tuple(int(p) if p.isdigit() else p for p in text.split("/")) if text else ()


def _type_named(wrapper: str) -> str:
    """The Python type name an error names for a wrapper (an Enum member: its class)."""
    return {"StrEnum": "Role", "IntEnum": "Count"}.get(wrapper, wrapper)


def test_plain_answers_are_opas(hot_engine: pyrego.Engine) -> None:
    from opa_oracle import OracleUnavailable, get_oracle

    try:
        oracle = get_oracle()
    except OracleUnavailable as exc:  # pragma: no cover - the oracle is part of the test setup
        pytest.fail(f"OPA oracle unavailable: {exc}")
    opa = oracle.evaluate({"q.rego": POLICY}, "x := data.q", input=plain_input())
    assert opa.error_code is None, opa
    ours = hot_engine.eval_query("x := data.q", input=plain_input())["result"][0]["bindings"]["x"]
    assert json.loads(json.dumps(ours)) == json.loads(json.dumps(opa.bindings[0]["x"], default=float))


def test_reported_reproductions() -> None:
    e = pyrego.Engine()
    e.add_policy("p.rego", 'package p\nimport rego.v1\nallow if input.user.role == "admin"\ndeny if input.user.banned\n')
    with pytest.raises(EvalTypeError, match="OrderedDict is not a Rego value"):
        e.eval_rule("data.p.allow", input=collections.OrderedDict(user={"role": "admin"}))
    with pytest.raises(EvalTypeError, match="defaultdict is not a Rego value"):
        e.eval_rule("data.p.deny", input={"user": collections.defaultdict(int, banned=True)})
    for _ in range(200):
        e.eval_rule("data.p.deny", input={"user": {"banned": False}})
    assert e.program().code.gen.hot
    with pytest.raises(EvalTypeError, match="defaultdict is not a Rego value"):
        e.eval_rule("data.p.deny", input={"user": collections.defaultdict(int, banned=True)})
    with pytest.raises(EvalTypeError, match="defaultdict is not a Rego value"):
        e.prepare_rule("data.p.deny")({"user": collections.defaultdict(int, banned=True)})
    (result,) = e.eval_many("data.p.deny", [{"user": collections.defaultdict(int, banned=True)}])
    assert isinstance(result.error, EvalTypeError)


def test_fail_open_deny_is_an_error_not_a_pass() -> None:
    """A default-allow policy whose deny reads a dict subclass: undefined would let it through."""
    e = pyrego.Engine()
    e.add_policy(
        "d.rego",
        "package d\nimport rego.v1\ndefault allow := true\nallow := false if deny\n"
        'deny if {\n some r in input.roles\n r.name == "blocked"\n}\n',
    )
    blocked = {"roles": [collections.OrderedDict(name="blocked")]}
    assert e.eval_rule("data.d.allow", input=json.loads(json.dumps(blocked))) is False
    for form in (
        lambda: e.eval_rule("data.d.allow", input=blocked),
        lambda: e.prepare_rule("data.d.allow")(blocked),
        lambda: e.eval_query("data.d.allow", input=blocked),
    ):
        with pytest.raises(EvalTypeError, match="OrderedDict is not a Rego value"):
            form()


def test_set_input_and_per_call_input_agree() -> None:
    """``set_input`` keeps the value by reference too: the same error where it is read."""
    e = _engine()
    e.set_input(collections.OrderedDict(user={"role": "admin"}))
    with pytest.raises(EvalTypeError, match="OrderedDict is not a Rego value"):
        e.eval_rule("data.q.allow")
    with pytest.raises(EvalTypeError, match="OrderedDict is not a Rego value"):
        e.eval_rule("data.q.allow", input=collections.OrderedDict(user={"role": "admin"}))
    with pytest.raises(pyrego.DataError, match="OrderedDict is not a Rego value"):
        e.add_data({"x": collections.OrderedDict()})


class MySet(frozenset):  # type: ignore[type-arg]
    pass


@pytest.mark.parametrize(
    ("rule", "plain", "foreign", "want", "foreign_fails"),
    [
        ("has_a", {"tags": {"a", "b"}}, {"tags": MySet({"a", "b"})}, True, True),
        ("keys", {"user": {"admin": 1}}, {"user": {Role.ADMIN: 1}}, {"admin"}, True),
        # (The values and other keys of that object are read as they are.)
        ("vals", {"user": {"admin": 1}}, {"user": {Role.ADMIN: 1}}, {1}, False),
        ("deny", {"user": {"admin": 1, "banned": True}}, {"user": {Role.ADMIN: 1, "banned": True}}, True, False),
    ],
)
def test_sets_and_keys_of_other_types(rule: str, plain: Any, foreign: Any, want: Any, foreign_fails: bool) -> None:
    """A set subclass, and an object key of no Rego type, in every form: an
    error where it is read, the plain answer where it is not."""
    text = (
        "package s\nimport rego.v1\nhas_a if \"a\" in input.tags\n"
        "keys contains k if some k, _ in input.user\nvals contains v if some v in input.user\n"
        "default deny := false\ndeny if input.user.banned\n"
    )
    e = pyrego.Engine()
    e.add_policy("s.rego", text + "# compact\n")
    hot = pyrego.Engine()
    hot.add_policy("s.rego", text)
    for _ in range(200):
        hot.eval_rule(f"data.s.{rule}", input=plain)
    assert hot.program().code.gen.hot
    assert _compact(lambda: e.eval_rule(f"data.s.{rule}", input=plain)) == want
    assert hot.eval_rule(f"data.s.{rule}", input=plain) == want
    runs: list[Callable[[], Any]] = [
        lambda: _compact(lambda: e.eval_rule(f"data.s.{rule}", input=foreign)),
        lambda: hot.eval_rule(f"data.s.{rule}", input=foreign),
        lambda: hot.prepare_rule(f"data.s.{rule}")(foreign),
        lambda: _query_value(hot.eval_query(f"data.s.{rule}", input=foreign)),
        lambda: next(iter(hot.eval_many(f"data.s.{rule}", [foreign]))).unwrap(),
        lambda: list(hot.eval_many(f"data.s.{rule}", [foreign] * 100))[99].unwrap(),
    ]
    for run in runs:
        if foreign_fails:
            with pytest.raises(EvalTypeError, match=r"(MySet|Role) is not a Rego value"):
                run()
        else:
            assert run() == want
    assert not e.program().code.gen.hot


def _query_value(result: dict[str, Any]) -> Any:
    """The one value of a one-expression query's result, in eval_rule's form (a set for a set)."""
    value = result["result"][0]["expressions"][0]["value"]
    return set(value) if isinstance(value, list) else value


def test_membership_of_a_literal_in_a_constant_array_compiles_cleanly() -> None:
    # Python warns about ``'foo' is UNDEF`` (a literal compared with ``is``); the
    # test suite turns SyntaxWarning into an error, so the generated code must not have one.
    import warnings

    cases = [
        ('not "foo" in ["fox"]', True),
        ('"fox" in ["fox"]', True),
        ('1 in ["fox"]', pyrego.UNDEFINED),
        ('not null in ["fox"]', True),
    ]
    for body, want in cases:
        for coverage in (False, True):
            engine = pyrego.Engine()
            engine.add_policy("t.rego", f"package t\nimport rego.v1\np if {{ {body} }}\n")
            engine.set_enable_coverage(coverage)
            with warnings.catch_warnings():
                warnings.simplefilter("error", SyntaxWarning)
                for _ in range(150):  # (the compact form, then the fast form)
                    assert engine.eval_rule("data.t.p") == want, (body, coverage)
