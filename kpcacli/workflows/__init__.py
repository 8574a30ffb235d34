"""What each command runs, once, over an engine, layer 5 (docs/architecture.md).

* :mod:`.commands`: files in, model, codes or frames out: ``fit_sources``, ``encode_sources``,
  ``decode_codes``, ``denoise_sources``, ``evaluate_sources``, ``sweep_sources``,
  ``compare_sequences``, ``extract_frames`` (importable from this package, as the README
  shows them, without importing the rest before they are asked for);
* :mod:`.evaluation`, :mod:`.sweep`: ``kpca eval`` and ``kpca sweep``;
* :mod:`.comparison`, :mod:`.summary`: what ``compare`` and ``info`` (and ``fit``) print;
* :mod:`.report`, :mod:`.plots`: their pictures.
"""

from __future__ import annotations

import importlib

COMMANDS = (
    "fit_sources",
    "encode_sources",
    "decode_codes",
    "denoise_sources",
    "evaluate_sources",
    "sweep_sources",
    "compare_sequences",
    "extract_frames",
)


def __getattr__(name: str):
    # The commands module imports the estimator, the engines and the model file: `kpca --help`
    # and the options that read a constant of this package never pay for it.
    if name in COMMANDS:
        return getattr(importlib.import_module(".commands", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(COMMANDS)
