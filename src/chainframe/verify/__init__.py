"""Verified datasets: stored rows checked against the block headers they came with (see ``_folder``)."""

from chainframe.verify._folder import CheckResult, Failure, bloom, verify_folder
from chainframe.verify._header import header_hash

__all__ = ["CheckResult", "Failure", "bloom", "header_hash", "verify_folder"]
