"""OPA as a test oracle, through PyPI's ``opa-golib-python-bindings`` wheel.

The wheel carries OPA v1.20.2 built as a Go shared library with a small ctypes
wrapper (``opa_bindings.engine.OpaEngine``). It declares ``Requires-Python
>=3.14`` but is pure ctypes and loads on older Pythons, so it is not installed:
it is downloaded with ``pip download --python-version 3.14`` and unpacked into
``.cache/opa-oracle/`` in the repository, which is then put on ``sys.path``.

``python tests/opa_oracle.py`` does the download (``.ci/run`` calls it so CI
has the oracle); tests call :func:`get_oracle`, which downloads on first use
unless ``PYREGO_NO_ORACLE_DOWNLOAD`` is set, and skip when it cannot be had.
``PYREGO_OPA_ORACLE_DIR`` points at another unpacked copy.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = Path(os.environ.get("PYREGO_OPA_ORACLE_DIR") or REPO_ROOT / ".cache" / "opa-oracle")
PACKAGE = "opa-golib-python-bindings==0.4.4"  # OPA v1.20.2
OPA_VERSION = "1.20.2"

_ERROR_CODE_RX = re.compile(r"\b((?:rego|eval)_[a-z_]+_error)\b")


class OracleUnavailable(RuntimeError):
    """The OPA wheel could not be downloaded or loaded."""


def _unpacked() -> bool:
    return (CACHE_DIR / "opa_bindings" / "engine.py").is_file() and (CACHE_DIR / "opa_bindings" / "libopabridge.so").is_file()


def download(quiet: bool = True) -> Path:
    """Download and unpack the wheel into :data:`CACHE_DIR` (no-op when already there)."""
    if _unpacked():
        return CACHE_DIR
    wheels = CACHE_DIR / "wheel"
    wheels.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--python-version", "3.14", "--platform", "manylinux_2_34_x86_64", PACKAGE, "-d", str(wheels),
    ]
    if quiet:
        cmd.append("-q")
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OracleUnavailable(f"pip download failed: {exc}") from None
    found = sorted(wheels.glob("opa_golib_python_bindings-*.whl"))
    if proc.returncode != 0 or not found:
        raise OracleUnavailable(f"pip download {PACKAGE} failed: {proc.stderr.strip()[-500:]}")
    with zipfile.ZipFile(found[-1]) as zf:
        zf.extractall(CACHE_DIR)
    so = CACHE_DIR / "opa_bindings" / "libopabridge.so"
    if so.exists():
        so.chmod(0o755)
    return CACHE_DIR


def _load_engine_class(allow_download: bool) -> Any:
    if not _unpacked():
        if not allow_download:
            raise OracleUnavailable(f"OPA oracle not present in {CACHE_DIR} and downloads are disabled")
        download()
    if str(CACHE_DIR) not in sys.path:
        sys.path.insert(0, str(CACHE_DIR))
    try:
        from opa_bindings.engine import OpaEngine
    except Exception as exc:  # noqa: BLE001 - any failure means no oracle
        raise OracleUnavailable(f"cannot load opa_bindings from {CACHE_DIR}: {exc}") from None
    return OpaEngine


def plain_numbers(value: Any) -> Any:
    """OPA's exact numbers (Decimal) as ``json_ready`` gives them: int when
    integral, else float; lists and objects walked."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list):
        return [plain_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: plain_numbers(v) for k, v in value.items()}
    return value


@dataclass
class OracleResult:
    """What OPA said: a list of binding objects, or an error (``code`` like OPA's)."""

    bindings: list[dict[str, Any]] = field(default_factory=list)
    error_code: str | None = None
    error_message: str | None = None

    @property
    def is_error(self) -> bool:
        return self.error_code is not None


class Oracle:
    """Evaluates queries in OPA: one fresh engine per evaluation."""

    def __init__(self, engine_class: Any) -> None:
        self._engine_class = engine_class
        # Read floats as Decimal so that OPA's exact numbers survive the trip.
        base = engine_class

        class _ExactEngine(base):  # type: ignore[misc, valid-type]
            def _call(self, fn: Any, *args: Any) -> Any:
                import ctypes

                handle = self._handle
                if handle is None:
                    raise RuntimeError("engine closed")
                ptr = fn(handle, *args)
                if not ptr:
                    raise RuntimeError("native call returned NULL")
                try:
                    raw = ctypes.string_at(ptr)
                finally:
                    self._lib.OpaFreeString(ptr)
                envelope = json.loads(raw, parse_float=Decimal)
                err = envelope.get("error")
                if err:
                    from opa_bindings.engine import OpaError

                    raise OpaError(err.get("code", "unknown"), err.get("message", ""))
                return envelope

        self._exact = _ExactEngine

    def evaluate(
        self,
        modules: dict[str, str],
        query: str,
        *,
        input: Any = None,
        data: Any = None,
        prints: list[str] | None = None,
    ) -> OracleResult:
        """Evaluate ``query`` with ``modules`` (file name -> text), ``data`` and
        ``input``; ``prints``: where the lines ``print`` writes go (else dropped)."""
        from opa_bindings.engine import OpaError

        eng = self._exact()
        eng.print_handler = (lambda message, location: None) if prints is None else (lambda message, location: prints.append(message))
        try:
            for name, text in modules.items():
                eng.add_policy(name, text)
            if data is not None:
                eng.add_data(data)
            return OracleResult(bindings=eng.eval_query(query, input))
        except OpaError as exc:
            m = _ERROR_CODE_RX.search(exc.message)
            code = m.group(1) if m else exc.code
            return OracleResult(error_code=code, error_message=exc.message)
        finally:
            eng.close()


_ORACLE: Oracle | None = None
_FAILURE: str | None = None


def get_oracle() -> Oracle:
    """The shared :class:`Oracle` (downloading the wheel on first use); raises OracleUnavailable."""
    global _ORACLE, _FAILURE
    if _ORACLE is not None:
        return _ORACLE
    if _FAILURE is not None:
        raise OracleUnavailable(_FAILURE)
    try:
        cls = _load_engine_class(allow_download=not os.environ.get("PYREGO_NO_ORACLE_DOWNLOAD"))
        oracle = Oracle(cls)
        probe = oracle.evaluate({"probe.rego": "package probe\np := 1"}, "x := data.probe.p")
        if probe.bindings != [{"x": 1}]:
            raise OracleUnavailable(f"OPA oracle answered a probe wrongly: {probe}")
    except OracleUnavailable as exc:
        _FAILURE = str(exc)
        raise
    _ORACLE = oracle
    return oracle


if __name__ == "__main__":
    try:
        path = download(quiet=False)
        get_oracle()
    except OracleUnavailable as exc:
        print(f"OPA oracle unavailable: {exc}", file=sys.stderr)
        sys.exit(1)
    print(f"OPA oracle (OPA v{OPA_VERSION}) ready in {path}")
