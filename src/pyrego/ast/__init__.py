"""The Rego abstract syntax tree: node classes and their OPA JSON and pretty forms."""
