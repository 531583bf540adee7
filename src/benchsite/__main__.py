"""``python -m benchsite``: the same as the ``benchsite`` command."""

from benchsite.entry import main

main()
