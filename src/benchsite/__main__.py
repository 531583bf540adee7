"""``python -m benchsite``: the same as the ``benchsite`` command."""

from benchsite.cli.entry import main

main()
