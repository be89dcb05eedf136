"""An on-disk cache of the Python code compiled from policies, like ``__pycache__``.

Turning a policy set into running code has three costs: parsing, writing
Python source (code generation) and Python's ``compile()`` of that source.
``compile()`` is the one worth keeping on disk: a code object read back with
``marshal`` costs about a tenth of compiling its source. (Parsed modules are
not kept: rebuilding pyrego's AST objects from stored data costs more than
parsing the text again.)

Code objects are grouped in one *pack* per policy set (the command line names
the set it loaded with :func:`use_context`), so a run reads one file and, when
it compiled something new, writes one. Inside a pack each code object is keyed
by a SHA-256 digest of its source and file name: a pack can only ever give the
code of the very source being compiled; anything else is a miss.

Safety. A code object read from disk is executed, so the cache must not be a
way to inject code:

- the directory is created with mode 0700 and used only while it belongs to
  the current user and no one else may write to it; a pack is read only if
  the current user owns it and only its owner may write it. Anyone who can
  write there can already run code as that user, so the cache gives nothing
  away (the reasoning behind Python's own ``__pycache__``);
- a pack records the Python bytecode magic number, the pyrego version and a
  SHA-256 digest of its contents; a pack that does not match in every respect,
  is truncated or does not unmarshal is ignored and the source is compiled;
- packs are written to a temporary file and renamed into place
  (``os.replace``), so concurrent processes never see a partial file.

Do not point ``PYREGO_CACHE_DIR`` at a directory shared with other users, or
restore it from an untrusted source (a CI cache written by other jobs), as
you would not for ``__pycache__``.

The cache is used by ``pyrego eval`` and ``pyrego test`` (``--no-cache``
turns it off); a program that embeds pyrego can call :func:`enable` and
:func:`use_context`. Location: ``$PYREGO_CACHE_DIR``, else
``$XDG_CACHE_HOME/pyrego``, else ``~/.cache/pyrego``.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import marshal
import os
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import CodeType

ENV_DIR = "PYREGO_CACHE_DIR"
_MAGIC = b"PYREGO-CODE-PACK\x01"
_DIGEST_SIZE = 32
#: Packs kept in the cache directory; older ones are removed when a pack is written.
PACKS_KEPT = 64


def default_directory() -> Path:
    """``$PYREGO_CACHE_DIR``, else ``$XDG_CACHE_HOME/pyrego``, else ``~/.cache/pyrego``."""
    explicit = os.environ.get(ENV_DIR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "pyrego"


def _version_tag() -> str:
    from pyrego.version import __version__

    return f"{__version__}-{sys.implementation.cache_tag}"


class CodeCache:
    """Packs of code objects in one directory (see the module's description)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory / _version_tag()
        self._lock = threading.Lock()
        self._pack_path: Path | None = None
        self._entries: dict[bytes, bytes] = {}  # digest -> marshalled code
        self._new = False
        self._header = _MAGIC + importlib.util.MAGIC_NUMBER + _version_tag().encode() + b"\n"

    # -- the directory ---------------------------------------------------

    def usable(self) -> bool:
        """Create the directory (0700) if needed; True when it is private to this user."""
        if not hasattr(os, "getuid"):
            return False  # no owner check possible: code is never read back
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.stat(self.directory)
        except OSError:
            return False
        return st.st_uid == os.getuid() and not st.st_mode & 0o077

    # -- packs -------------------------------------------------------------

    def use_context(self, key: str) -> None:
        """Read the pack for ``key`` (a digest of the policy set); keep what a pack already read holds."""
        name = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        with self._lock:
            self.flush_locked()
            self._pack_path = self.directory / f"{name}.pack"
            self._entries = self._read(self._pack_path)
            self._new = False

    def _read(self, path: Path) -> dict[bytes, bytes]:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return {}
        try:
            st = os.fstat(fd)
            if st.st_uid != os.getuid() or st.st_mode & 0o022:
                return {}
            with os.fdopen(fd, "rb") as f:
                fd = -1
                blob = f.read()
        except OSError:
            return {}
        finally:
            if fd >= 0:
                os.close(fd)
        header = self._header
        if not blob.startswith(header) or len(blob) < len(header) + _DIGEST_SIZE:
            return {}
        digest = blob[len(header) : len(header) + _DIGEST_SIZE]
        payload = blob[len(header) + _DIGEST_SIZE :]
        if hashlib.sha256(payload).digest() != digest:
            return {}
        try:
            entries = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            return {}
        if type(entries) is not dict:
            return {}
        return {k: v for k, v in entries.items() if type(k) is bytes and type(v) is bytes and len(k) == _DIGEST_SIZE}

    def flush(self) -> None:
        """Write the current pack if this process compiled code it did not hold."""
        with self._lock:
            self.flush_locked()

    def flush_locked(self) -> None:
        path = self._pack_path
        if path is None or not self._new:
            return
        self._new = False
        payload = marshal.dumps(self._entries)
        blob = self._header + hashlib.sha256(payload).digest() + payload
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return
        self._prune()

    def _prune(self) -> None:
        """Keep the :data:`PACKS_KEPT` packs used last (a pack is rewritten when used with new code)."""
        try:
            packs = [(p.stat().st_mtime, p) for p in self.directory.glob("*.pack")]
        except OSError:
            return
        if len(packs) <= PACKS_KEPT:
            return
        packs.sort()
        for _, p in packs[: len(packs) - PACKS_KEPT]:
            try:
                p.unlink()
            except OSError:
                pass

    # -- code ------------------------------------------------------------------

    def compile(self, source: str, filename: str) -> CodeType:
        """``compile(source, filename, "exec")``, read from the pack when it holds that source's code."""
        key = hashlib.sha256(filename.encode("utf-8", "surrogatepass") + b"\0" + source.encode("utf-8", "surrogatepass")).digest()
        blob = self._entries.get(key)
        if blob is not None:
            try:
                code = marshal.loads(blob)
            except (ValueError, EOFError, TypeError):
                code = None
            if type(code) is CodeType and code.co_filename == filename:
                return code
        code = compile(source, filename, "exec")
        if self._pack_path is not None:
            with self._lock:
                self._entries[key] = marshal.dumps(code)
                self._new = True
        return code

    def clear(self) -> None:
        """Remove every pack of this pyrego and Python version."""
        with self._lock:
            self._entries = {}
            self._new = False
            try:
                names = list(self.directory.iterdir())
            except OSError:
                return
            for p in names:
                if p.suffix in (".pack", ".tmp"):
                    try:
                        p.unlink()
                    except OSError:
                        pass


_active: CodeCache | None = None
_atexit_registered = False


def enable(directory: str | os.PathLike[str] | None = None) -> bool:
    """Use the cache in ``directory`` (default :func:`default_directory`); False if it is not private to this user."""
    global _active, _atexit_registered
    cache = CodeCache(Path(directory) if directory is not None else default_directory())
    if not cache.usable():
        disable()
        return False
    if _active is not None:
        _active.flush()
    _active = cache
    if not _atexit_registered:
        atexit.register(flush)
        _atexit_registered = True
    return True


def enable_default() -> bool:
    """:func:`enable` the default directory (as the command line does)."""
    return enable()


def disable() -> None:
    """Stop using the cache (what was compiled so far is written first)."""
    global _active
    if _active is not None:
        _active.flush()
    _active = None


def is_enabled() -> bool:
    return _active is not None


def use_context(policies: Mapping[str, str] | Iterable[tuple[str, str]], *flags: str) -> None:
    """Name the policy set being compiled (``{file: text}`` and options): its pack is read."""
    cache = _active
    if cache is None:
        return
    items = policies.items() if isinstance(policies, Mapping) else policies
    h = hashlib.sha256()
    for flag in flags:
        h.update(flag.encode("utf-8", "surrogatepass") + b"\0")
    for name, text in sorted(items):
        h.update(name.encode("utf-8", "surrogatepass") + b"\0")
        h.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    cache.use_context(h.hexdigest())


def flush() -> None:
    """Write what this process compiled to the current pack."""
    if _active is not None:
        _active.flush()


def clear() -> None:
    """Remove the cached code of this pyrego and Python version."""
    cache = _active or CodeCache(default_directory())
    cache.clear()


def compile_source(source: str, filename: str) -> CodeType:
    """The code of generated ``source``: from the cache when enabled and it has it, else ``compile()``."""
    cache = _active
    if cache is None:
        return compile(source, filename, "exec")
    return cache.compile(source, filename)
