"""pyrego's version (also in pyproject.toml), for the modules below the package
that need it without importing the package itself."""

__version__ = "0.1.0"
