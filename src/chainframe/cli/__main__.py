"""``python -m chainframe.cli``: the ``chainframe`` command."""

from chainframe.cli import command

command()
