"""``python -m kpcacli`` runs the ``kpca`` command line."""

from .cli.entry import run

run()
