"""The model file: everything kpca writes to disk for a fitted model, and reads back.

Layer 4 (docs/architecture.md): it imports the layers below (numerics, input/output, the
state, the solvers) and nothing above; the estimators save and load through it. One module per concern:

* :mod:`.container`: :func:`save` and :func:`load`, the members a model holds (format 3) and
  the readers of formats 1 and 2;
* :mod:`.zarrlayout`: the Zarr v3 store those members are kept in, as one file, a directory
  or a URL: its layout, constants and chunk codecs;
* :mod:`.zarrwrite` and :mod:`.zarrformat`: writing it, and reading it (members checked
  before any chunk is decoded);
* :mod:`.storedframes`: its training frames, read on demand, a frame or a group at a time;
* :mod:`.zarrread`: the small reader of that store a decode uses without importing zarr;
* :mod:`.framecodec`: 8-bit training frames as groups of H.264 (lossless, or lossy at a rate
  factor);
* :mod:`.storechoice`: which of the two a fit codes, and what a lossy store cost the frames;
* :mod:`.axes`: the distance solver's linear-PCA axes, prepared at fit and stored with them.
"""

from .container import REQUIRED, SavedFrames, format_version, load, members, save, saved

__all__ = ["REQUIRED", "SavedFrames", "format_version", "load", "members", "save", "saved"]
