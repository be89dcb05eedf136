"""``format_module``: policy text in, ``opa fmt``'s canonical text out."""

from __future__ import annotations

from pyrego.errors import Location, RegoError, RegoTypeError
from pyrego.formatter.convert import Converter
from pyrego.formatter.imports import Version, prepare
from pyrego.formatter.source import SourceIndex
from pyrego.formatter.v1_checks import check_v1_compatible
from pyrego.formatter.writer import Writer
from pyrego.parse.lexer import tokenize
from pyrego.parse.parser import deep_recursion, parse_module

__all__ = ["format_module", "FormatErrors"]


class FormatErrors(RegoError):
    """Several errors at once (OPA reports all the problems it finds)."""

    code = "rego_format_error"

    def __init__(self, errors: list[RegoError]) -> None:
        self.errors = errors
        first = errors[0]
        super().__init__(first.message, first.location, code=first.code, source_line=first.source_line)


def format_module(text: str, path: str = "", *, rego_v1: bool = True, v0_to_v1: bool = False) -> str:
    """Format a Rego module as ``opa fmt`` does.

    ``rego_v1`` (the default) reads and writes Rego v1; ``rego_v1=False``
    reads and writes v0 (``opa fmt --v0-compatible``); ``v0_to_v1`` reads v0
    and writes code valid in v0 and v1 (``opa fmt --v0-v1``: ``if`` and
    ``contains``, ``:=``, ``import rego.v1`` in place of ``future.keywords``
    imports).

    Raises :class:`~pyrego.errors.RegoParseError` for text that does not
    parse, and other :class:`~pyrego.errors.RegoError` s for what OPA's
    formatter refuses: for v1 output, imports shadowing imports, rules or
    variables shadowing ``input``/``data``, deprecated builtins, rules named
    after keywords (several at once as :class:`FormatErrors`); operators
    called with the wrong number of arguments.
    """
    from pyrego.codegen.build_cache import gc_paused  # (the parser's own pause of the cyclic GC)

    try:
        # (a few Python frames per branch of an else chain, which may be thousands long)
        with deep_recursion(), gc_paused():  # formatting allocates much and frees all: collections only cost
            return _format(text, path, rego_v1=rego_v1, v0_to_v1=v0_to_v1)
    except RecursionError:
        raise RegoError("policy too deeply nested to format", Location(path, 1, 1), code="rego_format_error") from None


def _format(text: str, path: str, *, rego_v1: bool, v0_to_v1: bool) -> str:
    parse_v1 = rego_v1 and not v0_to_v1
    module = parse_module(text, path, rego_v1=parse_v1)
    version = Version("v0v1" if v0_to_v1 else "v1" if rego_v1 else "v0")
    if version.v1_output:
        errors = check_v1_compatible(module, text)
        if errors:
            raise errors[0] if len(errors) == 1 else FormatErrors(errors)
    index = SourceIndex(text, tokenize(text))
    converter = Converter(index)
    tree = converter.module(module)
    opts = prepare(tree, version, converter.logical_keywords)
    writer = Writer(opts)
    writer.generated_vars = "__local" in text
    writer.write_module(tree)
    if writer.errors:
        errs: list[RegoError] = []
        for loc, message in writer.errors:
            errs.append(RegoTypeError(message, Location(path, loc.row, loc.col)))
        raise errs[0] if len(errs) == 1 else FormatErrors(errs)
    return writer.text()
