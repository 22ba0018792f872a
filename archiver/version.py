"""The package's version, said once in Python (and in pyproject.toml, which tests/test_layers.py holds equal)."""

__version__ = "0.1.0"
