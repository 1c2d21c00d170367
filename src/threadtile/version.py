"""threadtile's version: one place for the package, the cache's salt and the CLI."""

__version__ = "0.1.0"
