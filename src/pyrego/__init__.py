"""pyrego: a Rego policy engine that compiles policies to Python."""
