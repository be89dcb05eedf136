"""The error every part of the data filters raises, and the mappings lookup
the translation and the policy-condition adapters share."""

from __future__ import annotations

from typing import Any

from pyrego.errors import RegoError


class FilterError(RegoError):
    """A filter OPA's Compile API refuses: ``code`` is OPA's (``compile_error``,
    ``prepare_error``, ``parse_error``) and the message its text."""

    code = "compile_error"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, None, code=code)


def lookup_mappings(mappings: dict[str, Any] | None, target: str, dialect: str) -> dict[str, Any] | None:
    """The table/column mappings for ``target`` and ``dialect`` (OPA's lookup: the
    dialect's own, else the target's, else the mappings as given)."""
    if mappings is None:
        return None
    md = mappings.get(dialect)
    if md is not None:
        if not isinstance(md, dict):
            raise FilterError("compile_error", f"mappings: invalid mappings for dialect {dialect}")
        if md:
            return md
    mt = mappings.get(target)
    if mt is not None:
        if not isinstance(mt, dict):
            raise FilterError("compile_error", f"mappings: invalid mappings for target {target}")
        return mt
    return mappings
