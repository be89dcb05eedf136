"""Engine adapters: pyrego and its peers behind one small interface.

An :class:`Adapter` knows one engine: whether it is installed, its version,
and how to :meth:`~Adapter.prepare` it with a :class:`~.workloads.PolicySet`.
A :class:`Prepared` engine takes an input (a Python object or JSON text),
evaluates a query and can be cloned. :meth:`Prepared.evaluator` returns the
tight ``input -> value`` closure the timing loops call, so that the adapter
layer costs one Python call per evaluation for every engine alike.

Fresh engines (:meth:`Adapter.fresh_evaluator`) create a new engine, add the
policies and evaluate, every time; ``cold`` appends a unique comment line to
every policy text, so that no cache of compiled policies can hit.

Values are compared across engines with :func:`normalize`: undefined is
:data:`UNDEFINED_MARK`, sets become sorted lists (as OPA prints them), numbers
compare by value and never equal booleans.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyrego.bench.adapter_base import UNDEFINED_MARK, Adapter, EngineUnavailable, Evaluator, Prepared
from pyrego.bench.workloads import PolicySet, find_repo_root

OPA_DIR_ENV = "PYREGO_OPA_ORACLE_DIR"


def _data_path(query: str) -> str:
    """``data.a.b`` -> ``a.b`` (the engines that take a document path)."""
    q = query.strip()
    return q[len("data."):] if q.startswith("data.") else q


class _PyregoPrepared(Prepared):
    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def set_input(self, value: Any) -> None:
        self.engine.set_input(value)

    def set_input_json(self, text: str) -> None:
        self.engine.set_input_json(text)

    def eval(self, query: str) -> Any:
        import pyrego

        v = self.engine.eval_rule(query)
        return UNDEFINED_MARK if v is pyrego.UNDEFINED else v

    def add_data(self, data: Any) -> None:
        self.engine.add_data(data)

    def clone(self) -> Prepared:
        return _PyregoPrepared(self.engine.clone())

    def evaluator(self, query: str, json_input: bool) -> Evaluator:
        import pyrego

        e = self.engine
        undef = pyrego.UNDEFINED
        mark = UNDEFINED_MARK
        if json_input:
            # JSON text: parsed by pyrego's own loader, as set_input_json does.
            set_input = e.set_input_json
            eval_rule = e.eval_rule

            def run_json(text: Any) -> Any:
                set_input(text)
                v = eval_rule(query)
                return mark if v is undef else v

            return run_json
        # Python values: the rule prepared once, called per input (OPA's PrepareForEval).
        rule = e.prepare_rule(query)

        def run(value: Any) -> Any:
            v = rule(value)
            return mark if v is undef else v

        return run


class PyregoAdapter(Adapter):
    """pyrego: policies compiled to Python; inputs are read in place."""

    name = "pyrego"
    title = "pyrego"
    notes = ("Python objects are used in place; JSON text is parsed by pyrego's own loader (set_input_json).",)

    def available(self) -> str | None:
        return None

    def version(self) -> str:
        import pyrego

        return str(pyrego.__version__)

    def prepare(self, ps: PolicySet, modules: list[tuple[str, str]] | None = None) -> Prepared:
        import pyrego

        e = pyrego.Engine()
        if ps.v0:
            e.set_rego_v0(True)
        if ps.data is not None:
            e.add_data(ps.data)
        e.add_policies(dict(modules if modules is not None else ps.modules))
        return _PyregoPrepared(e)

    def begin_cold(self) -> None:
        import pyrego

        pyrego.clear_compile_cache()

    def fresh_evaluator(self, ps: PolicySet, query: str, json_input: bool, cold: bool) -> Evaluator:
        import pyrego

        engine_cls = pyrego.Engine
        undef = pyrego.UNDEFINED
        suffix = self.unique_suffix
        v0, data, mods = ps.v0, ps.data, ps.modules

        def run(value: Any) -> Any:
            e = engine_cls()
            if v0:
                e.set_rego_v0(True)
            if data is not None:
                e.add_data(data)
            e.add_policies(dict(ps.with_suffix(suffix()) if cold else mods))
            if json_input:
                e.set_input_json(value)
            else:
                e.set_input(value)
            v = e.eval_rule(query)
            return UNDEFINED_MARK if v is undef else v

        return run


# ---------------------------------------------------------------- regorus


class _RegorusPrepared(Prepared):
    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def set_input(self, value: Any) -> None:
        self.engine.set_input(value)

    def set_input_json(self, text: str) -> None:
        self.engine.set_input_json(text)

    def eval(self, query: str) -> Any:
        return _regorus_eval(self.engine, query)

    def add_data(self, data: Any) -> None:
        self.engine.add_data(data)

    def clone(self) -> Prepared:
        return _RegorusPrepared(self.engine.clone())

    def evaluator(self, query: str, json_input: bool) -> Evaluator:
        e = self.engine
        set_input = e.set_input_json if json_input else e.set_input
        eval_rule = e.eval_rule

        def run(value: Any) -> Any:
            set_input(value)
            v = eval_rule(query)
            return UNDEFINED_MARK if v is None else v

        return run


def _regorus_eval(engine: Any, query: str) -> Any:
    v = engine.eval_rule(query)
    return UNDEFINED_MARK if v is None else v


class RegorusAdapter(Adapter):
    """regorus (Rust), PyPI ``gordon-to-regorus``; inputs are converted to regorus values."""

    name = "regorus"
    title = "regorus"
    shareable_across_threads = False  # pyo3 "unsendable": an engine panics when used from another thread
    notes = (
        "Python objects are converted into regorus values on set_input; JSON text is parsed in Rust (set_input_json).",
        "regorus's eval_rule answers None for an undefined rule (no workload here has a null-valued rule).",
        "regorus engines are bound to the thread that made them (pyo3 unsendable): each worker thread prepares its own.",
    )

    def available(self) -> str | None:
        try:
            import regorus  # noqa: F401
        except ImportError as exc:
            return f"not installed (pip install gordon-to-regorus): {exc}"
        return None

    def version(self) -> str:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("gordon-to-regorus")
        except PackageNotFoundError:
            return "?"

    def prepare(self, ps: PolicySet, modules: list[tuple[str, str]] | None = None) -> Prepared:
        import regorus

        e = regorus.Engine()
        if ps.v0:
            e.set_rego_v0(True)
        for path, text in modules if modules is not None else ps.modules:
            e.add_policy(path, text)
        if ps.data is not None:
            e.add_data(ps.data)
        return _RegorusPrepared(e)


# ---------------------------------------------------------------- OPA


def load_opa_class() -> Any:
    """``opa_bindings.engine.OpaEngine``: installed, unpacked in the oracle cache, or downloaded.

    The cache is ``$PYREGO_OPA_ORACLE_DIR`` or ``<repo>/.cache/opa-oracle``;
    when it is missing, the repository's ``tests/opa_oracle.py`` downloads the
    wheel (unless ``$PYREGO_NO_ORACLE_DOWNLOAD`` is set). The folder found is
    put in ``$PYREGO_OPA_ORACLE_DIR`` so that worker processes find it too.
    """
    try:
        from opa_bindings.engine import OpaEngine

        return OpaEngine
    except ImportError:
        pass
    root = find_repo_root()
    candidates = [Path(p) for p in (os.environ.get(OPA_DIR_ENV),) if p]
    if root is not None:
        candidates.append(root / ".cache" / "opa-oracle")
    found = next((c for c in candidates if (c / "opa_bindings" / "engine.py").is_file()), None)
    if found is None and root is not None and not os.environ.get("PYREGO_NO_ORACLE_DOWNLOAD"):
        helper = root / "tests" / "opa_oracle.py"
        if helper.is_file():
            name = "_pyrego_bench_opa_oracle"
            spec = importlib.util.spec_from_file_location(name, helper)
            if spec is not None and spec.loader is not None:
                mod = importlib.util.module_from_spec(spec)
                # Registered first: its dataclasses look their module up by name.
                sys.modules[name] = mod
                try:
                    spec.loader.exec_module(mod)
                    found = Path(mod.download())
                except Exception as exc:  # noqa: BLE001 - any failure means no OPA
                    sys.modules.pop(name, None)
                    raise EngineUnavailable(
                        f"OPA wheel download failed: {exc} (run `python tests/opa_oracle.py` in the repository "
                        "with network access, or leave opa out of --engines)"
                    ) from None
    if found is None:
        raise EngineUnavailable(
            "OPA bindings not found: run `python tests/opa_oracle.py` in a pyrego checkout to fetch them, "
            "or set $PYREGO_OPA_ORACLE_DIR to a folder holding opa_bindings"
        )
    os.environ[OPA_DIR_ENV] = str(found)
    if str(found) not in sys.path:
        sys.path.insert(0, str(found))
    try:
        from opa_bindings.engine import OpaEngine
    except Exception as exc:  # noqa: BLE001
        raise EngineUnavailable(f"cannot load opa_bindings from {found}: {exc}") from None
    return OpaEngine


class _OpaPrepared(Prepared):
    def __init__(self, adapter: OpaAdapter, ps: PolicySet, modules: list[tuple[str, str]] | None, extra: tuple[Any, ...] = ()) -> None:
        self.adapter = adapter
        self.ps = ps
        self.modules = modules
        self.extra = extra
        self.engine = adapter.engine_class()()
        self.engine.print_handler = lambda message, location: None
        for path, text in modules if modules is not None else ps.modules:
            self.engine.add_policy(path, text)
        if ps.data is not None:
            self.engine.add_data(ps.data)
        for d in extra:
            self.engine.add_data(d)
        self._input: Any = None
        self._input_json: bytes | None = None

    def set_input(self, value: Any) -> None:
        self._input, self._input_json = value, None

    def set_input_json(self, text: str) -> None:
        self._input, self._input_json = None, text.encode("utf-8")

    def eval(self, query: str) -> Any:
        if self._input_json is not None:
            return self._eval_json(_data_path(query).encode("utf-8"), self._input_json)
        return self._eval_obj(_data_path(query), self._input)

    def _eval_obj(self, path: str, value: Any) -> Any:
        try:
            return self.engine.eval_document(path, value)
        except self.adapter.undefined_error():
            return UNDEFINED_MARK

    def _eval_json(self, path: bytes, text: bytes) -> Any:
        # eval_document without its json.dumps: the native call takes JSON bytes.
        e = self.engine
        with e._eval_lock:
            e._eval_reset()
            rs = e._eval_result(e._call(e._lib.OpaEvalDocument, path, text, 0, 0))
        if not rs or not rs[0].get("expressions"):
            return UNDEFINED_MARK
        return rs[0]["expressions"][0]["value"]

    def add_data(self, data: Any) -> None:
        self.engine.add_data(data)
        self.extra = (*self.extra, data)

    def clone(self) -> Prepared:
        return _OpaPrepared(self.adapter, self.ps, self.modules, self.extra)

    def evaluator(self, query: str, json_input: bool) -> Evaluator:
        path = _data_path(query)
        if json_input:
            pb = path.encode("utf-8")
            ev_json = self._eval_json

            def run_json(text: Any) -> Any:
                return ev_json(pb, text.encode("utf-8"))

            return run_json
        ev_obj = self._eval_obj

        def run(value: Any) -> Any:
            return ev_obj(path, value)

        return run

    def close(self) -> None:
        self.engine.close()


class OpaAdapter(Adapter):
    """OPA v1.20.2 (Go) through PyPI's ``opa-golib-python-bindings`` (ctypes)."""

    name = "opa"
    title = "OPA"
    supports_v0 = False
    notes = (
        "OPA takes JSON only: a Python object input is serialised with json.dumps by the binding on every "
        "evaluation; JSON text input is passed to the native call as it is. Results come back as JSON.",
        "OPA has no clone: a worker gets a new engine with the same policies (OPA's prepared-query cache is per engine).",
        "The bindings have no Rego v0 mode, so OPA does not run the ACI workload.",
    )

    def __init__(self) -> None:
        super().__init__()
        self._cls: Any = None

    def engine_class(self) -> Any:
        if self._cls is None:
            self._cls = load_opa_class()
        return self._cls

    def undefined_error(self) -> Any:
        from opa_bindings.engine import OpaUndefinedError

        return OpaUndefinedError

    def available(self) -> str | None:
        try:
            self.engine_class()
        except EngineUnavailable as exc:
            return str(exc)
        return None

    def version(self) -> str:
        base = os.environ.get(OPA_DIR_ENV)
        wheel = "?"
        if base:
            infos = sorted(Path(base).glob("opa_golib_python_bindings-*.dist-info"))
            if infos:
                wheel = infos[-1].name.removeprefix("opa_golib_python_bindings-").removesuffix(".dist-info")
        else:
            from importlib.metadata import PackageNotFoundError, version

            try:
                wheel = version("opa-golib-python-bindings")
            except PackageNotFoundError:
                pass
        opa = "1.20.2" if wheel == "0.4.4" else "?"
        return f"{opa} (opa-golib-python-bindings {wheel})"

    def prepare(self, ps: PolicySet, modules: list[tuple[str, str]] | None = None) -> Prepared:
        if ps.v0:
            raise EngineUnavailable("the OPA bindings cannot load Rego v0 policies")
        return _OpaPrepared(self, ps, modules)


# ---------------------------------------------------------------- regopy (rego-cpp)


def _import_regopy() -> Any:
    """Import regopy, after google-re2.

    regopy's librego_shared.so carries its own RE2 and abseil; when it is
    loaded before google-re2's extension (which pyrego's regex builtins use),
    the extension binds to the wrong symbols and the process aborts in free()
    on the first regular expression. Loading re2 first avoids it.
    """
    try:
        import re2  # noqa: F401
    except ImportError:
        pass
    import regopy

    return regopy


class _RegopyPrepared(Prepared):
    def __init__(self, ps: PolicySet, modules: list[tuple[str, str]] | None, extra: tuple[Any, ...] = ()) -> None:
        regopy = _import_regopy()

        self.ps = ps
        self.modules = modules
        self.extra = extra
        self.interp = regopy.Interpreter()
        for path, text in modules if modules is not None else ps.modules:
            self.interp.add_module(path, text)
        if ps.data is not None:
            self.interp.add_data(ps.data)
        for d in extra:
            self.interp.add_data(d)
        self._bundles: dict[str, Any] = {}

    def bundle(self, query: str) -> Any:
        b = self._bundles.get(query)
        if b is None:
            b = self._bundles[query] = self.interp.build(f"x = {query}")
        return b

    def set_input(self, value: Any) -> None:
        self.interp.set_input(value)

    def set_input_json(self, text: str) -> None:
        self.interp.set_input(json.loads(text))

    def eval(self, query: str) -> Any:
        return _regopy_value(self.interp.query_bundle(self.bundle(query)))

    def add_data(self, data: Any) -> None:
        self.interp.add_data(data)
        self.extra = (*self.extra, data)
        self._bundles = {}

    def clone(self) -> Prepared:
        return _RegopyPrepared(self.ps, self.modules, self.extra)

    def evaluator(self, query: str, json_input: bool) -> Evaluator:
        interp = self.interp
        set_input = interp.set_input
        query_bundle = interp.query_bundle
        bundle = self.bundle(query)
        loads = json.loads
        value_of = _regopy_value
        if json_input:

            def run_json(text: Any) -> Any:
                set_input(loads(text))
                return value_of(query_bundle(bundle))

            return run_json

        def run(value: Any) -> Any:
            set_input(value)
            return value_of(query_bundle(bundle))

        return run


def _regopy_value(out: Any) -> Any:
    results = out.results
    if results:
        return results[0].bindings.get("x", UNDEFINED_MARK)
    text = str(out)
    if text == "undefined":
        return UNDEFINED_MARK
    raise RuntimeError(f"regopy error: {text[:500]}")


class RegopyAdapter(Adapter):
    """rego-cpp (C++) through PyPI ``regopy``; prepared engines query a compiled bundle."""

    name = "regopy"
    title = "regopy (rego-cpp)"
    notes = (
        "rego-cpp: prepared engines build a bundle for `x = <query>` once and run query_bundle; "
        "fresh engines run Interpreter.query (which compiles). Results come back as JSON text.",
        "regopy has no JSON input call (set_input_term parses Rego terms, slower): JSON text is parsed with json.loads, then set_input.",
        "regopy has no clone: a worker gets a new interpreter and bundle.",
        "regopy's library carries its own RE2: it is loaded after google-re2 (pyrego's regex engine), "
        "as the other order aborts the process on the first regular expression.",
    )

    def available(self) -> str | None:
        try:
            _import_regopy()
        except ImportError as exc:
            return f"not installed (pip install regopy): {exc}"
        return None

    def version(self) -> str:
        return str(getattr(_import_regopy(), "__version__", "?"))

    def prepare(self, ps: PolicySet, modules: list[tuple[str, str]] | None = None) -> Prepared:
        return _RegopyPrepared(ps, modules)

    def fresh_evaluator(self, ps: PolicySet, query: str, json_input: bool, cold: bool) -> Evaluator:
        regopy = _import_regopy()

        suffix = self.unique_suffix
        q = f"x = {query}"

        def run(value: Any) -> Any:
            interp = regopy.Interpreter()
            for path, text in ps.with_suffix(suffix()) if cold else ps.modules:
                interp.add_module(path, text)
            if ps.data is not None:
                interp.add_data(ps.data)
            interp.set_input(json.loads(value) if json_input else value)
            return _regopy_value(interp.query(q))

        return run


def _python_adapter() -> Adapter:
    """The hand-written baseline (:mod:`pyrego.bench.handwritten`), imported when asked for."""
    from pyrego.bench.python_engine import PythonAdapter

    return PythonAdapter()


# ---------------------------------------------------------------- registry

ADAPTERS: dict[str, Callable[[], Adapter]] = {
    "pyrego": PyregoAdapter,
    "regorus": RegorusAdapter,
    "opa": OpaAdapter,
    "regopy": RegopyAdapter,
    "python": _python_adapter,
}
DEFAULT_ENGINES = ("pyrego", "regorus", "opa", "regopy", "python")


def get_adapter(name: str) -> Adapter:
    """A new adapter for the engine ``name`` (see :data:`ADAPTERS`)."""
    try:
        factory = ADAPTERS[name]
    except KeyError:
        raise EngineUnavailable(f"unknown engine {name!r} (known: {', '.join(ADAPTERS)})") from None
    return factory()


def normalize(value: Any) -> Any:
    """A hashable, engine-independent form of a result (see the module docstring)."""
    from pyrego.conformance import canonical

    if value is UNDEFINED_MARK or value == UNDEFINED_MARK:
        return ("undefined",)
    return canonical(_jsonish(value))


def _jsonish(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        from pyrego.conformance import json_sort_key

        return sorted((_jsonish(v) for v in value), key=json_sort_key)
    if isinstance(value, dict):
        return {k: _jsonish(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonish(v) for v in value]
    return value


def short(value: Any, limit: int = 160) -> str:
    """A value as short JSON text, for reports."""
    if value is UNDEFINED_MARK:
        return "undefined"
    try:
        text = json.dumps(_jsonish(value), sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = [
    "UNDEFINED_MARK",
    "Evaluator",
    "EngineUnavailable",
    "Prepared",
    "Adapter",
    "PyregoAdapter",
    "RegorusAdapter",
    "OpaAdapter",
    "RegopyAdapter",
    "ADAPTERS",
    "DEFAULT_ENGINES",
    "get_adapter",
    "normalize",
    "short",
    "load_opa_class",
]
