"""The settings of :class:`pyrego.Engine` (its ``ConfigurationMixin``): syntax,
builtin errors, time limit, extensions, capabilities, the type checker and its
schemas. Each setting that changes what a program compiles to drops the
compiled program (``_invalidate``); the others only the evaluation config.
"""

from __future__ import annotations

import json
import os
import re
from collections import deque
from typing import TYPE_CHECKING, Any, Callable, Mapping

from pyrego.engine_support import check_extension_decl, extension_call
from pyrego.errors import ArgumentError, DataError
from pyrego.runtime.context import DEFAULT_CONFIG, EvalConfig
from pyrego.runtime.convert import from_python

if TYPE_CHECKING:
    from pyrego.codegen.program import Program
    from pyrego.typecheck.schemas import SchemaSet

#: Lines of print() output an engine keeps until take_prints() (older ones are dropped).
PRINTS_KEPT = 10_000

#: A name a policy can call: ASCII identifiers joined by dots.
_EXTENSION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


class ConfigurationMixin:
    """Settings of :class:`pyrego.Engine`; the engine holds the state they set."""

    _rego_v0: bool
    _strict: bool
    _gather_prints: bool
    _timeout: float | None
    _options: dict[str, Any]
    _extensions: dict[str, Any]
    _extension_ids: dict[str, tuple[int, int, str]]
    _allowed_builtins: frozenset[str] | None
    _type_check: bool
    _strict_mode: bool
    _schemas: SchemaSet | None
    _schema_key: str | None
    _config: EvalConfig | None
    _prints: deque[list[str | None]] | None
    _program: Program | None
    _rule_fns: dict[str, Any]
    _prepared_rules: dict[str, Any]

    def _invalidate(self) -> None:
        """Drop the compiled program (the engine's own)."""
        raise NotImplementedError

    def _settings_changed(self) -> None:
        """Drop the evaluation config, made again at the next evaluation; and
        the table of resolved rules with it (its entries are made again as
        cheaply), which is how a prepared rule (``Engine.prepare_rule``)
        knows to take the new settings: it checks the table alone."""
        self._config = None
        self._rule_fns = {}
        self._prepared_rules = {}

    def _new_config(self, program: Program | None) -> EvalConfig:
        """The settings of the engine's evaluations (``_config``), made now. With
        the default ones and nothing to print, the config every such engine
        shares: a fresh engine's rule whose program calls no print needs no
        table of prints, nor a config of its own, made."""
        strict, options, timeout = self._strict, self._options, self._timeout
        if not strict and not options and timeout is None and (not self._gather_prints or (program is not None and not program.calls_print)):
            self._config = DEFAULT_CONFIG
            if program is not None and self._program is not program:
                self._config = None  # (the policies changed meanwhile, perhaps to ones that print: see _changed)
            return DEFAULT_CONFIG
        hook = None
        if self._gather_prints:
            prints = self._prints
            if prints is None:
                # One table for every thread's hook: setdefault is one
                # step under the GIL (no lock needed).
                prints = self.__dict__.setdefault("_prints", deque((), PRINTS_KEPT))
            hook = prints.append
        config = self._config = EvalConfig(strict, hook, options, timeout)
        return config

    def set_rego_v0(self, enabled: bool) -> None:
        """Parse policies added from now on as Rego v0 (no ``if``, ``p[x] { }`` sets)."""
        self._rego_v0 = bool(enabled)

    def set_strict_builtin_errors(self, enabled: bool) -> None:
        """Make builtin errors end the evaluation instead of making it undefined."""
        if bool(enabled) != self._strict:
            # (The code for strict errors evaluates in OPA's order for them: another program.)
            self._invalidate()
        self._strict = bool(enabled)
        self._settings_changed()

    def set_gather_prints(self, enabled: bool) -> None:
        """Collect ``print`` output for :meth:`take_prints` (on by default)."""
        self._gather_prints = bool(enabled)
        self._settings_changed()

    def set_eval_timeout(self, seconds: float | None) -> None:
        """Limit each evaluation to ``seconds`` of wall time (None: no limit).

        An evaluation past its limit raises :class:`pyrego.EvalCancelError`."""
        if seconds is not None:
            if type(seconds) not in (int, float) or not seconds > 0 or seconds == float("inf"):
                raise ArgumentError(f"timeout must be a positive number of seconds, not {seconds!r}")
        self._timeout = seconds
        # Evaluations take the limit from the config (with their contexts).
        self._settings_changed()

    def add_extension(self, name: str, arity: int, fn: Callable[..., Any], *, decl: Mapping[str, Any] | None = None) -> None:
        """Make the Python function ``fn`` callable from policies as ``name`` with ``arity`` arguments.

        ``fn`` receives plain Python values (as :meth:`eval_rule` returns
        them) and returns one, or ``pyrego.UNDEFINED``. An exception it raises
        is a builtin error: the call is undefined, or the evaluation fails
        with ``eval_builtin_error`` under strict builtin errors.

        ``decl`` is the function's type in OPA's form, as in a capabilities
        file (``{"type": "function", "args": [{"type": "string"}], "result":
        {"type": "boolean"}}``): with the type check on, calls are checked
        against it and its result type flows on, as for OPA's builtins.
        Without it, an extension takes and returns ``any``.
        """
        from pyrego.builtins.registry import Builtin, lookup
        from pyrego.parse.lexer import KEYWORD_KINDS

        # A name a policy can call: ASCII identifiers joined by dots, the
        # first not a keyword, a root document or a wildcard.
        if type(name) is not str or _EXTENSION_NAME.fullmatch(name) is None:
            raise ArgumentError(f"invalid extension name {name!r}")
        first = name.split(".")[0]
        if first in KEYWORD_KINDS or first in ("data", "input", "_"):
            raise ArgumentError(f"invalid extension name {name!r}: {first} cannot start a call")
        if lookup(name) is not None:
            raise ArgumentError(f"{name} is a builtin")
        if type(arity) is not int or arity < 0:
            raise ArgumentError("arity must be a non-negative integer")
        if not callable(fn):
            raise ArgumentError("an extension must be callable")
        decl_key = ""
        if decl is not None:
            decl_key = check_extension_decl(decl, arity)
            decl = json.loads(decl_key)
        self._extensions = {**self._extensions, name: Builtin(name, extension_call(fn), arity, nondeterministic=True, decl=decl)}
        self._extension_ids = {**self._extension_ids, name: (arity, id(fn), decl_key)}
        self._invalidate()

    def set_capabilities(self, capabilities: dict[str, Any] | None) -> None:
        """Allow only the builtins an OPA capabilities document lists
        (``{"builtins": [{"name": ...}, ...]}``, as ``opa capabilities`` prints
        and ``--capabilities FILE`` reads); a policy calling another builtin
        is refused with ``rego_type_error: undefined function``. ``None``
        allows every builtin again. Extensions stay callable."""
        if capabilities is None:
            allowed = None
        else:
            try:
                allowed = frozenset(str(b["name"]) for b in capabilities["builtins"])
            except (KeyError, TypeError) as exc:
                raise ArgumentError(f"capabilities: a builtins list of objects with names is required ({exc})") from None
        self._allowed_builtins = allowed
        self._invalidate()

    def set_runtime(self, runtime: dict[str, Any] | None) -> None:
        """The object ``opa.runtime()`` returns (empty when not set, as for embedded OPA)."""
        options = dict(self._options)
        if runtime is None:
            options.pop("runtime", None)
        else:
            options["runtime"] = from_python(runtime)
        self._options = options
        self._settings_changed()

    def set_allow_network(self, enabled: bool) -> None:
        """Allow builtins that reach the network (``http.send``, ``net.lookup_ip_addr``)."""
        self._options = {**self._options, "allow_net": bool(enabled)}
        self._settings_changed()

    def set_type_check(self, enabled: bool) -> None:
        """Refuse ill-typed policies and queries as OPA's type checker does (on by default).

        With the check on, ``1 + "a"``, ``count(1)`` or ``x := {"a": 1}; x.b``
        are ``rego_type_error`` when the policy is compiled, with OPA's
        message; the error's ``errors`` attribute lists all of them (up to
        ten). See :mod:`pyrego.typecheck`. Turned off, such policies compile
        and fail (or are undefined) when evaluated, and a schema given to
        the engine is not read."""
        self._type_check = bool(enabled)
        self._invalidate()

    def set_input_schema(self, schema: Any) -> None:
        """Type ``input`` by a JSON Schema in every rule and query, as ``opa eval -s FILE``.

        ``schema`` is the schema as a dict (``None`` removes it). A ref the
        schema does not allow (``input.usr`` where it has ``user``) or a
        value of the wrong type (``input.user.age + "a"``) is then a
        ``rego_type_error`` when the policy is compiled. Setting a schema
        turns the type check on (:meth:`set_type_check`); see
        :mod:`pyrego.typecheck.schemas` for how schemas become types."""
        self.set_schema((), schema)

    def add_schema(self, name: str, schema: Any) -> None:
        """A JSON Schema that ``# METADATA`` blocks name as ``schema.<name>``, as a file
        ``<name>.json`` under the folder of ``opa eval -s DIR``::

            engine.add_schema("k8s.pod", pod_schema)
            # METADATA
            # schemas:
            #   - input.request.object: schema.k8s.pod

        ``None`` removes it. Turns the type check on, as :meth:`set_input_schema`."""
        from pyrego.typecheck.schemas import schema_path

        path = schema_path(name)
        if not path:
            raise ValueError("schema name must not be empty (set_input_schema sets the input schema)")
        self.set_schema(path, schema)

    def load_schemas(self, path: str | os.PathLike[str]) -> None:
        """Schemas from files, as ``opa eval -s PATH``: a JSON or YAML file is the
        input schema (:meth:`set_input_schema`); a folder gives each file under it
        to :meth:`add_schema`, named by its path (``k8s/pod.json``: ``schema.k8s.pod``).
        Raises :class:`DataError` for a missing or unparsable file."""
        from pyrego.loader import read_schemas

        for name, schema in read_schemas(path).items():
            self.set_schema(name, schema)

    def set_schema(self, path: tuple[str, ...], schema: Any) -> None:
        """The JSON Schema at ``path`` (``()``: the input schema; ``("k8s", "pod")``:
        ``schema.k8s.pod``), as :meth:`add_schema` and :meth:`set_input_schema` set
        theirs; ``None`` removes it."""
        if schema is not None and not isinstance(schema, (dict, bool)):
            raise TypeError(f"a JSON Schema is a dict, not {type(schema).__name__}")
        from pyrego.typecheck.schemas import SchemaSet

        schemas = self._schemas.copy() if self._schemas is not None else SchemaSet()
        if schema is None:
            schemas.named.pop(path, None)
        else:
            schemas.named[path] = schema
        try:
            key = schemas.key() if schemas.named else None
        except (RecursionError, ValueError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise DataError(f"schema {'.'.join(('schema', *path))}: {why}") from None
        if schema is not None:
            self._type_check = True
        self._schemas = schemas if schemas.named else None
        self._schema_key = key
        self._invalidate()

    def set_strict(self, enabled: bool) -> None:
        """OPA's strict mode (``opa check --strict``, ``opa eval --strict``): also
        refuse unused imports, unused assignments and function arguments,
        deprecated builtins and ``input``/``data`` shadowing in Rego v0
        modules, and in queries. See :mod:`pyrego.compile.checks`."""
        self._strict_mode = bool(enabled)
        self._invalidate()

