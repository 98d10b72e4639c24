"""The devnet's one error type: a node, the gateway or the workload could not do what was asked.

The message always says what to do about it (install step, flag, or the child's last output). It is a
:class:`~chainframe.ChainframeError` like every error chainframe raises on purpose (and a ``RuntimeError``, as it
always was).
"""

from chainframe._errors import ChainframeError


class DevnetError(ChainframeError, RuntimeError):
    """The local devnet could not be started, built or reached."""
