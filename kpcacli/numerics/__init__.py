"""The mathematics on arrays, layer 1 (docs/architecture.md): nothing here reads or writes a
file, so a Gram or a kernel computed here serves frames from anywhere.

* :mod:`.gram`: the linear Gram ``L`` of the training frames (García-González et al. 2021,
  eq. 8), one blocked product over the pixels, and the products of new frames with them;
* :mod:`.kernels`: the kernels as functions of ``L`` (eq. 21);
* :mod:`.centring`: centring in feature space (eqs. 24–25);
* :mod:`.spectrum`: the eigenproblem (eq. 26), k by the variance tolerance (eq. 3), codes;
* :mod:`.linearaxes`: linear PCA of the training frames from ``L``, the distance solver's axes;
* :mod:`.landmarks`: which frames a landmark fit keeps;
* :mod:`.novelty`: how far new frames lie from the training frames;
* :mod:`.metrics`: PSNR, SSIM and the means ``compare`` states.
"""
