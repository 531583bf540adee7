"""The ``benchsite`` console script: take Ctrl-C back first, then import the command.

Importing the command line loads pandas and pyarrow (about a second). Ctrl-C in that second, or
a SIGINT inherited as ignored (a CI step, a shell's background job), must not decide how
benchsite behaves: default handling is restored before anything heavy is imported, and an
interruption during start-up is one line and exit status 130, never a traceback.
"""

from __future__ import annotations

import signal
import sys


def main() -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        from benchsite.cli.app import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    cli_main()
