"""The ``kpca`` group with every command registered on it, explicitly: what
``kpcacli.cli.main`` is (imported when first asked for, :mod:`kpcacli.cli`)."""

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
