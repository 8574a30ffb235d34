"""The ``kpca`` console script (and ``python -m kpcacli``): the command line, its imports
inside the reach of Ctrl-C's one line.

Importing numpy, click and the commands takes a noticeable part of a second; a Ctrl-C
meanwhile met no handler yet and printed a KeyboardInterrupt traceback, exit -2 (SIGINT). Here
the imports run inside a handler that says what the command says later: ``Error:
interrupted``, exit 130. Nothing heavy is imported before (:mod:`kpcacli`, :mod:`kpcacli.cli`
load lazily): what is left is the interpreter's own start.
"""

from __future__ import annotations

import sys

INTERRUPTED = 130  # the shell's status for a command ended by SIGINT, as the command line exits


def run() -> None:
    """Run ``kpca`` with the arguments of this process."""
    try:
        from .commands import main
    except KeyboardInterrupt:
        sys.stderr.write("Error: interrupted\n")
        sys.exit(INTERRUPTED)
    main(prog_name="kpca")
