"""The command line, layer 6 (docs/architecture.md): a thin click layer over the workflows.

* :mod:`.group`: the ``kpca`` group, whose every error is one line on standard error;
* :mod:`.shared`: what the commands share (checking outputs, building the frame request and
  the estimator, notes and warnings);
* :mod:`.options`: the options several commands share, declared once;
* :mod:`.fitting`, :mod:`.coding`, :mod:`.reconstructing`, :mod:`.measuring`: the commands, by what they do,
  registered on the group here, explicitly.
"""

from .coding import decode, denoise, encode, extract, predict
from .fitting import fit, info, plot
from .group import main
from .measuring import compare, evaluate_command, sweep
from .reconstructing import reconstruct, sensors

for command in (
    fit,
    info,
    plot,
    encode,
    decode,
    denoise,
    reconstruct,
    sensors,
    extract,
    predict,
    evaluate_command,
    sweep,
    compare,
):
    main.add_command(command)

__all__ = ["main"]
