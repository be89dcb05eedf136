"""A rule's evaluation as one function of the input, for prepared rules.

A prepared rule (``Engine.prepare_rule``) evaluates from the rule's entry:
its definition functions ``D<id>_<n>(ctx)`` in turn, then its default. Each
call then sets up an evaluation context (the input, an empty memo, fresh
query state) that most rules read little of. Where the rule's code (and the
code of the rules it calls) needs nothing else of the context,
:func:`input_function` writes that fast-form code again as functions of the
input alone, and the prepared rule is that function, with no context at all.
The rewriting works on the Python syntax tree of the generated code (never
on its text: a policy's string literals are in it):

- ``ctx.input`` is the argument; ``ctx.data`` the base documents the
  function was made for;
- the memo, ``ctx.cache``, is a dict made per call when the rule calls
  rules (``R4(ctx)``, ``D4_0(ctx, acc)``: those functions are written again
  the same way, taking ``(input, m, ...)``); ``ctx.cache.get(<id>, K<n>)``,
  a constant document, is its constant (no ``with`` is in force), and
  membership in a constant array of strings is a test of a frozenset;
- ``ctx.now_ns`` reads the clock once per call (every read of one
  evaluation must agree), into a local where one definition and no called
  rule reads it, else into the memo;
- a builtin's error path (``rt_builtin_error(ctx, ...)``) makes a context
  for the settings then (strict errors, or the record of errors);
- a loop's deadline check goes: there is none with no time limit, and a
  rule under a time limit gets no such function (walks over values find the
  deadline from a context on the stack);
- the index guards of strict builtin errors (``if ctx.cfg.strict:``) are
  kept or dropped, as the settings the function is made for have it;
- nothing else may name the context: a Rego function call, a ``with``, a
  builtin that takes the context, print.

Where any of this does not hold, there is no such function and the prepared
rule evaluates with a context.

The functions so written then go through passes that hold for any policy
(codegen/prepared_passes.py, codegen/prepared_loops.py): Rego's equality,
order and set membership of values of one simple type as Python's operators;
a called rule's one definition folded into its memoising function, the memo
looked in before a call, a called rule that one call reaches written at that
call; a copy of the input read as the input; loops over constant arrays
iterated directly and skipped at once where a test of unchanged values would
skip every iteration. The definitions are then written into one function (a
block each) when their values are plain constants, with the leading steps
consecutive definitions share taken once; any other value goes through the
rule's conversion (``convert``).
"""

from __future__ import annotations

import ast as pyast
import builtins
import re
import time
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any, Callable

from pyrego.codegen.generator import LARGEST_PROMOTED_CHUNK
from pyrego.codegen.prepared_loops import constant_loops
from pyrego.codegen.prepared_passes import (
    DEFINITION,
    MEMO,
    RULE_FUNCTION,
    MemoProbes,
    fold_definitions,
    inline_single_calls,
    input_copies,
    load_name,
    share_prefixes,
    type_of,
    type_tests_once,
)
from pyrego.codegen.program import Program
from pyrego.codegen.python_ast import python_ast_lock
from pyrego.runtime.values import PLAIN_TYPES, UNDEF

_DEF = DEFINITION
_RULE_FUNCTION = RULE_FUNCTION
#: A partial set's member reader (codegen.set_members), ``SM<id>(ctx, key)``.
_MEMBER_READER = re.compile(r"SM\d+")
#: A partial object's reader along keys (codegen.set_members), ``SK<id>(ctx, keys)``.
_PATH_READER = re.compile(r"SK\d+")
#: Iterations in OPA's order, taking the context, and the same without it.
_SORTED_ITERATION = {"rt_items_ordered": "rt_items_sorted", "rt_values_ordered": "rt_values_sorted"}
_PLAIN_TYPES = (bool, int, type(None))
# Types whose Python equality between two values of the type is Rego's.
_SIMPLE_EQ = frozenset((str, int, bool, type(None)))  # (not float: a NaN is itself in rt_eq)
# Values that are their own frozen form, so that a set's ``in`` tests them as Rego does.
_MEMBER_KEYS = frozenset((str, int, float))
_NUMBER_TYPES = frozenset((int, float))
# Types whose Python order between two values of the type is Rego's (what rt_lt and the others test first).
_ORDER_TYPES = frozenset((int, str, float))
# Helpers of two operands with a quick form (see _Detach._quick_test), and for an order its operator.
_QUICK_TESTS: dict[str, Any] = {"rt_member": None, "rt_eq": None, "rt_lt": pyast.Lt(), "rt_le": pyast.LtE(), "rt_gt": pyast.Gt(), "rt_ge": pyast.GtE()}
# The memo's name, and its key for the clock (rules' keys are their ids, never negative).
_MEMO, _CLOCK = MEMO, -1
# Without a memo (one function reads the clock): the local it reads it into.
_NOW = "now_"


def _function_tree(program: Program, name: str, chunks: dict[str, list[pyast.FunctionDef] | None]) -> pyast.FunctionDef | None:
    """The fast form of definition function ``name`` (``D<id>_<n>``), parsed
    (``chunks``: the rule chunks parsed so far, by name)."""
    gen = program.gen
    m = _DEF.fullmatch(name)
    if gen is None or m is None or not gen.hot:
        return None
    chunk = f"R{m.group(1)}"
    if chunk not in chunks:
        chunks[chunk] = _chunk_trees(program, chunk)
    for node in chunks[chunk] or ():
        if node.name == name and _takes_context(node):
            return node
    return None


def _chunk_trees(program: Program, chunk: str) -> list[pyast.FunctionDef] | None:
    """The functions of the fast form of rule chunk ``chunk`` (``R<id>``), parsed."""
    assert program.gen is not None
    if sum(map(len, program.gen.chunks.get(chunk) or ())) > LARGEST_PROMOTED_CHUNK:
        return None  # (promotion leaves such a chunk compact: rewriting it would cost seconds and gain little)
    text = "\n".join(program.gen.fast_chunk(chunk))  # (not under the ast lock: writing it may take it)
    try:
        with python_ast_lock:
            module = pyast.parse(text)
    except SyntaxError:
        return None
    if not all(isinstance(node, pyast.FunctionDef) for node in module.body):
        return None
    return module.body  # type: ignore[return-value]


def _takes_context(node: pyast.FunctionDef) -> bool:
    return bool(node.args.args) and node.args.args[0].arg == "ctx"


def _is_ctx(node: pyast.AST) -> bool:
    return isinstance(node, pyast.Name) and node.id == "ctx"


def _rule_calls(node: pyast.AST) -> set[str]:
    """The rule functions ``node`` calls with the context (a set's member
    reader ``SM<id>`` calls its rule ``R<id>``, as it is written here)."""
    calls = set()
    for n in pyast.walk(node):
        if isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) and n.args and _is_ctx(n.args[0]):
            if _RULE_FUNCTION.fullmatch(n.func.id):
                calls.add(n.func.id)
            elif _MEMBER_READER.fullmatch(n.func.id) or _PATH_READER.fullmatch(n.func.id):
                calls.add("R" + n.func.id[2:])
    return calls


class _Detach(pyast.NodeTransformer):
    """Generated functions of ``ctx`` as functions of ``input`` (and, with
    ``memo``, of the memo ``m``): see the module's text. What it cannot
    rewrite it leaves, naming ``ctx``, and :func:`_checked` refuses it."""

    def __init__(self, memo: bool, namespace: dict[str, Any], new_context: Callable[[], Any]) -> None:
        self.memo = memo
        self.namespace = namespace
        self.new_context = new_context  # (a context with the settings the functions are made for)
        self.reads_clock = False  # (without the memo: a function read the clock into its local ``now_``)
        # A member of a partial set was read from the whole set (see visit_Call).
        self.member_lookups = False
        # Locals assigned once, to a constant document (``t3 = K6``), in the function being written.
        self.constants: dict[str, str] = {}
        self.assigned_once: set[str] = set()

    def visit_FunctionDef(self, node: pyast.FunctionDef) -> pyast.AST:
        self.reads_clock = False
        stores = Counter(n.id for n in pyast.walk(node) if isinstance(n, pyast.Name) and isinstance(n.ctx, pyast.Store))
        self.assigned_once = {name for name, count in stores.items() if count == 1}
        self.constants = {}
        self.generic_visit(node)
        if self.reads_clock:
            start = pyast.Assign(targets=[pyast.Name(id=_NOW, ctx=pyast.Store())], value=pyast.Constant(value=None))
            node.body.insert(0, pyast.copy_location(start, node.body[0]))
        if _takes_context(node):
            node.args.args[0].arg = "input"
            if self.memo:
                node.args.args.insert(1, pyast.arg(arg=_MEMO))
        return node

    def visit_If(self, node: pyast.If) -> pyast.AST:
        # ``if ctx.deadline is not None: rt_check_deadline(ctx, L..)``: no time limit here.
        test = node.test
        if (
            isinstance(test, pyast.Compare)
            and isinstance(test.left, pyast.Attribute)
            and _is_ctx(test.left.value)
            and test.left.attr == "deadline"
            and not node.orelse
            and len(node.body) == 1
            and isinstance(node.body[0], pyast.Expr)
            and isinstance(node.body[0].value, pyast.Call)
            and isinstance(node.body[0].value.func, pyast.Name)
            and node.body[0].value.func.id == "rt_check_deadline"
        ):
            return pyast.copy_location(pyast.Pass(), node)
        if isinstance(test, pyast.Attribute) and test.attr == "strict" and isinstance(test.value, pyast.Attribute) and _is_ctx(test.value.value) and test.value.attr == "cfg":
            # ``if ctx.cfg.strict:`` (index guards of strict builtin errors): a
            # setting of these functions, as the error path's context has it.
            if not self.new_context().strict:
                return pyast.copy_location(pyast.Pass(), node)
            self.generic_visit(node)
            return node.body  # type: ignore[return-value]
        return self.generic_visit(node)

    def visit_Call(self, node: pyast.Call) -> pyast.AST:
        func = node.func
        if isinstance(func, pyast.Name) and node.args and _is_ctx(node.args[0]):
            if func.id == "rt_builtin_error":
                node.args[0] = pyast.Call(func=load_name("NEW_CONTEXT"), args=[], keywords=[])
            elif _MEMBER_READER.fullmatch(func.id) and len(node.args) == 2:
                # The whole set's member: where that raises (a rule the lookup
                # would skip), the caller re-runs the call with a context.
                self.member_lookups = True
                rule = pyast.Call(func=load_name("R" + func.id[2:]), args=[node.args[0]], keywords=[])
                args = [self.visit_Call(rule), self.visit(node.args[1])]
                whole = pyast.Call(func=load_name("rt_get"), args=args, keywords=[])
                return pyast.copy_location(whole, node)
            elif _PATH_READER.fullmatch(func.id) and len(node.args) == 2:
                # The whole object, read along the keys: as for a member (above).
                self.member_lookups = True
                rule = pyast.Call(func=load_name("R" + func.id[2:]), args=[node.args[0]], keywords=[])
                return pyast.copy_location(self.visit_Call(rule), node)
            elif func.id in _SORTED_ITERATION:
                # Only documents where base data and rules meet iterate otherwise
                # than sorted, and what builds them (N<id>, rt_node_select, ...)
                # names the context, so no such document is in code written here.
                node.func = load_name(_SORTED_ITERATION[func.id])
                del node.args[0]
                return self.generic_visit(node)
            elif self.memo and _RULE_FUNCTION.fullmatch(func.id):
                node.args[0:1] = [load_name("input"), load_name(_MEMO)]
        elif (
            isinstance(func, pyast.Name)
            and func.id == "rt_member"
            and len(node.args) == 2
            and isinstance(node.args[1], pyast.Name)
            and node.args[1].id in self.constants
        ):
            return self._member_of_constant(node)
        elif isinstance(func, pyast.Name) and func.id in _QUICK_TESTS and len(node.args) == 2 and not node.keywords and all(isinstance(a, pyast.Name) for a in node.args):
            return self._quick_test(node)
        elif (
            isinstance(func, pyast.Attribute)
            and func.attr == "get"
            and isinstance(func.value, pyast.Attribute)
            and _is_ctx(func.value.value)
            and func.value.attr == "cache"
            and len(node.args) == 2
        ):
            # A constant document: what the memo holds for it, if anything, is
            # the same (no ``with`` can be in force in code written here).
            return node.args[1]
        return self.generic_visit(node)

    def visit_Assign(self, node: pyast.Assign) -> pyast.AST:
        self.generic_visit(node)
        target, value = node.targets[0], node.value
        if len(node.targets) == 1 and isinstance(target, pyast.Name) and target.id in self.assigned_once and isinstance(value, pyast.Name) and re.fullmatch(r"K\d+", value.id):
            self.constants[target.id] = value.id
        return node

    def _quick_test(self, node: pyast.Call) -> pyast.AST:
        """``rt_eq(a, b)`` as ``a == b`` where both are of one type among
        strings, integers, booleans and null (Python's equality is
        Rego's there); ``rt_ge(a, b)`` (and the other orders) as ``a >= b``
        where both are integers, strings or floats (what the helper does
        then); ``rt_member(x, s)`` as ``x in s`` where ``s`` is a set
        and ``x`` a string or number (a set holds its members frozen, where
        those are themselves, and a boolean as a key no number equals: what
        ``rt_member`` tests is then ``x in s``). Any other operands go to the
        helper."""
        a, b = (arg.id for arg in node.args)  # type: ignore[attr-defined]

        helper = node.func.id  # type: ignore[attr-defined]
        if helper != "rt_member":
            # Equality of two values of one type among SIMPLE_EQ_; an order
            # (rt_lt, ...) of two of one type among ORDER_TYPES_, as the
            # helper itself first tests.
            types, op = ("SIMPLE_EQ_", pyast.Eq()) if helper == "rt_eq" else ("ORDER_TYPES_", _QUICK_TESTS[helper])
            self.namespace["SIMPLE_EQ_"], self.namespace["ORDER_TYPES_"] = _SIMPLE_EQ, _ORDER_TYPES
            test = pyast.BoolOp(
                op=pyast.And(),
                values=[
                    pyast.Compare(left=type_of(a), ops=[pyast.Is()], comparators=[type_of(b)]),
                    pyast.Compare(left=type_of(a), ops=[pyast.In()], comparators=[load_name(types)]),
                ],
            )
            quick = pyast.Compare(left=load_name(a), ops=[op], comparators=[load_name(b)])
        else:
            self.namespace["MEMBER_KEYS_"] = _MEMBER_KEYS
            test = pyast.BoolOp(
                op=pyast.And(),
                values=[
                    pyast.Compare(left=type_of(b), ops=[pyast.Is()], comparators=[load_name("set")]),
                    pyast.Compare(left=type_of(a), ops=[pyast.In()], comparators=[load_name("MEMBER_KEYS_")]),
                ],
            )
            quick = pyast.Compare(left=load_name(a), ops=[pyast.In()], comparators=[load_name(b)])
        return pyast.copy_location(pyast.IfExp(test=test, body=quick, orelse=node), node)

    def _member_of_constant(self, node: pyast.Call) -> pyast.AST:
        """``rt_member(x, t)`` where ``t`` holds a constant array of strings
        (or of integers): ``x in <its frozenset>`` for a string ``x`` (a
        number: Rego's equality of these is Python's), false for any other
        value (none equals a member), and ``rt_member`` itself for an object
        of no Rego type."""
        constant = self.constants[node.args[1].id]  # type: ignore[attr-defined]
        value = self.namespace.get(constant)
        x = node.args[0]
        if type(value) is not list or not value or not isinstance(x, pyast.Name):
            return self.generic_visit(node)
        if all(type(v) is str for v in value):
            name, kinds = f"{constant}_STRINGS", "str"
        elif all(type(v) is int for v in value):
            # Integers (never booleans): an int or float equal to one in Rego
            # is ``==`` to it with the same hash; no other value but a
            # Decimal (which rt_member compares) is equal to a number.
            name, kinds = f"{constant}_INTEGERS", "NUMBER_TYPES_"
            self.namespace[kinds] = _NUMBER_TYPES
            self.namespace["NOT_NUMBERS_"] = PLAIN_TYPES - {Decimal}
        else:
            return self.generic_visit(node)
        self.namespace[name] = frozenset(value)

        is_str = pyast.Compare(left=type_of(x.id), ops=[pyast.Is() if kinds == "str" else pyast.In()], comparators=[load_name(kinds)])
        # A value of no Rego type (a str subclass, say) goes to rt_member,
        # which raises the error for it, rather than being read as false.
        others = "PLAIN_TYPES" if kinds == "str" else "NOT_NUMBERS_"
        foreign = pyast.Compare(left=type_of(x.id), ops=[pyast.NotIn()], comparators=[load_name(others)])
        test = pyast.IfExp(
            test=is_str,
            body=pyast.Compare(left=load_name(x.id), ops=[pyast.In()], comparators=[load_name(name)]),
            orelse=pyast.BoolOp(op=pyast.And(), values=[pyast.Compare(left=load_name(x.id), ops=[pyast.IsNot()], comparators=[load_name("UNDEF")]), foreign, node]),
        )
        return pyast.copy_location(test, node)

    def visit_Attribute(self, node: pyast.Attribute) -> pyast.AST:
        if not _is_ctx(node.value) or not isinstance(node.ctx, pyast.Load):
            return self.generic_visit(node)
        if node.attr == "input":
            return pyast.copy_location(load_name("input"), node)
        if node.attr == "data":
            return pyast.copy_location(load_name("DATA_"), node)
        if self.memo and node.attr == "cache":
            return pyast.copy_location(load_name(_MEMO), node)
        if not self.memo and node.attr == "now_ns":
            # (now_ := time_ns()) if now_ is None else now_, with ``now_ = None`` on entry
            self.reads_clock = True
            now = load_name(_NOW)
            read = pyast.IfExp(
                test=pyast.Compare(left=now, ops=[pyast.Is()], comparators=[pyast.Constant(value=None)]),
                body=pyast.NamedExpr(
                    target=pyast.Name(id=_NOW, ctx=pyast.Store()),
                    value=pyast.Call(func=load_name("time_ns"), args=[], keywords=[]),
                ),
                orelse=load_name(_NOW),
            )
            return pyast.copy_location(read, node)
        if self.memo and node.attr == "now_ns":
            # m[-1] if -1 in m else m.setdefault(-1, time_ns())
            def memo() -> pyast.Name:
                return load_name(_MEMO)

            key = pyast.Constant(value=_CLOCK)
            read = pyast.IfExp(
                test=pyast.Compare(left=key, ops=[pyast.In()], comparators=[memo()]),
                body=pyast.Subscript(value=memo(), slice=key, ctx=pyast.Load()),
                orelse=pyast.Call(
                    func=pyast.Attribute(value=memo(), attr="setdefault", ctx=pyast.Load()),
                    args=[key, pyast.Call(func=load_name("time_ns"), args=[], keywords=[])],
                    keywords=[],
                ),
            )
            return pyast.copy_location(read, node)
        return node


def _checked(functions: list[pyast.FunctionDef], namespace: dict[str, Any], plain_returns: bool, beside: Sequence[pyast.FunctionDef] = ()) -> bool:
    """Whether the rewritten ``functions`` name no context, read only names
    they, the functions ``beside`` them (written into the same module) or the
    program define, and (``plain_returns``) return only plain constants (or
    undefined)."""
    module = pyast.Module(body=list(functions), type_ignores=[])
    stored = {f.name for f in beside}
    stored |= {n.id for n in pyast.walk(module) if isinstance(n, pyast.Name) and not isinstance(n.ctx, pyast.Load)}
    stored |= {n.name for n in pyast.walk(module) if isinstance(n, (pyast.FunctionDef, pyast.ExceptHandler)) and n.name}
    stored |= {a.arg for n in pyast.walk(module) if isinstance(n, pyast.FunctionDef) for a in n.args.args}
    for node in pyast.walk(module):
        if isinstance(node, (pyast.Yield, pyast.YieldFrom, pyast.Lambda, pyast.Global, pyast.Nonlocal, pyast.With)):
            return False
        if isinstance(node, (pyast.FunctionDef, pyast.AsyncFunctionDef, pyast.ClassDef)) and node not in functions:
            return False
        if isinstance(node, pyast.Name):
            if node.id == "ctx":
                return False
            if isinstance(node.ctx, pyast.Load) and node.id not in stored and node.id not in namespace and not hasattr(builtins, node.id):
                return False
        if isinstance(node, pyast.arg) and node.arg == "ctx":
            return False
        if isinstance(node, pyast.Return) and plain_returns:
            value = node.value
            if value is None:
                return False
            if not (
                (isinstance(value, pyast.Constant) and type(value.value) in _PLAIN_TYPES)
                or (isinstance(value, pyast.Name) and value.id == "UNDEF")
            ):
                return False
    return True


def input_function(
    program: Program,
    fns: tuple[Callable[..., Any], ...],
    default: Any,
    new_context: Callable[[], Any],
    data: Any = None,
    convert: Callable[[Any], Any] | None = None,
    guard: dict[str, Any] | None = None,
) -> Callable[[Any], Any] | None:
    """The evaluation from entry functions ``fns`` (each ``D<id>_<n>(ctx)``,
    taken in turn while undefined) and then ``default``, as one function of
    the input; None where the rule needs a context (see the module's text).
    ``new_context()``: a context for a builtin's error, with the settings to
    use; ``data``: the base documents the evaluation reads; ``convert``: a
    value to the caller's form (where given, the rule's value may be any;
    otherwise only booleans, null and integers).

    ``guard``: ``ENGINE_`` (an engine), ``ENGINE_STATE_`` (its attributes,
    ``vars(engine)``: a subscript of that dict costs less than the
    attribute), ``TABLE_`` (its table of resolved rules), ``SLOW_`` and
    ``FAIL_`` (functions): the function first checks that the engine's
    table is still ``TABLE_`` (else it returns
    ``SLOW_(input)``), and any exception it raises goes to ``FAIL_(exc, input)``, which
    raises the error the caller sees or returns the value of a run in OPA's
    iteration order (``Exception`` is bound by name: the
    generated code's ``__builtins__`` are empty)."""
    if type(default) not in _PLAIN_TYPES and default is not UNDEF:
        return None
    entries = []
    parsed: dict[str, list[pyast.FunctionDef] | None] = {}  # (a rule's definitions share its chunk)
    for fn in fns:
        tree = _function_tree(program, getattr(fn, "__name__", ""), parsed)
        if tree is None:
            return None
        entries.append(tree)
    if not entries:
        return None
    # The rules called, transitively: each one's chunk (its definitions and memoising function).
    called: list[pyast.FunctionDef] = []
    seen: set[str] = set()
    pending = set().union(*map(_rule_calls, entries))
    while pending:
        chunk = "R" + _RULE_FUNCTION.fullmatch(pending.pop()).group(1)  # type: ignore[union-attr]
        if chunk in seen:
            continue
        seen.add(chunk)
        functions = _chunk_trees(program, chunk)
        if functions is None:
            return None
        called += functions
        pending |= set().union(*map(_rule_calls, functions))
    # Every clock read of an evaluation must agree: a local suffices when one definition reads it.
    clocks = sum(any(isinstance(n, pyast.Attribute) and _is_ctx(n.value) and n.attr == "now_ns" for n in pyast.walk(f)) for f in entries)
    memo = bool(called) or clocks > 1
    # The namespace after the chunks' code was written (it may have brought in constants).
    namespace = dict(program.namespace)
    namespace.update(
        NEW_CONTEXT=new_context, time_ns=time.time_ns, DEFAULT_=default, DATA_=data, CONVERT_=convert, EXCEPTION_=Exception, **(guard or {})
    )
    detach = _Detach(memo, namespace, new_context)
    tops = []
    for i, tree in enumerate(entries):
        tree = detach.visit(tree)
        tree.name = f"P{i}"
        tops.append(tree)
    called = [detach.visit(f) for f in called]
    if detach.member_lookups and guard is None:
        return None  # (no context to re-run a call whose whole set raised)
    fold_definitions(called)
    probes = MemoProbes(called)
    for function in (*tops, *called):
        input_copies(function)
        type_tests_once(function)
        constant_loops(function, namespace)
        probes.visit(function)
    inline_single_calls(tops, called)
    # Definitions that return only plain constants (or undefined) give the
    # rule's value as it is; any other value goes through ``convert``.
    # (A called rule written into an entry leaves calls of its definitions,
    # which are among ``called``: deferred, they are not in the namespace yet.)
    converts = not _checked(tops, namespace, plain_returns=True, beside=called)
    if converts and (convert is None or not _checked(tops, namespace, plain_returns=False, beside=called)):
        return None
    if not _checked(called, namespace, plain_returns=False):
        return None
    args = f"input, {_MEMO}" if memo else "input"
    calls = [f"    r = P{i}({args})" if i == 0 else f"    if r is UNDEF: r = P{i}({args})" for i in range(len(tops))]
    tail = ["    if r is True or r is False or r is None or r is UNDEF: return r", "    return CONVERT_(r)"] if converts else ["    return r"]
    chain_text = ["def P(input):", *([f"    {_MEMO} = {{}}"] if memo else []), *calls, "    if r is UNDEF: r = DEFAULT_", *tail]
    with python_ast_lock:
        chain = pyast.parse("\n".join(chain_text)).body[0]
        assert isinstance(chain, pyast.FunctionDef)
        entry = chain
        inlined = None if converts else _inlined(tops, memo)
        if inlined is not None:
            entry, tops = inlined, []
        elif len(tops) == 1 and not memo and not converts:
            # One definition: its undefined is the default, with no call between.
            entry = tops.pop()
            for node in pyast.walk(entry):
                if isinstance(node, pyast.Return) and isinstance(node.value, pyast.Name) and node.value.id == "UNDEF":
                    node.value.id = "DEFAULT_"
        if guard is not None:
            _guard(entry, detach.member_lookups)
        module = pyast.fix_missing_locations(pyast.Module(body=[*called, *tops, entry], type_ignores=[]))
        try:
            exec(compile(module, "<pyrego prepared rule>", "exec"), namespace)  # noqa: S102 - the program's own generated code, rewritten
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            return None
    return namespace[entry.name]  # type: ignore[no-any-return]


def _inlined(tops: list[pyast.FunctionDef], memo: bool) -> pyast.FunctionDef | None:
    """The definitions ``tops`` written into one function of the input, each
    in a ``while True:`` block that its undefined leaves (``return UNDEF``
    becomes ``break``) for the next, then the default: no call per
    definition. None where a definition's undefined is returned from inside
    a loop (a ``break`` there would leave that loop instead; a value
    returned from a loop is the function's). Their values must be plain
    constants (see _checked)."""
    if any(_undefined_return_in_loop(top) for top in tops):
        return None
    template = pyast.parse(f"def P(input):\n    {_MEMO} = {{}}\n    return DEFAULT_").body[0]
    assert isinstance(template, pyast.FunctionDef)
    body: list[pyast.stmt] = [template.body[0]] if memo else []
    blocks = []
    for top in tops:
        block = _UndefinedLeaves().visit(pyast.Module(body=top.body, type_ignores=[])).body
        # (``now_ = None`` first of all: its definition alone reads ``now_``.)
        body += [statement for statement in block if _is_clock_start(statement)]
        block = [statement for statement in block if not _is_clock_start(statement)]
        blocks.append(block)
    # Leading steps that consecutive definitions share are taken once.
    template.body = [*body, *share_prefixes(blocks), template.body[1]]
    return template


def _is_clock_start(statement: pyast.stmt) -> bool:
    return (
        isinstance(statement, pyast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], pyast.Name)
        and statement.targets[0].id == _NOW
        and isinstance(statement.value, pyast.Constant)
        and statement.value.value is None
    )


class _UndefinedLeaves(pyast.NodeTransformer):
    """``return UNDEF`` as ``break`` (see _inlined)."""

    def visit_Return(self, node: pyast.Return) -> pyast.AST:
        return pyast.copy_location(pyast.Break(), node) if _is_undefined_return(node) else node


def _undefined_return_in_loop(function: pyast.FunctionDef) -> bool:
    """Whether ``function`` returns undefined from inside a loop (one walk, no recursion)."""
    stack: list[tuple[pyast.AST, bool]] = [(function, False)]
    while stack:
        node, in_loop = stack.pop()
        if in_loop and _is_undefined_return(node):
            return True
        inner = in_loop or isinstance(node, (pyast.For, pyast.While))
        stack.extend((child, inner) for child in pyast.iter_child_nodes(node))
    return False


def _is_undefined_return(node: pyast.AST) -> bool:
    return isinstance(node, pyast.Return) and isinstance(node.value, pyast.Name) and node.value.id == "UNDEF"


_GUARD = """
def guarded(input):
    if ENGINE_STATE_["_rule_fns"] is not TABLE_: return SLOW_(input)
    try:
        pass
    except EXCEPTION_ as exc_:
        return FAIL_(exc_, input)
"""


def _guard(function: pyast.FunctionDef, rerun: bool) -> None:
    """``function``'s body behind the check and in the handler that ``guard``
    names (see input_function); ``rerun``: an exception hands the call to
    ``SLOW_`` instead (the code read whole what a context reads in part)."""
    template = pyast.parse(_GUARD).body[0]
    assert isinstance(template, pyast.FunctionDef)
    check, handler = template.body
    assert isinstance(handler, pyast.Try)
    if rerun:
        handler.handlers[0].body = pyast.parse("return SLOW_(input)").body
    handler.body = function.body
    function.body = [check, handler]


__all__ = ["input_function"]
