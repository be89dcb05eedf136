"""``opa fmt`` for pyrego: Rego modules in OPA's canonical layout.

The pipeline, one module per step:

- :mod:`~pyrego.formatter.source`: where each node sits in the text (extents,
  bracket matching), which OPA's layout decisions read;
- :mod:`~pyrego.formatter.convert`: pyrego's AST plus the source into the tree
  OPA's printer works on (:mod:`~pyrego.formatter.nodes`);
- :mod:`~pyrego.formatter.imports`: the output's Rego version, and the
  ``future.keywords`` / ``rego.v1`` imports it keeps, adds or drops;
- :mod:`~pyrego.formatter.writer_base`, :mod:`~pyrego.formatter.writer_terms`,
  :mod:`~pyrego.formatter.writer`: the printer (OPA's ``format.go``);
- :mod:`~pyrego.formatter.v1_checks`: what stops v0 code from becoming v1;
- :mod:`~pyrego.formatter.api`: :func:`format_module`.
"""

from pyrego.formatter.api import FormatErrors, format_module

__all__ = ["FormatErrors", "format_module"]
