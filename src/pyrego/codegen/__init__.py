"""Code generation: a checked rule tree to Python (closures, compact and fast code, ``with``), and its caches."""
