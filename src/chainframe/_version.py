"""The version of chainframe, written into every file's metadata.

A constant rather than an ``importlib.metadata`` lookup, which cost 36 ms of every start; a test keeps it equal to
the installed package's version (``pyproject.toml``).
"""

__version__ = "0.1.0"
