"""One lock for the code generators' use of Python's ``ast`` module.

In CPython 3.11 two threads building or compiling ``ast`` trees at once can
fail with ``SystemError: AST constructor recursion depth mismatch``: the
converter's depth counter is shared by the interpreter. Every parse of
Python source into a tree, and every compile of such a tree, holds this lock
(the generators otherwise compile text, which does not go through it)."""

from __future__ import annotations

import threading

python_ast_lock = threading.Lock()

__all__ = ["python_ast_lock"]
