"""chainframe's exception root, and the error for bad input.

Every exception chainframe raises on purpose derives from :class:`ChainframeError`. Input is checked before any
request is sent; :class:`InputError` names the argument, what was wrong, and how to fix it. The RPC branch of the tree
is drawn in :mod:`chainframe.rpc._errors`.
"""


class ChainframeError(Exception):
    """Root of every error chainframe raises on purpose."""


class InputError(ChainframeError, ValueError):
    """An argument was wrong; nothing was sent. The message names the argument and how to fix it."""
