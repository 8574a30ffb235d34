"""What each command runs, once, over an engine, layer 5 (docs/architecture.md).

Each command's entry point is in a module of its own (:data:`COMMANDS`): files in, model,
codes or frames out (``fit_sources``, ``encode_sources``, ``decode_codes``, ...). Beside them:

* :mod:`.running`: what the entry points share: the engine a workflow runs on
  (``engine_for``), a video's frame rate from its source, decoded frames written as they come;
* :mod:`.evaluation`, :mod:`.masking`: what ``kpca eval`` measures, on whole frames and on
  frames completed from part of them; :mod:`.sweep`: ``kpca sweep``'s grid;
* :mod:`.reconstruct`: ``kpca reconstruct`` and ``kpca sensors``;
* :mod:`.fitparameters`: the table ``kpca fit --params`` reads;
* :mod:`.summary`: what ``info`` (and ``fit``) print; :mod:`.report`, :mod:`.plots`: pictures.

The command line reaches this package only through the names of :data:`EXPORTS`, imported when
first asked for: ``kpca --help`` and the options that read a constant never pay for the
estimator, the engines and the model file the entry points import.
"""

from __future__ import annotations

import importlib

# Every kpca command: the functions it runs, and the module of this package that holds them.
COMMANDS = {
    "fit": ("fit", ["fit_sources"]),
    "encode": ("encode", ["encode_sources"]),
    "decode": ("decode", ["decode_codes"]),
    "denoise": ("denoise", ["denoise_sources"]),
    "eval": ("evaluate", ["evaluate_sources"]),
    "sweep": ("sweep", ["sweep_sources"]),
    "compare": ("comparison", ["compare_sequences"]),
    "extract": ("extract", ["extract_frames"]),
    "predict": ("predict", ["predict_frames"]),
    "reconstruct": ("reconstruct", ["reconstruct_sources", "reconstruct_readings"]),
    "sensors": ("reconstruct", ["choose_sensors"]),
    "info": ("summary", ["ModelSummary"]),
    "plot": ("plots", ["plot_components", "plot_sweep"]),
}
# What the commands' reports and options take besides: the fit's report, eval's pictures and
# hold-outs, the sweep's range of widths and its numbers of components.
REPORTING = {
    "fit_report": "summary",
    "write_report": "report",
    "require_matplotlib": "report",
    "HOLDOUTS": "evaluation",
    "betas_from_range": "sweep",
    "DEFAULT_KS": "sweep",
}
EXPORTS = {name: module for module, names in COMMANDS.values() for name in names} | REPORTING


def __getattr__(name: str):
    if name in EXPORTS:
        return getattr(importlib.import_module(f".{EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(EXPORTS)
