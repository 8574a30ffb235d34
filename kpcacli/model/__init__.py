"""A fitted model in memory, layer 2 (docs/architecture.md), below the solvers that read it.

* :mod:`.state`: :class:`~kpcacli.model.state.FittedState`, the one documented list of what a
  fit holds, and the mathematics on its members (the forward map, the fingerprint);
* :mod:`.spectralfit`: everything of a fit after the pixel pass, from the linear Gram alone;
* :mod:`.framerows`: what the state's frames are: an array, or rows read on demand;
* :mod:`.neighbours`: the training codes nearest a code;
* :mod:`.validation`: the checks of what enters a model: frames, masks, sensors, codes (a model
  file's members: :mod:`kpcacli.modelfile.integrity`).
"""
