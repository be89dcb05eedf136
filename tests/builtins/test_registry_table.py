"""The builtin table (:mod:`pyrego.builtins.table`), one record per builtin,
says which module registers it and OPA's flags for it; it must match the
modules' ``@builtin`` registrations and OPA's capabilities file, and every
builtin has its type signature and description. Loading stays per category
and safe under threads."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from pyrego.builtins import table
from pyrego.builtins.catalog import table_source
from pyrego.builtins.descriptions import DESCRIPTIONS
from pyrego.builtins.registry import all_builtins, declared_builtins
from pyrego.compile.checks import DEPRECATED_BUILTINS
from pyrego.typecheck.signatures_data import SIGNATURES

SRC = str(Path(__file__).resolve().parents[2] / "src")


def test_table_is_what_the_modules_register() -> None:
    """``python -m pyrego.builtins.catalog --table`` rewrites the table."""
    assert Path(table.__file__).read_text(encoding="utf-8") == table_source()
    assert {name: "pyrego.builtins." + module for name, module in table.MODULES.items()} == declared_builtins()


def test_every_builtin_has_its_facts() -> None:
    builtins = all_builtins()
    names = set(builtins)
    assert {n for n, b in builtins.items() if b.nondeterministic} == table.NONDETERMINISTIC
    assert {n for n, b in builtins.items() if b.relation} == table.RELATION == {"walk"}
    assert "http.send" in table.NONDETERMINISTIC and "rand.intn" in table.NONDETERMINISTIC
    assert names == set(table.MODULES)
    assert len(names) == 206
    assert set(SIGNATURES) == names
    assert set(DESCRIPTIONS) == names
    assert table.DEPRECATED <= names
    assert DEPRECATED_BUILTINS == table.DEPRECATED


def test_lookup_loads_one_category_in_a_fresh_interpreter() -> None:
    code = (
        "import sys\n"
        "from pyrego.builtins.registry import lookup, REGISTRY\n"
        "assert lookup('crypto.sha256') is not None\n"
        "assert lookup('no.such.builtin') is None\n"
        "assert 'pyrego.builtins.crypto' in sys.modules and 'pyrego.builtins.graphql' not in sys.modules\n"
        "assert 'pyrego.builtins.encoding_yaml' not in sys.modules and 'yaml' not in sys.modules\n"
        "assert set(REGISTRY) >= {'crypto.sha256', 'crypto.md5'}\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_threads_looking_up_while_categories_load() -> None:
    """Many threads ask for builtins of categories not loaded yet: each gets
    its builtin (never None), and a builtin found is callable at once."""
    code = (
        "import threading\n"
        "from pyrego.builtins.table import MODULES\n"
        "from pyrego.builtins.registry import lookup\n"
        "names = sorted(MODULES)\n"
        "missing = []\n"
        "barrier = threading.Barrier(8)\n"
        "def work(k):\n"
        "    barrier.wait()\n"
        "    for name in names[k::3] + names:\n"
        "        if lookup(name) is None: missing.append(name)\n"
        "threads = [threading.Thread(target=work, args=(k % 3,)) for k in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "assert not missing, missing\n"
        "assert lookup('upper').fn('abc') == 'ABC'\n"
    )
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_lookup_is_stable_across_threads_in_process() -> None:
    found: list[object] = []
    threads = [threading.Thread(target=lambda: found.append(all_builtins()["count"])) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(b) for b in found}) == 1
