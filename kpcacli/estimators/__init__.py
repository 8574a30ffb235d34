"""The estimators, layer 4 (docs/architecture.md): a fitted state with its parameters and its
operations, over the solvers and the model file.

* :mod:`.estimator`: :class:`~kpcacli.estimators.estimator.FrameModel` (``kpcacli.FrameModel``),
  fit, encode, decode, denoise, save and load;
* :mod:`.sklearn_estimator`: :class:`~kpcacli.estimators.sklearn_estimator.KernelPCA`
  (``kpcacli.KernelPCA``), the same model behind scikit-learn's API, imported only when asked
  for (scikit-learn takes a second to import);
* :mod:`.fitting`: the fit's pipeline, from training frames to a fitted state;
* :mod:`.operations`: what a fitted state does to frames (encode, denoise);
* :mod:`.reconstruction`: whole frames from part of them (``FrameModel.reconstruct``,
  ``kpca reconstruct``);
* :mod:`.batches`: encoding many frames in batches of bounded memory;
* :mod:`.parametric`: a model fitted with parameters: the map fitted to its codes, the codes
  of parameter values never seen.
"""
