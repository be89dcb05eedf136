"""Reading policies and data files from disk the way OPA's loader does.

A folder is a policy repository: every ``.rego`` file in it (and in its
sub-folders) is a module, and every ``.json``/``.yaml``/``.yml`` file is a
data document merged at the path of the sub-folders that hold it, relative
to the folder loaded (``repo/users/data.json`` sets ``data.users``). A data
file named on its own is merged at the root (or under a ``prefix``), so its
root must be an object.

Used by :meth:`pyrego.Engine.add_policies_from_dir` and ``pyrego eval -d``.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyrego.errors import DataError, Location, RegoParseError

DATA_EXTENSIONS = (".json", ".yaml", ".yml")
POLICY_EXTENSIONS = (".rego",)


class LoadError(DataError):
    """A path to load does not exist or cannot be read."""


@dataclass(frozen=True)
class LoadedFile:
    """One file found under a loaded path."""

    path: Path  # where it is on disk
    name: str  # the module name or file name errors show
    data_path: tuple[str, ...]  # where a data file's document is mounted under ``data``

    @property
    def is_policy(self) -> bool:
        return self.path.suffix in POLICY_EXTENSIONS


def iter_files(
    path: Path,
    prefix: Sequence[str] = (),
    *,
    recursive: bool = True,
    relative_to: Path | None = None,
    ignore: Sequence[str] = (),
) -> Iterator[LoadedFile]:
    """The policy and data files under ``path``, sorted by path.

    A file named directly is yielded whatever its extension (read as data
    unless it is a ``.rego`` file); from folders only files with a known
    extension are taken. ``relative_to`` names files relative to that folder
    (otherwise they are named as found, ``path`` included). ``ignore``: glob
    patterns of file and folder names to leave out (``opa test --ignore``).
    """
    if not path.exists():
        raise LoadError(f"{path}: no such file or directory")
    if _ignored(path.name, ignore):
        return
    if path.is_file():
        yield LoadedFile(path, _name(path, relative_to), tuple(prefix))
        return
    for child in sorted(path.iterdir()):
        if _ignored(child.name, ignore):
            continue
        if child.is_dir():
            if recursive:
                yield from iter_files(child, [*prefix, child.name], recursive=True, relative_to=relative_to, ignore=ignore)
        elif child.suffix in DATA_EXTENSIONS + POLICY_EXTENSIONS:
            yield LoadedFile(child, _name(child, relative_to), tuple(prefix))


def _ignored(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _name(path: Path, relative_to: Path | None) -> str:
    if relative_to is None:
        return str(path)
    return path.relative_to(relative_to).as_posix()


def read_policy(file: LoadedFile) -> str:
    """The text of a policy file (an unreadable file is a parse error at its name)."""
    try:
        return file.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RegoParseError(f"cannot read policy: {exc}", Location(file.name, 1, 1)) from None


def read_document(path: Path, name: str | None = None) -> Any:
    """Parse a JSON or YAML file (by extension; other names are tried as JSON, then YAML)."""
    from pyrego.runtime.convert import loads

    shown = name or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{shown}: {exc}") from None
    if path.suffix == ".json":
        return loads(text, what=f"JSON in {shown}")
    if path.suffix not in (".yaml", ".yml"):
        try:
            return loads(text, what=f"JSON in {shown}")
        except DataError:
            pass
    from pyrego.yaml_safe import load_yaml

    try:
        return load_yaml(text)
    except Exception as exc:  # noqa: BLE001 - yaml raises many kinds
        raise DataError(f"{shown}: error converting YAML to JSON: {exc}") from None


def read_schemas(arg: str | os.PathLike[str]) -> dict[tuple[str, ...], Any]:
    """The schemas of ``opa eval -s``/``opa check -s``: a file is the input schema
    (at the empty path); a folder gives every file under it, named by its path
    without the extension (``k8s/pod.json`` is ``schema.k8s.pod``)."""
    path = Path(arg)
    if not path.exists():
        raise DataError(f"stat {arg}: no such file or directory")
    if not path.is_dir():
        return {(): read_document(path)}
    out: dict[tuple[str, ...], Any] = {}
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).with_suffix("")
        out[tuple(rel.parts)] = read_document(f, str(f))
    return out


def data_document(file: LoadedFile) -> dict[str, Any]:
    """A data file's document, nested under its mount path (an object to merge into ``data``)."""
    doc = read_document(file.path, file.name)
    if not file.data_path and not isinstance(doc, dict):
        raise DataError(f"{file.name}: bad document type: the root of a data file must be an object")
    for key in reversed(file.data_path):
        doc = {key: doc}
    return doc  # type: ignore[no-any-return]


def split_prefix(arg: str) -> tuple[list[str], str]:
    """Split OPA's ``a.b:path`` syntax into (``["a", "b"]``, ``path``).

    An argument naming an existing file, or a URL-like ``x://``, is never
    split.
    """
    if os.path.exists(arg) or "://" in arg:
        return [], arg
    head, sep, rest = arg.partition(":")
    if sep and head:
        return head.split("."), rest
    return [], arg
