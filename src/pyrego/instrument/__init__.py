"""Instrumented evaluation: coverage, traces and profiles in OPA's shapes."""
