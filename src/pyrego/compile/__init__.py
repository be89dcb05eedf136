"""Compilation: resolution, safety, OPA's checks, rewriting and the rule index, to a checked rule tree."""
