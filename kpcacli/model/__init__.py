"""A fitted model in memory, layer 2 (docs/architecture.md), below the solvers that read it.

* :mod:`.state`: :class:`~kpcacli.model.state.FittedState`, the one documented list of what a
  fit holds, and the mathematics on its members (the forward map, the fingerprint);
* :mod:`.spectralfit`: everything of a fit after the pixel pass, from the linear Gram alone;
* :mod:`.neighbours`: the training codes nearest a code;
* :mod:`.validation`: the one check of everything that enters a model: a model file's members,
  new frames, codes.
"""
