"""The installed version of chainframe, written into every file's metadata."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chainframe")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
