"""Reading and writing files, layer 1 (docs/architecture.md), beside the numerics and never
imported by them.

* :mod:`.sources`: the frames of every source, in order, counted and chosen (``--frames``);
* :mod:`.readers`: one file's frames (images, videos, ``.npy`` and text), grey or RGB;
* :mod:`.trainingstore`: the temporary memory-mapped store a fit streams its frames into;
* :mod:`.video`: PyAV decoding, with frame tables for seeking and for clips cut short;
* :mod:`.request`: which frames of which sources, and how converted, decided once at the edge;
* :mod:`.provenance`: what a model records of the sources it was fitted on;
* :mod:`.codes`: codes (and point samples) read and written as ``.npy`` or text;
* :mod:`.outputs`: frames written to files, folders, videos or standard output;
* :mod:`.videowriter`: faithful grey and colour video out;
* :mod:`.ownership`: the mark every output carries, and what an output may replace.
"""
