"""OPA's static type checker (``rego_type_error``), for compiled programs.

:func:`check_program` is a stage of :mod:`pyrego.compile.pipeline`, after the others:
each rule is checked after the rules it reads, with the types OPA infers
(:mod:`pyrego.typecheck.static_types`), and OPA's errors come out in OPA's order and words::

    plus: invalid argument(s)
    \thave: (number, string, ???)
    \twant: (x: number, y: number, z: number)

Up to ten errors are reported (then ``error limit reached``), as by OPA's
compiler. A program whose bodies cannot be ordered (unsafe variables) is not
checked: the code generator reports that error, which OPA reports first.
:func:`check_query` checks queries against the rules' types.

The reference is OPA v1.20.2 as it behaves, which in places is not what its
published source says (found by asking it): an object type with a dynamic
part unifies with one that lacks some of its keys; a ref whose head is a
composite value or a call is shown as written (``[1].a``, ``count(x).foo``);
a function read as a value is ``function data.p.f used as reference, not
called``; a failed call's operands are shown as they were before the check.

``rego.metadata.chain()`` and ``rule()`` are typed by the annotations they
return, as OPA checks the constants it puts in their place.

Deliberate differences: ``print`` arguments are checked, as
by OPA with print statements on; OPA checks independent rules in a random
order, pyrego in source order (which only shows for a function with a
failing definition); JSON schemas are read as :mod:`.schemas` says.

Modules: :mod:`.lower` (bodies as OPA rewrites them), :mod:`.env` (type
environments), :mod:`.check` (expressions), :mod:`.refs` (refs),
:mod:`.rules` (rule order and rule types), :mod:`.fast` (whole programs
that cannot fail, passed in one cheap pass), :mod:`.screen` (bodies that
cannot fail, passed without lowering them), :mod:`.signatures` (builtins),
:mod:`.schemas` and :mod:`.annotated` (JSON schemas as types, where they apply),
:mod:`.arity` (arity errors, always on), :mod:`.locations` and
:mod:`.localvars` (where and how OPA names things in its messages).
"""

from __future__ import annotations

from pyrego.ast import nodes as ast
from pyrego.compile.base import CompiledTree
from pyrego.errors import Location, RegoCompileError, RegoError, RegoTypeError
from pyrego.typecheck.annotated import SchemaAnnotations, has_metadata
from pyrego.typecheck.check import Checker, TypeErr
from pyrego.typecheck.env import TypeEnv
from pyrego.typecheck.fast import screen_program
from pyrego.typecheck.lower import Lowerer
from pyrego.typecheck.replaced import copy_tree, has_with
from pyrego.typecheck.rules import ProgramChecker, QueryTypes, function_types, screened_query_types
from pyrego.typecheck.schemas import SchemaSet
from pyrego.typecheck.some_vars import LocalVarNumbers

#: Whether :func:`check_program` first tries :mod:`.fast` (off only to test it against the full check).
FAST_SCREEN = True

#: OPA's compiler stops after this many errors.
ERROR_LIMIT = 10


def _location_key(err: TypeErr) -> tuple[str, int, int, str]:
    loc = err.location
    return (loc.file, loc.row, loc.col, err.text())


def to_rego_error(errors: list[TypeErr], *, sort: bool = True, limit_when_full: bool = True) -> RegoTypeError:
    """The error to raise for ``errors``: the first one, with all of them in ``errors``.

    Module errors are sorted by location then text and cut at ten, with OPA's
    ``error limit reached`` after the tenth; a query's keep their order and
    get the marker only past ten (as OPA's query compiler does)."""
    if sort:
        errors = sorted(errors, key=_location_key)
    out: list[RegoError] = [RegoTypeError(e.text(), _location(e.location)) for e in errors[:ERROR_LIMIT]]
    if len(errors) > ERROR_LIMIT or (limit_when_full and len(errors) == ERROR_LIMIT):
        out.append(RegoCompileError("error limit reached"))
    first = out[0]
    assert isinstance(first, RegoTypeError)
    first.errors = out  # type: ignore[attr-defined]
    return first


def _location(loc: Location) -> Location | None:
    return loc if loc.row else None


def _schema_annotations(tree: CompiledTree) -> bool:
    """Whether some ``# METADATA`` block may give a schema (read by the full check)."""
    return has_metadata(tree.metadata) and SchemaAnnotations(tree, None).active


def check_program(
    tree: CompiledTree,
    dependencies: dict[int, set[int]],
    modules: list[ast.Module] | None = None,
    schemas: SchemaSet | None = None,
) -> QueryTypes | None:
    """Check ``tree``'s rules; raises RegoTypeError (``.errors`` lists them all).

    ``dependencies``: what each rule node reads (by id), as the compiler's
    recursion check found it: rules are checked after the rules they read.
    ``modules`` (the compiled modules) let errors on refs to rules say where
    OPA says they are (:mod:`.locations`). ``schemas``: the input schema and
    the schemas ``# METADATA`` blocks name (:mod:`.schemas`); inline schemas
    in ``# METADATA`` blocks are read with or without it.

    Returns the rules' types (for queries), or None when the program was
    not checked (its bodies cannot be ordered: that error is reported when
    code is generated)."""
    if schemas is None and FAST_SCREEN and not _schema_annotations(tree):
        lookup = function_types(tree)
        types = screen_program(tree, lookup)
        if types is not None:  # no rule can fail: the full check is not needed
            return screened_query_types(tree, types, modules, lookup, dependencies)
    checker = ProgramChecker(tree, dependencies, modules, schemas)
    try:
        errors = checker.run()
    except RegoCompileError as err:
        if isinstance(err, RegoTypeError):
            raise
        return None
    if errors:
        raise to_rego_error(errors)
    return checker.query_types()


def check_query(program: QueryTypes | None, body: ast.Body) -> None:
    """Check a resolved query against the program's rule types (OPA's query type check).

    ``==`` stays a comparison in a query (OPA rewrites it to unification in
    modules only); errors keep the query's order."""
    if program is None:
        return
    lowerer = Lowerer(
        program.arity,
        program.is_function,
        rewrite_equals=False,
        function_paths=program.function_paths,
        local_numbers=LocalVarNumbers(query=body),
    )
    try:
        lowered, _ = lowerer.body(body, set(), set(), None, capture=True)
    except RegoCompileError as err:
        if isinstance(err, RegoTypeError):
            raise
        return
    rules = program.rules_env
    checker = Checker()
    if program.replaced is not None and has_with(lowered):
        # Rules reading a rule a with replaces are of any type in its
        # expression (.replaced): put in a copy of the rules' types, the
        # program's being shared by the queries of every thread.
        own = TypeEnv(rules.next)
        own.tree = copy_tree(rules.tree)
        with_any = program.replaced.override(own.tree)
        own.checker_factory = lambda: Checker(with_any=with_any)
        checker = Checker(with_any=with_any)
        rules = own
    env = rules.wrap()
    env.names = lowerer.show  # the query's own variables
    _, errors = checker.check_body(env, lowered)
    env.root.closure_memo.clear()
    if errors:
        raise to_rego_error(errors, sort=False, limit_when_full=False)


__all__ = ["check_program", "check_query", "to_rego_error", "ERROR_LIMIT"]
