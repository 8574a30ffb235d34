"""What a model file holds, by name: every member, in every format.

=================  ==============  ===========================================================
member             shape / dtype   meaning
=================  ==============  ===========================================================
format_version     () int          1, 2 or 3
kernel             () str          rbf, poly, linear or sigmoid
beta, gamma        () float64      kernel scales (NaN, or null in format 2, when unused)
degree             () int64        polynomial degree
coef0              () float64      offset of poly and sigmoid
centred            () bool         kernel centred in feature space (eqs. 24–25)
frame_shape        (1 or 2,) int   ``(height, width)`` for images, ``(d,)`` for points
frame_names        (n,) str        source of each training frame
eigenvalues        (r,) float64    the leading eigenvalues, decreasing (eq. 26): all n up
                                   to 3,000 frames, r ≥ k beyond
eigenvectors       (n, k)          V* (eq. 26)
codes              (n, k)          Z*ᵀ, the training codes (eq. 27)
linear_gram        (n, n)          shifted linear Gram ``L = (X − s)(X − s)ᵀ``
origin             (d,)            the shift ``s`` (mean frame, integer for integer frames)
origin_dots        (n,)            ``(X − s) s``
origin_norm2       ()              ``|s|²``
gram_row_means     (n,)            centring term ``G1/n`` (zeros when not centred)
gram_mean          ()              centring term ``1ᵀG1/n²`` (zero when not centred)
frames             (n, d)          the training frames (uint8 for 8-bit input); in format 3
                                   8-bit images are ``stream`` and ``groups`` instead
frame_store        mapping         format 3: how the frames are coded (CRF, how it was
                                   chosen, PSNR against the frames given)
provenance         mapping         formats 2 and 3, optional: frame numbers, --frames, frame
                                   rate, source bytes (:mod:`kpcacli.io.provenance`)
solver_choice      mapping         format 3: the default pre-image solver the fit measured
                                   (:mod:`kpcacli.model.solverchoice`); older models keep
                                   their kernel's rule
parameters         mapping         format 3, optional: each training frame's parameters,
                                   their names, the map to codes and its leave-one-out
                                   errors (:mod:`kpcacli.model.parameters`)
axis_*, linear_axes                format 3, optional: the distance solver's linear-PCA axes,
                                   prepared at fit (:mod:`kpcacli.modelfile.axes`)
=================  ==============  ===========================================================
"""

# The dtype kinds of the scalar members (format_version is checked first, on its own).
SCALAR_KINDS = {
    "kernel": "U",
    "beta": "f",
    "gamma": "f",
    "degree": "iu",
    "coef0": "f",
    "centred": "b",
    "origin_norm2": "f",
    "gram_mean": "f",
}
SCALARS = ("format_version", *SCALAR_KINDS)
ARRAYS = (
    "frame_shape",
    "frame_names",
    "eigenvalues",
    "eigenvectors",
    "codes",
    "linear_gram",
    "origin",
    "origin_dots",
    "gram_row_means",
)
REQUIRED = SCALARS + ARRAYS + ("frames",)
