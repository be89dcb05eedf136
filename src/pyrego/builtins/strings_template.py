"""``strings.render_template``: the part of Go's ``text/template`` OPA users reach.

OPA converts the variables object to Go JSON values (objects become maps with
string keys, arrays slices, numbers ``json.Number`` — a string type that
prints as its text and is always "true" in a condition) and runs Go's
template engine on them. A missing key renders as ``<undefined>`` (OPA
replaces Go's ``<no value>``).

Supported: text with ``{{- ... -}}`` trimming and ``{{/* comments */}}``;
``{{pipeline}}``, ``if``/``else if``/``else``, ``range`` (with ``$i, $v :=``
and ``else``), ``with``, ``break``/``continue``, variables (``$x := ...``,
``$x = ...``, ``$``), fields (``.a.b``, ``$x.a``), parenthesised pipelines,
string/number/bool/nil literals, and the functions ``and or not len index
slice eq ne lt le gt ge print printf println html js urlquery``. ``define``,
``template`` and ``block`` are not supported (an error, as an undefined
template is in Go).

``range`` over a number and nested ranges can repeat a template's text
without end: rendering counts its steps against the evaluation's deadline
and its text against :data:`~.limits.MAX_STRING`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pyrego.builtins.encoding import go_json_loads
from pyrego.builtins.limits import MAX_STRING, TICK, check, check_string_size
from pyrego.builtins.registry import builtin
from pyrego.builtins.sprintf import format_value
from pyrego.builtins.strings_template_values import (
    ARITY,
    FUNCS,
    NO_VALUE,
    ExecError,
    at,
    go_print,
    go_type,
    to_go,
    truth,
)
from pyrego.builtins.types import obj_operand, str_operand
from pyrego.runtime.builtin_errors import BuiltinError
from pyrego.runtime.context import EvalContext

# ---------------------------------------------------------------- errors


class TemplateError(Exception):
    pass


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


# ---------------------------------------------------------------- parse tree


@dataclass
class _Operand:
    kind: str  # dot, field, var, str, num, bool, nil, ident, pipe
    value: Any = None
    chain: tuple[str, ...] = ()
    pos: int = 0
    text: str = ""


@dataclass
class _Cmd:
    args: list[_Operand]
    pos: int
    text: str


@dataclass
class _Pipe:
    decls: list[str]
    assign: bool
    cmds: list[_Cmd]
    pos: int
    text: str


@dataclass
class _Node:
    kind: str  # text, action, if, range, with, break, continue, template
    text: str = ""
    pipe: _Pipe | None = None
    body: list[_Node] = field(default_factory=list)
    orelse: list[_Node] = field(default_factory=list)
    pos: int = 0
    value: Any = None


_KEYWORDS = {"if", "else", "end", "range", "with", "define", "template", "block", "break", "continue", "nil"}
_SPACE = " \t\r\n"

# A lexed item: (kind, text, source offset of the text, line)
_Item = tuple[str, str, int, int]


def _line_of(src: str, pos: int) -> int:
    return src.count("\n", 0, pos) + 1


def _lex_actions(src: str) -> list[_Item]:
    """Split template text into text and action items, applying ``{{-``/``-}}`` trims."""
    items: list[_Item] = []
    i = 0
    n = len(src)
    trim_next = False
    while i < n:
        j = src.find("{{", i)
        text = src[i:] if j < 0 else src[i:j]
        if trim_next:
            text = text.lstrip(_SPACE)
        if j < 0:
            items.append(("text", text, i, 0))
            break
        k = j + 2
        if k + 1 < n and src[k] == "-" and src[k + 1] in _SPACE:
            text = text.rstrip(_SPACE)
            k += 1
        items.append(("text", text, i, 0))
        line = _line_of(src, j)
        m = k
        if src[k:].lstrip(_SPACE).startswith("/*"):
            end_comment = src.find("*/", k)
            if end_comment < 0:
                raise TemplateError(f"template: template:{line}: unclosed comment")
            m = end_comment + 2
        quote = ""
        while m < n:
            c = src[m]
            if quote:
                if c == "\\" and quote != "`":
                    m += 2
                    continue
                if c == quote:
                    quote = ""
            elif c in "\"'`":
                quote = c
            elif src.startswith("}}", m):
                break
            m += 1
        if m >= n:
            raise TemplateError(f"template: template:{line}: unclosed action")
        body = src[k:m]
        trim_next = len(body) >= 2 and body[-1] == "-" and body[-2] in _SPACE
        if trim_next:
            body = body[:-1]
        if not body.lstrip(_SPACE).startswith("/*"):
            items.append(("action", body, k, line))
        i = m + 2
    return [it for it in items if it[0] != "text" or it[1]]


def _tokenize(body: str, base: int, line: int) -> list[tuple[str, int]]:
    """The tokens of an action body, each with its source offset."""
    toks: list[tuple[str, int]] = []
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c in _SPACE:
            i += 1
            continue
        if c == '"' or c == "'":
            j = i + 1
            while j < n and body[j] != c:
                j += 2 if body[j] == "\\" else 1
            if j >= n:
                raise TemplateError(f"template: template:{line}: unterminated quoted string")
            toks.append((body[i : j + 1], base + i))
            i = j + 1
            continue
        if c == "`":
            j = body.find("`", i + 1)
            if j < 0:
                raise TemplateError(f"template: template:{line}: unterminated raw quoted string")
            toks.append((body[i : j + 1], base + i))
            i = j + 1
            continue
        if c in "()|,":
            toks.append((c, base + i))
            i += 1
            continue
        if body.startswith(":=", i):
            toks.append((":=", base + i))
            i += 2
            continue
        if c == "=":
            toks.append(("=", base + i))
            i += 1
            continue
        j = i
        while j < n and body[j] not in " \t\r\n()|,=\"'`" and not body.startswith(":=", j):
            j += 1
        toks.append((body[i:j], base + i))
        i = j
    return toks


class _Parser:
    def __init__(self, src: str) -> None:
        self.items = _lex_actions(src)
        self.pos = 0
        # Variables in scope while parsing (Go rejects undefined ones at parse time).
        self.vars: list[str] = ["$"]

    def parse(self) -> list[_Node]:
        nodes, stop = self.parse_list()
        if stop is not None:
            raise TemplateError(f"template: template:{stop[1]}: unexpected {{{{{stop[0]}}}}}")
        return nodes

    def parse_list(self) -> tuple[list[_Node], tuple[str, int, list[tuple[str, int]]] | None]:
        """Nodes up to an {{end}} or {{else ...}}; returns the stopping keyword too."""
        nodes: list[_Node] = []
        while self.pos < len(self.items):
            kind, text, offset, line = self.items[self.pos]
            self.pos += 1
            if kind == "text":
                nodes.append(_Node("text", text=text))
                continue
            toks = _tokenize(text, offset, line)
            if not toks:
                raise TemplateError(f"template: template:{line}: missing value for command")
            head = toks[0][0]
            if head in ("end", "else"):
                return nodes, (head, line, toks[1:])
            if head in ("if", "range", "with"):
                nodes.append(self.parse_control(head, toks[1:], line))
            elif head in ("break", "continue"):
                nodes.append(_Node(head))
            elif head == "template" and len(toks) >= 2:
                # No {{define}} is supported, so running any {{template}} fails as in Go.
                name = _unquote(toks[1][0], line)
                source = "{{" + " ".join(t for t, _ in toks) + "}}"
                nodes.append(_Node("template", text=source, pos=toks[1][1], value=name))
            elif head in ("define", "block", "template"):
                raise TemplateError(f"template: template:{line}: {{{{{head}}}}} is not supported")
            else:
                nodes.append(_Node("action", pipe=self.parse_pipe(toks, line)))
        return nodes, None

    def parse_control(self, kind: str, toks: list[tuple[str, int]], line: int) -> _Node:
        mark = len(self.vars)
        try:
            return self._parse_control(kind, toks, line)
        finally:
            del self.vars[mark:]

    def _parse_control(self, kind: str, toks: list[tuple[str, int]], line: int) -> _Node:
        node = _Node(kind, pipe=self.parse_pipe(toks, line, kind))
        body, stop = self.parse_list()
        node.body = body
        if stop is None:
            raise TemplateError(f"template: template:{line}: unexpected EOF")
        word, stop_line, rest = stop
        if word == "else":
            if rest and rest[0][0] == kind and kind in ("if", "with"):
                # {{else if ...}}: a nested control sharing this one's {{end}}.
                node.orelse = [self.parse_control(kind, rest[1:], stop_line)]
                return node
            if rest:
                raise TemplateError(f"template: template:{stop_line}: unexpected {rest[0][0]!r} in else")
            orelse, stop = self.parse_list()
            node.orelse = orelse
            if stop is None:
                raise TemplateError(f"template: template:{stop_line}: unexpected EOF")
            if stop[0] != "end":
                raise TemplateError(f"template: template:{stop[1]}: expected end; found {{{{{stop[0]}}}}}")
        return node

    def parse_pipe(self, toks: list[tuple[str, int]], line: int, context: str = "command") -> _Pipe:
        if not toks:
            raise TemplateError(f"template: template:{line}: missing value for {context}")
        decls: list[str] = []
        assign = False
        k = 0
        # Declarations: $x := ..., $x = ..., $i, $v := ...
        while k < len(toks) and toks[k][0].startswith("$") and "." not in toks[k][0]:
            nxt = toks[k + 1][0] if k + 1 < len(toks) else ""
            if nxt in (":=", "="):
                decls.append(toks[k][0])
                assign = nxt == "="
                k += 2
                break
            if nxt == ",":
                decls.append(toks[k][0])
                k += 2
                continue
            decls, k = [], 0
            break
        for name in decls:
            if assign:
                self.check_var(name, line)
            else:
                self.vars.append(name)
        pos = toks[k][1] if k < len(toks) else toks[-1][1]
        cmds: list[_Cmd] = []
        cur: list[_Operand] = []
        i = k
        while i < len(toks):
            tok = toks[i][0]
            if tok == "|":
                if not cur:
                    raise TemplateError(f"template: template:{line}: missing command")
                cmds.append(_cmd(cur))
                cur = []
                i += 1
                continue
            operand, i = self.parse_operand(toks, i, line)
            cur.append(operand)
        if cur:
            cmds.append(_cmd(cur))
        if not cmds:
            raise TemplateError(f"template: template:{line}: missing value for {context}")
        text = " | ".join(c.text for c in cmds)
        if decls:
            text = ", ".join(decls) + (" = " if assign else " := ") + text
        return _Pipe(decls, assign, cmds, pos, text)

    def parse_operand(self, toks: list[tuple[str, int]], i: int, line: int) -> tuple[_Operand, int]:
        tok, pos = toks[i]
        if tok == "(":
            depth = 1
            j = i + 1
            while j < len(toks) and depth:
                if toks[j][0] == "(":
                    depth += 1
                elif toks[j][0] == ")":
                    depth -= 1
                j += 1
            if depth:
                raise TemplateError(f"template: template:{line}: unclosed left paren")
            inner = self.parse_pipe(toks[i + 1 : j - 1], line)
            op = _Operand("pipe", inner, pos=pos, text="(" + inner.text + ")")
            # A field chain may follow the closing paren: (...).a.b
            if j < len(toks) and toks[j][0].startswith(".") and len(toks[j][0]) > 1:
                op.chain = tuple(toks[j][0][1:].split("."))
                op.text += toks[j][0]
                j += 1
            return op, j
        if tok in (")", ",", ":=", "="):
            raise TemplateError(f"template: template:{line}: unexpected {tok!r} in operand")
        if tok.startswith("$"):
            self.check_var(tok.partition(".")[0], line)
        return _parse_atom(tok, pos, line), i + 1

    def check_var(self, name: str, line: int) -> None:
        if name not in self.vars:
            raise TemplateError(f'template: template:{line}: undefined variable "{name}"')


def _cmd(args: list[_Operand]) -> _Cmd:
    return _Cmd(args, args[0].pos, " ".join(a.text for a in args))


def _parse_atom(tok: str, pos: int, line: int) -> _Operand:
    if tok == ".":
        return _Operand("dot", pos=pos, text=".")
    if tok.startswith("."):
        chain = tuple(tok[1:].split("."))
        # Go places a chain of fields at its second field.
        at = pos + len(chain[0]) + 1 if len(chain) > 1 else pos
        return _Operand("field", chain=chain, pos=at, text=tok)
    if tok.startswith("$"):
        name, _, rest = tok.partition(".")
        return _Operand("var", name, tuple(rest.split(".")) if rest else (), pos=pos, text=tok)
    if tok[0] == '"':
        return _Operand("str", _unquote(tok, line), pos=pos, text=tok)
    if tok[0] == "`":
        return _Operand("str", tok[1:-1], pos=pos, text=tok)
    if tok[0] == "'":
        return _Operand("num", ord(_unquote('"' + tok[1:-1] + '"', line)[:1] or "\0"), pos=pos, text=tok)
    if tok in ("true", "false"):
        return _Operand("bool", tok == "true", pos=pos, text=tok)
    if tok == "nil":
        return _Operand("nil", pos=pos, text=tok)
    if tok[0] in "+-0123456789.":
        try:
            return _Operand("num", int(tok, 0), pos=pos, text=tok)
        except ValueError:
            try:
                return _Operand("num", float(tok), pos=pos, text=tok)
            except ValueError:
                raise TemplateError(f"template: template:{line}: bad number syntax: {tok!r}")
    if tok in _KEYWORDS:
        raise TemplateError(f"template: template:{line}: unexpected <{tok}> in command")
    if not (tok[0].isalpha() or tok[0] == "_"):
        raise TemplateError(f"template: template:{line}: unexpected {tok!r} in command")
    if tok not in FUNCS:
        raise TemplateError(f'template: template:{line}: function "{tok}" not defined')
    return _Operand("ident", tok, pos=pos, text=tok)


def _unquote(tok: str, line: int) -> str:
    if tok[:1] == "`":
        return tok[1:-1]
    try:
        return str(json.loads(tok))
    except ValueError:
        raise TemplateError(f"template: template:{line}: malformed string {tok}")


# ---------------------------------------------------------------- execution


class _State:
    def __init__(self, data: Any, ctx: EvalContext | None = None) -> None:
        self.out: list[str] = []
        self.vars: list[tuple[str, Any]] = [("$", data)]
        self.ctx = ctx
        self.size = 0  # characters written
        self.steps = 0  # nodes executed

    def write(self, text: str) -> None:
        self.out.append(text)
        self.size += len(text)
        if self.size > MAX_STRING:
            check_string_size(self.size, "the rendered text")

    def lookup(self, name: str) -> Any:
        for n, v in reversed(self.vars):
            if n == name:
                return v
        raise ExecError(f"undefined variable: {name}")

    def set_var(self, name: str, value: Any) -> None:
        for i in range(len(self.vars) - 1, -1, -1):
            if self.vars[i][0] == name:
                self.vars[i] = (name, value)
                return
        raise ExecError(f"undefined variable: {name}")


def _field(value: Any, name: str) -> Any:
    if value is NO_VALUE:
        return NO_VALUE
    if value is None:
        raise ExecError(f"nil pointer evaluating interface {{}}.{name}")
    if type(value) is dict:
        return value.get(name, NO_VALUE)
    # Values from the data are Go interface{} values.
    kind = go_type(value) if type(value) in (int, float) else "interface {}"
    raise ExecError(f"can't evaluate field {name} in type {kind}")


def _chain(value: Any, chain: tuple[str, ...]) -> Any:
    for name in chain:
        value = _field(value, name)
    return value


def _eval_operand(st: _State, op: _Operand, dot: Any) -> Any:
    k = op.kind
    try:
        if k == "dot":
            return dot
        if k == "field":
            return _chain(dot, op.chain)
        if k == "var":
            return _chain(st.lookup(op.value), op.chain)
        if k in ("str", "num", "bool"):
            return op.value
        if k == "nil":
            return None
        if k == "pipe":
            return _chain(_eval_pipe(st, op.value, dot), op.chain)
        if k == "ident":
            return _call(st, op.value, [], dot, _MISSING_ARG, op.pos, op.text)
    except ExecError as exc:
        raise at(exc, op.pos, op.text)
    raise ExecError(f"can't evaluate {k}")


def _eval_pipe(st: _State, pipe: _Pipe, dot: Any) -> Any:
    final: Any = _MISSING_ARG
    for cmd in pipe.cmds:
        head = cmd.args[0]
        if head.kind == "ident":
            final = _call(st, head.value, cmd.args[1:], dot, final, cmd.pos, cmd.text)
            continue
        if head.kind == "nil":
            raise at(ExecError("nil is not a command"), cmd.pos, cmd.text)
        if len(cmd.args) > 1 or final is not _MISSING_ARG:
            if head.kind in ("field", "var") and head.chain:
                message = f"{head.chain[-1]} is not a method but has arguments"
                raise at(ExecError(message), head.pos, head.text)
            raise at(ExecError(f"can't give argument to non-function {head.text}"), cmd.pos, cmd.text)
        final = _eval_operand(st, head, dot)
    if pipe.decls:
        if pipe.assign:
            try:
                st.set_var(pipe.decls[0], final)
            except ExecError as exc:
                raise at(exc, pipe.pos, pipe.text)
        else:
            st.vars.append((pipe.decls[0], final))
    return final


_MISSING_ARG = object()


class _Given:
    """A value piped into and/or, which is already evaluated."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _call(st: _State, name: str, operands: list[_Operand], dot: Any, final: Any, pos: int, text: str) -> Any:
    fn = FUNCS[name]
    if name in ("and", "or"):
        # Short-circuit: arguments are evaluated lazily.
        items: list[Any] = list(operands)
        if final is not _MISSING_ARG:
            items.append(_Given(final))
        if not items:
            raise at(ExecError(f"wrong number of args for {name}: want at least 1 got 0"), pos, text)
        result: Any = None
        for item in items:
            result = item.value if type(item) is _Given else _eval_operand(st, item, dot)
            if (name == "and") != truth(result):
                return result
        return result
    n_args = len(operands) + (final is not _MISSING_ARG)
    low, high = ARITY.get(name, (0, None))
    if n_args < low or (high is not None and n_args > high):
        want = f"want {low}" if high == low else f"want at least {low}"
        raise at(ExecError(f"wrong number of args for {name}: {want} got {n_args}"), pos, text)
    args = [_eval_operand(st, op, dot) for op in operands]
    if final is not _MISSING_ARG:
        args.append(final)
    try:
        return fn(*args)
    except ExecError as exc:
        raise at(ExecError(f"error calling {name}: {exc.message}"), pos, text)


def _execute(st: _State, nodes: list[_Node], dot: Any) -> None:
    for node in nodes:
        st.steps += 1
        if not st.steps % TICK and st.ctx is not None:
            check(st.ctx)
        k = node.kind
        if k == "text":
            st.write(node.text)
        elif k == "action":
            assert node.pipe is not None
            value = _eval_pipe(st, node.pipe, dot)
            if not node.pipe.decls:
                st.write(go_print(value))
        elif k == "if" or k == "with":
            assert node.pipe is not None
            mark = len(st.vars)
            value = _eval_pipe(st, node.pipe, dot)
            if truth(value):
                _execute(st, node.body, value if k == "with" else dot)
            else:
                _execute(st, node.orelse, dot)
            del st.vars[mark:]
        elif k == "range":
            _exec_range(st, node, dot)
        elif k == "break":
            raise _Break()
        elif k == "continue":
            raise _Continue()
        elif k == "template":
            raise at(ExecError(f'template "{node.value}" not defined'), node.pos, node.text)


def _exec_range(st: _State, node: _Node, dot: Any) -> None:
    assert node.pipe is not None
    pipe = node.pipe
    mark = len(st.vars)
    decls, pipe.decls = pipe.decls, []
    try:
        value = _eval_pipe(st, pipe, dot)
    finally:
        pipe.decls = decls
    t = type(value)
    pairs: Any
    if t is list:
        pairs = list(enumerate(value))
    elif t is dict:
        pairs = [(k, value[k]) for k in sorted(value)]
    elif value is None or value is NO_VALUE:
        pairs = []
    elif t is int:
        if len(decls) > 1:
            last = pipe.cmds[-1].args[-1]  # Go names the last argument
            raise at(ExecError(f"can't use {go_print(value)} to iterate over more than one variable"), last.pos, last.text)
        pairs = zip(range(value), range(value)) if value > 0 else []  # lazily: it may be huge
    else:
        raise at(ExecError(f"range can't iterate over {go_print(value)}"), pipe.pos, pipe.text)
    if pairs == []:
        _execute(st, node.orelse, dot)
        return
    for key, elem in pairs:
        inner = len(st.vars)
        if len(decls) == 1:
            st.vars.append((decls[0], elem))
        elif len(decls) == 2:
            st.vars.append((decls[0], key))
            st.vars.append((decls[1], elem))
        try:
            _execute(st, node.body, elem)
        except _Continue:
            pass
        except _Break:
            del st.vars[inner:]
            break
        del st.vars[inner:]
    del st.vars[mark:]


def render(template: str, data: Any, ctx: EvalContext | None = None) -> str:
    """Render a Go template over Go JSON values; raise TemplateError on failure."""
    nodes = _Parser(template).parse()
    st = _State(data, ctx)
    try:
        _execute(st, nodes, data)
    except (_Break, _Continue):
        raise TemplateError("template: template: {{break}} or {{continue}} outside {{range}}")
    except ExecError as exc:
        where = ""
        if exc.node is not None:
            pos, text = exc.node
            line = _line_of(template, pos)
            newline = template.rfind("\n", 0, pos)
            col = pos if newline < 0 else pos - newline - 1
            where = f":{line}:{col}: executing \"template\" at <{text}>"
        else:
            where = ': executing "template"'
        raise TemplateError(f"template: template{where}: {exc.message}")
    return "".join(st.out).replace("<no value>", "<undefined>")


def _plain_json(v: Any) -> bool:
    """Whether ``v``'s Rego text is JSON: no set, no non-string key, no
    character Go's quoting writes as an escape JSON lacks (``\\x00``, ``\\a``)."""
    t = type(v)
    if t is str:
        return not _CONTROL.search(v)
    if t is list or t is tuple:
        return all(_plain_json(x) for x in v)
    if t is dict:
        return all(type(k) is str and not _CONTROL.search(k) and _plain_json(x) for k, x in v.items())
    return t is not frozenset


_CONTROL = re.compile("[\x00-\x1f\x7f]")


@builtin("strings.render_template", 2, cancellable=True)
def render_template(ctx: EvalContext, template: Any, variables: Any) -> str:
    text = str_operand(template, 1)
    obj = obj_operand(variables, 2)
    if not _plain_json(obj):
        # OPA reads the variables back from their Rego text as JSON: a set, a
        # non-string key or a \x escape fails there, with Go's JSON error
        go_json_loads(format_value(obj))
    data = to_go(obj)
    try:
        return render(text, data, ctx)
    except TemplateError as exc:
        raise BuiltinError(str(exc))
