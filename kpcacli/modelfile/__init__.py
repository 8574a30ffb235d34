"""The model file: everything kpca writes to disk for a fitted model, and reads back.

Layer 4 (docs/architecture.md): it imports the layers below (numerics, input/output, the
state, the solvers) and nothing above; the estimators save and load through it. One module per
concern:

* :mod:`.container`: :func:`save` and :func:`load`: the state's members written (format 3)
  and read back (formats 1 to 3) into a checked state;
* :mod:`.schema`: the members a model holds, by name, in every format;
* :mod:`.legacy`: format 1 (kpca 0.1's ``.npz``), still read;
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

from .container import SavedModelFrames, format_version, load, members, save, with_saved_frames
from .schema import REQUIRED

__all__ = ["REQUIRED", "SavedModelFrames", "format_version", "load", "members", "save", "with_saved_frames"]
