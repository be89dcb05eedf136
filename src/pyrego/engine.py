"""The public API: :class:`Engine`.

Method names follow regorus's Python binding, so code can switch engines::

    engine = pyrego.Engine()
    engine.add_policy("authz.rego", text)
    engine.set_input({"user": "alice"})
    engine.eval_rule("data.authz.allow")      # -> True / pyrego.UNDEFINED / ...
    engine.eval_query("data.authz.allow = x")  # OPA's result shape

Policies are compiled to Python once (and cached for the process, keyed by
the policy texts); an evaluation is one call into the generated code, reading the
caller's input and data in place.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from pyrego.ast import nodes as ast
from pyrego.codegen.bounded import BoundedDict
from pyrego.codegen.build_cache import ParsedPolicy, parse_cached, program_cache
from pyrego.codegen.program import PATHS_KEPT, Program
from pyrego.compile.checks import check_modules
from pyrego.compile.ground import ground_value
from pyrego.compile.pipeline import compile_program
from pyrego.engine_config import ConfigurationMixin
from pyrego.engine_support import (
    NO_INPUT,
    CompiledProgram,
    PolicySource,
    PreparedRule,
    _check_data_conflicts,
    _first_non_constant,
    _merge,
    _package_name,
    _rule_location,
    rule_path,
    rule_value,
)
from pyrego.errors import (
    ArgumentError,
    DataError,
    EvalError,
    EvalRecursionError,
    Location,
    RegoCompileError,
    RegoError,
    RegoParseError,
)
from pyrego.instrument.engine_mixin import InstrumentationMixin
from pyrego.loader import data_document, iter_files, read_policy
from pyrego.parse.parser import parse_module, parse_term
from pyrego.queries import CompiledQuery, QueryMixin
from pyrego.runtime.context import DEFAULT_CONFIG, EvalConfig, EvalContext
from pyrego.runtime.convert import from_python, loads
from pyrego.runtime.values import UNDEF

if TYPE_CHECKING:
    from pyrego.typecheck.schemas import SchemaSet


#: The Python recursion limit pyrego needs: a rule chain 1,000 deep, a body of
#: 600 expressions and values nested 1,000 deep (all of which OPA takes) each
#: need a few Python frames per level. Raised at import when lower; since
#: Python 3.11 calls between Python functions use no C stack, this does not
#: risk the C stack, and C-level recursion stays well inside 8 MB at this depth.
RECURSION_LIMIT = 4000
if sys.getrecursionlimit() < RECURSION_LIMIT:
    sys.setrecursionlimit(RECURSION_LIMIT)
_NO_INPUT = NO_INPUT


#: A fresh engine's data: none (never changed in place; see Engine._data).
_NO_DATA: dict[Any, Any] = {}


def _attach_line(err: RegoError, text: str) -> None:
    """Give ``err`` the line of ``text`` its location names (when it has none yet)."""
    loc = err.location
    if loc is None or err.source_line is not None:
        return
    lines = text.splitlines()
    if 1 <= loc.row <= len(lines):
        err.source_line = lines[loc.row - 1]
        err.args = (err.format(),)


class Engine(ConfigurationMixin, QueryMixin, InstrumentationMixin):
    """A Rego engine: policies, data and input in; decisions out."""

    # Settings and state that start the same in every engine and are only
    # ever replaced, never changed in place: read from the class until an
    # engine sets its own (a fresh engine then sets a dozen attributes fewer).
    _input: Any = UNDEF
    _rego_v0 = False
    _strict = False
    _program: Program | None = None
    # Whether the program was checked against the data since either changed.
    _data_checked = True
    # (version, data, error) of the last failed compilation, raised again
    # until the policies or the data change.
    _failure: tuple[int, Any, RegoError] | None = None
    _gather_prints = True
    _extra_mockable: frozenset[str] = frozenset()
    _timeout: float | None = None
    _allowed_builtins: frozenset[str] | None = None
    _type_check = True
    _strict_mode = False
    _schemas: SchemaSet | None = None
    _schema_key: str | None = None
    _config: EvalConfig | None = None
    # The last evaluation's context, for the next one to reuse.
    _spare: EvalContext | None = None
    # Rules prepared (prepare_rule, and eval_many's small batches), by path; a
    # plain dict, emptied when full (a bounded one's bookkeeping costs more than a small batch).
    _prepared_rules: dict[str, PreparedRule] = {}
    _version = 0
    # Compiled queries (made on first use: most engines only call eval_rule);
    # replaced, not emptied, when the policies or data change (a query
    # compiled meanwhile for the old ones goes into the table they replaced).
    _queries: BoundedDict[str, CompiledQuery] | None = None
    # print() output not taken yet (made when the first evaluation's settings
    # are); the oldest lines go past PRINTS_KEPT.
    _prints: deque[list[str | None]] | None = None
    # What capabilities keep per engine (see CompiledProgram.state), made on first use.
    _state: dict[str, Any] | None = None
    # Tables only ever replaced, never changed in place (empty ones shared):
    # the policies, ``{path: (text, module)}``; the base documents; the
    # modules that passed the one-module checks when added, by path (see
    # _parse_policy); the runtime options; and the extensions and their ids.
    _policies: dict[str, PolicySource] = {}
    _data: dict[Any, Any] = _NO_DATA
    _checked: dict[str, ParsedPolicy] = {}
    # Whether _policies and _checked are seen by nothing else yet (see
    # _policy_table): a file added then goes in in place, not into copies
    # (a copy per file made adding N files one at a time quadratic).
    _owned = False
    _options: dict[str, Any] = {}
    _extensions: dict[str, Any] = {}
    _extension_ids: dict[str, tuple[int, int, str]] = {}

    def __init__(self) -> None:
        # Each entry holds its program: a program lives while anything that
        # runs its code can still reach it (see Program.__del__).
        # Rule paths resolved, as _resolve_rule describes their entries.
        self._rule_fns: dict[str, tuple[Any, Any, Any, Program | None]] = {}
        # Changes to the policies and the program built from them (not taken
        # when evaluating a compiled program: the hot path has no lock).
        self._lock = threading.Lock()

    # -- policies ----------------------------------------------------------------

    def add_policy(self, path: str, text: str) -> str:
        """Add (or replace) the policy file ``path``; returns its package, e.g. ``data.authz``.

        The text is parsed and checked on its own now: a parse error, or an
        error OPA finds in one module alone (``var x assigned above``,
        ``cannot assign to ref``, ...), is raised here and the engine is left
        as it was. Everything that concerns the program as a whole (an
        undefined function, an unsafe variable, conflicting rules, a type
        error, a rule where the data has a document) is found when all
        modules are compiled together, at the first evaluation or by
        :meth:`compile`, as in OPA: files may be added in any order, each
        using rules and functions of files added after it."""
        if type(path) is not str or type(text) is not str:
            raise ArgumentError("add_policy takes a path and a policy text (both strings)")
        parsed = self._parse_policy(path, text)
        self._add_parsed({path: parsed})
        return parsed.package

    def add_policies(self, policies: Mapping[str, str]) -> list[str]:
        """Add (or replace) several policy files at once (``{path: text}``); returns their packages.

        As :meth:`add_policy` for each file: on a parse error in any of them
        nothing is added."""
        if type(policies) is not dict and not isinstance(policies, Mapping):  # (a dict: no ABC check)
            raise ArgumentError(f"add_policies takes a mapping of paths to policy texts, not {type(policies).__name__}")
        if len(policies) == 1:  # (most calls: no tables of several files to build)
            for path, text in policies.items():
                if type(path) is str and type(text) is str:
                    parsed = self._parse_policy(path, text)
                    self._add_parsed({path: parsed})
                    return [parsed.package]
        for path, text in policies.items():
            if type(path) is not str or type(text) is not str:
                raise ArgumentError("add_policies takes a mapping of paths to policy texts (strings)")
        _, checked = self._parse_policies(dict(policies))
        self._add_parsed(checked)
        return [c.package for c in checked.values()]

    def remove_policy(self, path: str) -> str:
        """Remove the policy file ``path`` added before; returns its package.

        Raises :class:`ArgumentError` when no policy of that path was added."""
        policies = self._policy_table()
        entry = policies.get(path) if type(path) is str else None
        if entry is None:
            raise ArgumentError(f"no policy {path!r} was added")
        policies = dict(policies)
        del policies[path]
        self._set_policies(policies, {})
        return _package_name(entry[1])

    def add_policy_from_file(self, path: str) -> str:
        """Read and add the policy file at ``path``."""
        if not isinstance(path, (str, os.PathLike)):
            raise ArgumentError(f"add_policy_from_file takes a file path, not {type(path).__name__}")
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise RegoParseError(f"cannot read policy: {exc}", Location(str(path), 1, 1)) from None
        return self.add_policy(str(path), text)

    def add_policies_from_dir(self, path: str | os.PathLike[str], *, recursive: bool = True) -> list[str]:
        """Load a policy repository as ``opa eval -d DIR`` does; returns the module names added.

        Every ``.rego`` file under ``path`` becomes a module named by its path
        relative to ``path`` (``lib/k8s.rego``: errors show that name), and
        every ``.json``/``.yaml``/``.yml`` file is merged into ``data`` at the
        path of the folders that hold it (``users/data.json`` sets
        ``data.users``; a file directly in ``path`` merges at the root).
        ``recursive=False`` takes only the files directly in ``path``. A file
        that cannot be read or parsed, or data that clashes, raises before
        anything is added: the engine is left as it was. A module name already
        added is replaced, as with :meth:`add_policy`. The modules are
        compiled together with the others at the next evaluation (or
        :meth:`compile`).
        """
        if not isinstance(path, (str, os.PathLike)):
            raise ArgumentError(f"add_policies_from_dir takes a folder path, not {type(path).__name__}")
        root = Path(path)
        texts: dict[str, str] = {}
        data = self._data
        for file in iter_files(root, recursive=recursive, relative_to=root if root.is_dir() else root.parent):
            if file.is_policy:
                texts[file.name] = read_policy(file)
            else:
                data = _merge(data, from_python(data_document(file)), ())
        policies, checked = self._parse_policies(texts)
        self._set_policies({**self._policy_table(), **policies}, checked, data)
        return list(policies)

    def get_packages(self) -> list[str]:
        """The packages of all added policies, sorted."""
        return sorted({_package_name(m) for _, m in self._policy_table().values()})

    def get_policies(self) -> list[dict[str, str]]:
        """Every added policy as ``{"path": ..., "text": ...}``."""
        return [{"path": p, "text": t} for p, (t, _) in self._policy_table().items()]

    def _policy_table(self) -> dict[str, PolicySource]:
        """The policies, ``{path: (text, module)}``, never changed after this
        (the next file added goes into a copy), for any reader."""
        with self._lock:
            self._owned = False
            return self._policies

    def compile(self) -> None:
        """Compile the policies added so far together, now, against the data.

        Raises what the first evaluation would raise for the program as a
        whole (``rego_compile_error``, ``rego_type_error``,
        ``rego_unsafe_var_error``, ``rego_recursion_error``, a rule where the
        data has a document, ...), with OPA's code and file:row:col; the
        engine stays usable, and adding, replacing or removing a module fixes
        it. Evaluations compile by themselves: this is for finding errors
        early (at start-up, in CI)."""
        self._get_program()

    def _parse_policies(
        self, texts: dict[str, str]
    ) -> tuple[dict[str, PolicySource], dict[str, ParsedPolicy]]:
        """:meth:`_parse_policy` for several files. When the one-module checks
        of some fail, their errors are raised together, in OPA's order (all
        files' errors of the first check stage that finds any), as OPA
        reports them for files loaded at once."""
        parsed: dict[str, PolicySource] = {}
        checked: dict[str, ParsedPolicy] = {}
        failed: list[str] = []
        first: RegoError | None = None
        for path, text in texts.items():
            try:
                one = self._parse_policy(path, text)
            except RegoParseError:
                raise
            except RegoError as err:
                first = first or err
                failed.append(path)
                continue
            parsed[path] = one.source
            checked[path] = one
        if first is not None:
            if len(failed) > 1:
                modules = [m for _, m in parsed.values()]
                modules += [parse_module(texts[p], p, rego_v1=not self._rego_v0) for p in failed]
                try:
                    check_modules(modules)
                except RegoError as err:
                    for each in getattr(err, "errors", None) or [err]:
                        if each.location is not None and each.location.file in texts:
                            _attach_line(each, texts[each.location.file])
                    raise
            raise first
        return parsed, checked

    def _parse_policy(self, path: str, text: str) -> ParsedPolicy:
        """Parse ``text`` and run the checks that concern it alone (OPA's stages
        before name resolution): see :class:`ParsedPolicy`."""
        try:
            return parse_cached(text, path, not self._rego_v0)
        except RegoError as err:
            if err.location is not None and err.location.file == path:
                _attach_line(err, text)
            raise

    def _add_parsed(self, parsed: dict[str, ParsedPolicy]) -> None:
        """Add (or replace) ``parsed`` files: in place where no one saw the tables (_owned)."""
        version = self._version
        program = self._known_program(parsed) if not self._policies and self._data is _NO_DATA else None  # (a fresh engine's first files)
        with self._lock:
            if self._owned:
                policies, checked = self._policies, self._checked
            else:
                policies, checked = dict(self._policies), dict(self._checked)
                self._policies, self._checked, self._owned = policies, checked, True
            for path, one in parsed.items():
                policies[path] = one.source
                checked[path] = one
            self._changed(program if self._version == version and self._data is _NO_DATA else None)  # (else changed meanwhile)

    def _set_policies(
        self,
        policies: dict[str, tuple[str, ast.Module]],
        checked: dict[str, ParsedPolicy],
        data: dict[Any, Any] | None = None,
        program: Program | None = None,
    ) -> None:
        """Make ``policies`` the engine's (``checked``: modules that passed the
        one-module checks, by path); they are compiled on first use, unless
        ``program`` is theirs already, checked against ``data``."""
        with self._lock:
            self._policies = policies
            old = self._checked
            if old:
                # (every caller's ``checked`` is of paths in ``policies``; a
                # removed path's entry goes)
                merged = {**old, **checked}
                checked = merged if merged.keys() <= policies.keys() else {p: c for p, c in merged.items() if p in policies}
            self._checked = checked
            self._owned = False  # (``policies`` may be the caller's)
            if data is not None:
                self._data = data
            self._changed(program)

    def _changed(self, program: Program | None) -> None:
        """A new version of the policies (under the lock), whose program is ``program`` if known."""
        self._version += 1
        self._data_checked = program is not None
        self._program = program
        self._config = None  # (made again: with a print hook if the new policies print)
        self._failure = None
        self._rule_fns = {}
        self._prepared_rules = {}
        self._queries = None

    def install_modules(self, policies: dict[str, PolicySource]) -> None:
        """Compile parsed ``policies`` (``{path: (text, module)}``, as ``pyrego
        test`` loads them) with the engine's data now, and make them the
        engine's policies; on an error, change nothing."""
        self._install(policies, self._data)

    def _install(self, policies: dict[str, tuple[str, ast.Module]], data: dict[Any, Any]) -> None:
        """Compile ``policies`` against ``data`` now and make both the engine's; on an error, change nothing."""
        program = self._compile(self._extra_mockable, policies) if policies else None
        if program is not None:
            self._with_source(lambda: _check_data_conflicts(program.tree, data), policies)
        self._set_policies(policies, {}, data, program)

    def _invalidate(self) -> None:
        # Under the lock, with a new version: a program compiled by another
        # thread from the policies before this change is not kept (_get_program).
        with self._lock:
            self._version += 1
            self._program = None
            self._failure = None
            self._rule_fns = {}
            self._prepared_rules = {}
            self._queries = None

    # -- data and input ---------------------------------------------------------------

    def add_data(self, data: Any) -> None:
        """Deep-merge ``data`` (an object) into the base documents; a clash between
        data documents is a DataError, raised here. A rule where the data now has
        a document is OPA's ``rego_compile_error``, raised at the next evaluation
        (or :meth:`compile`)."""
        try:
            data = from_python(data)
            if type(data) is not dict:
                raise DataError("data must be an object")
            merged = _merge(self._data, data, ())
        except RecursionError:
            from pyrego.runtime.input_faults import cycle_message

            where = cycle_message(data, "data")
            raise DataError(f"data contains itself ({where})" if where is not None else "data nested too deeply") from None
        self._set_data(merged)

    def add_data_json(self, text: str) -> None:
        """:meth:`add_data` of a JSON text."""
        if not isinstance(text, (str, bytes, bytearray)):
            raise ArgumentError(f"add_data_json takes JSON text, not {type(text).__name__}")
        self.add_data(loads(text, what="data JSON"))

    def clear_data(self) -> None:
        """Remove every base document."""
        self._set_data({})

    def _set_data(self, data: dict[Any, Any]) -> None:
        # The rules are checked against the new data at the next evaluation:
        # the tables of resolved rules and queries are emptied to get there.
        with self._lock:
            self._data = data
            self._data_checked = False
            self._failure = None
            self._rule_fns = {}
            self._prepared_rules = {}
            self._queries = None

    def set_input(self, value: Any) -> None:
        """Use ``value`` as ``input`` (kept by reference, never modified)."""
        self._input = value

    def set_input_json(self, text: str) -> None:
        """:meth:`set_input` of a JSON text."""
        if not isinstance(text, (str, bytes, bytearray)):
            raise ArgumentError(f"set_input_json takes JSON text, not {type(text).__name__}")
        self._input = loads(text, what="input JSON")

    def set_input_term(self, text: str) -> None:
        """Use a constant Rego term (which may contain sets) as ``input``.

        Only constants: a ref, call, variable or comprehension anywhere in the
        term is refused (nothing is evaluated)."""
        if type(text) is not str:
            raise ArgumentError(f"input term must be a string, not {type(text).__name__}")
        term = parse_term(text, "input")
        bad = _first_non_constant(term)
        if bad is not None:
            raise ArgumentError("input term must be a constant", getattr(bad, "location", None))
        self._input = ground_value(term)

    # -- compilation -------------------------------------------------------------------

    def _get_program(self) -> Program:
        """The compiled program of the engine's policies, checked against its data;
        compiled now if the policies changed since (see :meth:`compile`)."""
        prog = self._program
        if prog is None or not self._data_checked:
            prog = self._build_program()
        return prog

    def program(self) -> CompiledProgram:
        """The compiled program (compiled now if the policies changed since), as
        pyrego's own capabilities (coverage, traces, partial evaluation,
        filters, ``pyrego test``) take it: see
        :class:`~pyrego.engine_support.CompiledProgram`."""
        with self._lock:
            version = self._version
            policies = self._policies
            self._owned = False
        state = self._state
        if state is None:
            state = self._state = {}
        return CompiledProgram(
            self._get_program(),
            policies,
            version,
            self._rego_v0,
            (tuple(sorted(self._extension_ids.items())), self._allowed_builtins),
            state,
            self._context,
            self._compile_query,
            self._compile_body,
            self._execute,
            self._attach_source,
            self._with_source,
        )

    def _build_program(self) -> Program:
        with self._lock:
            version, policies, data, failure = self._version, self._policies, self._data, self._failure
            prog = self._program
            self._owned = False  # (compiled outside the lock: never changed after this)
        if failure is not None and failure[0] == version and failure[1] is data:
            # The same program fails the same way: not compiled again per evaluation.
            raise failure[2].with_traceback(None)
        try:
            if prog is None:
                prog = self._compile(self._extra_mockable, policies)
            try:  # (as _with_source, without a closure per call)
                _check_data_conflicts(prog.tree, data)
            except RegoError as err:
                self._attach_source(err, policies)
                raise
        except RegoError as err:
            with self._lock:
                if self._version == version:
                    if prog is not None:  # (compiled: only the data clashes with it)
                        self._program = prog
                    self._failure = (version, data, err)
            raise
        with self._lock:  # (one lock for both: a fresh engine's first evaluation comes here)
            if self._version == version:
                self._program = prog
                if self._data is data:
                    self._data_checked = True
        return prog

    def _known_program(self, parsed: dict[str, ParsedPolicy]) -> Program | None:
        """The compiled program of ``parsed``, a fresh engine's first files
        (with no data), when the process has it already: then the first
        evaluation need not look for it. Nothing is compiled here (errors are
        the first evaluation's, as before)."""
        if len(parsed) == 1:  # (most engines: no sort, no list)
            (one,) = parsed.values()
            sources: tuple[tuple[str, str, bool], ...] = (one.program_source,)
        else:
            sources = tuple([parsed[p].program_source for p in sorted(parsed)])
        prog = program_cache.find(self._program_key(self._extra_mockable, sources))
        if prog is None or prog.rules_at_root:
            return None  # (a rule at the root clashes even with no data: the evaluation says so)
        return prog

    def _program_key(self, mockable: frozenset[str], sources: tuple[tuple[str, str, bool], ...]) -> tuple[Any, ...]:
        """The key of the compiled program of ``sources``, ``(path, text, rego_v1)``
        by path, under the engine's settings. The texts themselves are the key:
        exact (no digest can collide), and cheap, since a str caches its hash
        and equal texts are often one object."""
        extension_ids = self._extension_ids
        return (
            sources,
            tuple(sorted(mockable)) if mockable else (),
            tuple(sorted(extension_ids.items())) if extension_ids else (),
            self._allowed_builtins,
            self._type_check,
            self._strict_mode,
            self._schema_key,
            self._strict,  # (code for strict builtin errors has OPA's order for them: generate_program)
        )

    def _compile(self, mockable: frozenset[str], policies: dict[str, tuple[str, ast.Module]] | None = None) -> Program:
        if policies is None:
            policies = self._policy_table()
        paths = sorted(policies)
        key = self._program_key(mockable, tuple([(p, policies[p][0], policies[p][1].rego_v1) for p in paths]))
        found = program_cache.find(key)
        if found is not None:
            return found

        def build() -> Program:  # (only on a cache miss: what it needs beyond the key is gathered here)
            modules = [policies[p][1] for p in paths]
            # Modules checked on their own when added skip those checks here.
            checked = [self._checked.get(p) for p in paths]
            hidden_calls: list[RegoError] | None = None
            if all(c is not None and c.module is m for c, m in zip(checked, modules)):
                hidden_calls = [call for c in checked if c is not None for call in c.hidden]
            return self._with_source(  # type: ignore[no-any-return]
                lambda: compile_program(
                    modules,
                    [policies[p][0] for p in paths],
                    mockable,
                    self._extensions,
                    self._allowed_builtins,
                    self._type_check,
                    self._strict_mode,
                    self._schemas,
                    hidden_calls,
                    strict_errors=self._strict,
                ),
                policies,
            )

        return program_cache.get_or_build(key, build)

    def _with_source(self, fn: Callable[[], Any], policies: dict[str, tuple[str, ast.Module]] | None = None) -> Any:
        """Run ``fn``; give any RegoError the source line of its location (in ``policies``, by default the engine's)."""
        try:
            return fn()
        except RegoError as err:
            self._attach_source(err, policies)
            raise
        except RecursionError:
            # Which module went too deep is not known here: name the first one.
            files = sorted(self._policy_table() if policies is None else policies)
            where = Location(files[0], 1, 1) if files else None
            raise RegoCompileError("policy too deeply nested to compile", where) from None

    def _attach_source(self, err: RegoError, policies: dict[str, tuple[str, ast.Module]] | None = None) -> None:
        loc = err.location
        if loc is None or err.source_line is not None:
            return
        entry = (self._policy_table() if policies is None else policies).get(loc.file)
        if entry is not None:
            _attach_line(err, entry[0])

    # -- evaluation ----------------------------------------------------------------------

    def _context(self, input: Any = _NO_INPUT, program: Program | None = None) -> EvalContext:
        """A new evaluation's context; ``program``: the engine's program, when
        nothing but its rules is evaluated (eval_rule), else anything may print."""
        config = self._config
        if config is None or (config is DEFAULT_CONFIG and program is None and self._gather_prints):
            config = self._new_config(program)
        deadline = time.monotonic() + config.timeout if config.timeout is not None else None
        return EvalContext.fast(self._input if input is _NO_INPUT else input, self._data, config, deadline)

    def eval_rule(self, path: str, *, input: Any = _NO_INPUT) -> Any:
        """The value of the rule (or document) at ``path``, or ``pyrego.UNDEFINED``.

        ``input``: the input document for this call only (nothing is stored);
        the way to share one engine between threads. Without it, the input
        last given to :meth:`set_input` is used."""
        # The fixed cost of an evaluation is most of a small policy's: this
        # path runs as few steps as it can (see _resolve_rule for the table).
        try:
            fn, more, default, program = self._rule_fns[path]
        except (KeyError, TypeError):  # TypeError: a path that is not even hashable
            # Into the table taken before: if policies change meanwhile, the
            # entry goes with the table they replaced.
            rule_fns = self._rule_fns
            entry = rule_fns[path] = self._resolve_rule(path)
            fn, more, default, program = entry
        if fn is None:
            if program is None:
                return self._eval_rule_by_query(more, input)
            fn, more, default = self._rule_entry(path, more, program)
        # Reuse the last evaluation's context when no other call holds it
        # (making one is a large part of a small policy's cost). Read and
        # cleared with nothing between: the interpreter switches threads only
        # at calls and backward jumps, so two threads never take the same one
        # (tests/test_threads.py checks it with a 10 us switch interval).
        ctx = self._spare
        self._spare = None
        if ctx is not None and ctx.cfg is self._config:
            # As new: an evaluation changes only its context's memo and query
            # state (``with`` and function mocks change contexts derived from
            # it), and an empty memo nothing else holds is as good as a new
            # one. A context has a deadline when its config has a time limit.
            ctx.input = self._input if input is _NO_INPUT else input
            ctx.data = self._data
            if ctx.cache:
                ctx.cache = {}
            ctx.q = None
            if ctx.deadline is not None:
                ctx.deadline = time.monotonic() + ctx.cfg.timeout  # type: ignore[operator]
        else:
            ctx = self._context(input, program)
        try:
            value = fn(ctx)
            if value is UNDEF:
                if more:
                    for f in more:
                        value = f(ctx)
                        if value is not UNDEF:
                            break
                    else:
                        value = default
                else:
                    value = default
        except Exception as exc:
            value = self._after_failure(exc, path, program, ctx, (fn, *more), default)
        self._spare = ctx  # (reset before its next use, after a failure too)
        if value is True or value is False or value is UNDEF or value is None:
            return value  # (most decisions: no call)
        try:
            return rule_value(value)
        except EvalRecursionError as exc:
            raise self._evaluation_failure(exc, path, program, ctx.input) from None

    def _evaluation_failure(self, exc: Exception, path: str, program: Program | None, input: Any = UNDEF) -> Exception:
        """The error an evaluation of ``path`` that raised ``exc`` ends with
        (``exc`` itself for a pyrego error, with its source attached).
        ``input``: the evaluation's input (a recursion too deep for Python is
        reported as its cycle where it contains itself)."""
        from pyrego.runtime.input_faults import input_fault

        fault = input_fault(exc, input)
        if fault is not None:
            return fault
        if isinstance(exc, RegoError):
            self._attach_source(exc)
            return exc
        if type(exc) is RecursionError:
            name = program.rule_functions.get(rule_path(path)) if program is not None else None  # type: ignore[arg-type]
            where = _rule_location(program, name) if program is not None and name is not None else None
            too_deep = EvalRecursionError("evaluation exceeded the maximum depth", where)
            self._attach_source(too_deep)
            return too_deep
        # A bug must still surface as a pyrego error.
        return EvalError(f"internal error: {type(exc).__name__}: {exc}", code="eval_internal_error")

    def _resolve_rule(self, path: str) -> tuple[Any, Any, Any, Program | None]:
        """The entry of ``path`` in the table of resolved rules (``_rule_fns``).

        Either ``(fn, more, default, program)``: an evaluation calls
        ``fn(ctx)``, then while the value is undefined the functions ``more``,
        then takes ``default`` (UNDEF: none); or ``(None, name, None,
        program)``: the rule function ``name``, looked up per evaluation while
        the program's code may still be recompiled in its fast form (see
        :meth:`_rule_entry`); or ``(None, query, None, None)``: the text of a
        query reading the document (base data, part of one). With coverage
        on, an entry whose function runs the covered evaluation (see
        :mod:`pyrego.instrument.engine_mixin`)."""
        prog = self._program
        if prog is not None and self._data_checked and type(path) is str and not self._covering:
            known = prog.paths.get(path)  # (a fresh engine on a cached program: found in one step)
            if known is not None:
                return (*known, prog)
        parts = rule_path(path)
        prog = self._get_program()
        if self._covering:
            return self._covered_rule_entry(path)
        known = prog.paths.get(path)
        if known is not None:
            return (*known, prog)
        name = prog.rule_functions.get(parts)  # type: ignore[arg-type]
        if name is None:
            # Base data, part of a document, or no rule at all: a query built
            # from the checked parts, never from the caller's text.
            return None, "__rule_value__ = data" + "".join(f"[{json.dumps(p)}]" for p in parts), None, None
        prog.function(name)  # compiled now, so that evaluations find the real function
        return None, name, None, prog

    def _rule_entry(self, path: str, name: str, program: Program) -> tuple[Callable[..., Any], tuple[Callable[..., Any], ...], Any]:
        """What an evaluation of the rule function ``name`` calls now; once the
        program's code has its final form, the table's entry for ``path`` becomes it."""
        entry = program.entry(name)
        if entry is None:
            # The memoising function (its memo is empty at the start of an evaluation).
            return program.namespace[name], (), UNDEF
        rule_fns = self._rule_fns
        current = rule_fns.get(path)
        # Only into the table the entry came from: the policies may have changed meanwhile.
        if current is not None and current[3] is program:
            rule_fns[path] = (*entry, program)
        paths = program.paths
        if len(paths) < PATHS_KEPT:
            paths[path] = entry
        return entry

    def take_prints(self) -> list[str]:
        """The output of ``print`` calls since the last call, in order."""
        out = []
        prints = self._prints
        while prints:  # popleft: lines other threads print meanwhile are kept or taken, never lost (None: no evaluation yet)
            line = prints.popleft()[0]
            if line is not None:  # (None: withdrawn, its evaluation ran again)
                out.append(line)
        return out

    # -- copies ---------------------------------------------------------------------------

    def clone(self) -> Engine:
        """A new engine with the same policies, data and input, sharing compiled code."""
        new = Engine.__new__(Engine)
        policies = self._policy_table()  # (both engines share _checked: neither may change it in place)
        new.__dict__.update(self.__dict__)
        new._policies = dict(policies)
        new._owned = False
        new._rule_fns = dict(self._rule_fns)
        new._queries = self._queries.copy() if self._queries is not None else None
        new.__dict__.pop("_prints", None)
        new.__dict__.pop("_prepared_rules", None)  # (prepared on this engine)
        new._config = None
        new._spare = None
        new._lock = threading.Lock()
        new._state = None
        self._instrumentation_after_clone(new)
        return new

    @property
    def compiled_source(self) -> str:
        """The generated Python source of the current policies (for inspection)."""
        return self._get_program().source


