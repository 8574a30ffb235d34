"""What each command runs, once, over an engine, layer 5 (docs/architecture.md).

* :mod:`.commands`: files in, model, codes or frames out: ``fit_sources``, ``encode_sources``,
  ``decode_codes``, ``denoise_sources``, ``evaluate_sources``, ``sweep_sources``,
  ``extract_frames`` (importable from this package, as the README shows them, with
  ``compare_sequences``, without importing the rest before they are asked for);
* :mod:`.evaluation`, :mod:`.sweep`: ``kpca eval`` and ``kpca sweep``;
* :mod:`.predict`: ``kpca predict``, frames for parameter values never seen (and
  :mod:`.fitparameters`: the table ``kpca fit --params`` reads);
* :mod:`.comparison`: ``kpca compare``, and the summaries it prints;
* :mod:`.summary`: what ``info`` (and ``fit``) print;
* :mod:`.report`, :mod:`.plots`: their pictures.
"""

from __future__ import annotations

import importlib

COMMANDS = {  # each command's function, and the module of this package that holds it
    "fit_sources": "commands",
    "encode_sources": "commands",
    "decode_codes": "commands",
    "denoise_sources": "commands",
    "evaluate_sources": "commands",
    "sweep_sources": "commands",
    "compare_sequences": "comparison",
    "extract_frames": "commands",
    "predict_frames": "predict",
}


def __getattr__(name: str):
    # The commands import the estimator, the engines and the model file: `kpca --help` and the
    # options that read a constant of this package never pay for it.
    if name in COMMANDS:
        return getattr(importlib.import_module(f".{COMMANDS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(COMMANDS)
