"""Parsing: Rego source text to :mod:`pyrego.ast.nodes.nodes` modules, queries and terms."""
