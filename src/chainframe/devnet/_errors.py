"""The devnet's one error type: a node, the gateway or the workload could not do what was asked.

The message always says what to do about it (install step, flag, or the child's last output).
"""


class DevnetError(RuntimeError):
    """The local devnet could not be started, built or reached."""
