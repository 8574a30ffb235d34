"""The command line, layer 6 (docs/architecture.md): a thin click layer over the workflows.

* :mod:`.group`: the ``kpca`` group, whose every error is one line on standard error, and
  what the commands share (checking outputs, building the frame request and the model);
* :mod:`.options`: the options several commands share, declared once;
* :mod:`.fitting`, :mod:`.coding`, :mod:`.measuring`: the commands, by what they do.
"""

from . import coding, fitting, measuring  # noqa: F401  (each registers its commands on main)
from .group import main

__all__ = ["main"]
