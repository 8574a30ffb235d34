"""``python -m kpcacli`` runs the ``kpca`` command line."""

from .cli import main

main(prog_name="kpca")
