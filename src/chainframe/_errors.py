"""chainframe's exception root, and the error for bad input.

Every exception chainframe raises on purpose derives from :class:`ChainframeError`. Input is checked before any
request is sent; :class:`InputError` names the argument, what was wrong, and how to fix it. The RPC branch of the tree
is drawn in :mod:`chainframe.rpc._errors`.
"""


class ChainframeError(Exception):
    """Root of every error chainframe raises on purpose."""

    def __reduce__(self) -> tuple[object, ...]:
        # Errors cross process boundaries (Dask workers): rebuilt from their args and attributes, whatever the
        # subclass's __init__ takes (pickle's default calls it with the args alone, which keyword-only ones fail).
        return (_rebuild, (type(self), self.args, self.__dict__))


def _rebuild(cls: type[ChainframeError], args: tuple[object, ...], state: dict[str, object]) -> ChainframeError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class InputError(ChainframeError, ValueError):
    """An argument was wrong; nothing was sent. The message names the argument and how to fix it."""


def first_error(error: BaseException) -> BaseException:
    """The error a caller should see for ``error``: itself, or, for an exception group (what a task group raises
    when its tasks fail), the first chainframe error inside it, depth first (else its first error that is not a
    cancellation), with a note naming how many others there were."""
    if not isinstance(error, BaseExceptionGroup):
        return error
    leaves = _leaves(error)
    ours = [e for e in leaves if isinstance(e, ChainframeError)]
    others = [e for e in leaves if type(e).__name__ != "CancelledError"]
    chosen: BaseException = (ours or others or leaves)[0]
    if len(leaves) > 1:
        more = len(leaves) - 1
        chosen.add_note(f"({more} more error{'s' if more != 1 else ''} in other tasks of the same run)")
    return chosen


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for inner in group.exceptions:
        out += _leaves(inner) if isinstance(inner, BaseExceptionGroup) else [inner]
    return out


class DecodeError(ChainframeError):
    """A response held a value that is not what its column needs (bad hex, wrong length)."""


class ValueOutOfRange(DecodeError):
    """A value does not fit its column's type; it was not wrapped, rounded or dropped."""
