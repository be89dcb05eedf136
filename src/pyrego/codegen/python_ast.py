"""One lock for the code generators' use of Python's ``ast`` module.

In CPython 3.11 two threads building or compiling ``ast`` trees at once can
fail with ``SystemError: AST constructor recursion depth mismatch``: the
converter's depth counter is shared by the interpreter. Every parse of
Python source into a tree, and every compile of such a tree, holds this lock
(the generators otherwise compile text, which does not go through it)."""

from __future__ import annotations

import ast
import threading
from typing import Any

python_ast_lock = threading.Lock()


def literal_eval(text: str) -> Any:
    """:func:`ast.literal_eval` under the lock (it parses ``text`` into a tree)."""
    with python_ast_lock:
        return ast.literal_eval(text)


__all__ = ["literal_eval", "python_ast_lock"]
