"""Image files' own bytes, as a model's frame store (``frame_store`` ``files``).

A folder of JPEG frames is a lossy clip too: its files are many times smaller than the frames
coded losslessly, and decoding them again gives the frames (Pillow's decoder; each frame's
digest guards against another version decoding otherwise). So a model fitted on image files,
one frame a file, can keep the files' bytes as they are; :mod:`kpcacli.modelfile.storechoice`
keeps them where they are smaller than the lossless store (PNG frames seldom are: x264's
lossless mode predicts each frame from the one before, PNG does not).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from .readers import Conversion

NOT_ONE_FRAME_A_FILE = "an image file holds several frames (a multi-frame TIFF or GIF)"


@dataclass
class FileCopy:
    """The image files whose frames a model keeps, one frame a file.

    Attributes
    ----------
    paths : list of str
        The kept frames' files, in row order.
    indices : list of int
        The kept frames' numbers among the sources' frames.
    colour : bool
        Frames are RGB (else grey, Pillow's ``L``).
    size : (width, height) or None
        Frames resized to it (Pillow's Lanczos), as ``--resize`` asked.
    decoded : bool
        Whether the training frames were decoded from these bytes (never: the reader opens
        the files; the store checks a sample before it keeps them).
    """

    paths: list[str]
    indices: list[int]
    colour: bool = False
    size: tuple[int, int] | None = None
    decoded: bool = False

    @property
    def nbytes(self) -> int:
        return sum(Path(path).stat().st_size for path in self.paths)

    @property
    def copied_frames(self) -> int:
        return len(self.paths)

    def data(self) -> list[bytes]:
        """Each file's bytes, in row order."""
        return [Path(path).read_bytes() for path in self.paths]

    def keeping(self, indices) -> FileCopy:
        """The files of only the frames numbered `indices` (a subset of :attr:`indices`)."""
        wanted = set(int(i) for i in indices)
        rows = [row for row, index in enumerate(self.indices) if index in wanted]
        paths, indices = [self.paths[row] for row in rows], [self.indices[row] for row in rows]
        return FileCopy(paths, indices, self.colour, self.size)


def decode_file(data: bytes, colour: bool, size: tuple[int, int] | None = None) -> np.ndarray:
    """One image file's frame as the readers give it (:class:`kpcacli.io.readers.Conversion`:
    grey as Pillow's ``L``, or RGB; resized to `size`), from its bytes.

    Raises
    ------
    ValueError
        When the bytes are not an image Pillow reads.
    """
    try:
        with Image.open(io.BytesIO(data)) as image:
            return Conversion(size, colour).image(image)
    except (UnidentifiedImageError, OSError, SyntaxError) as error:
        raise ValueError(f"not an image Pillow reads ({error})") from None


def file_copy(files: list[str], selection, conversion: Conversion) -> FileCopy | str:
    """The image files holding the frames of `files` (image files, each named by its
    extension) that `selection` chooses (a :class:`kpcacli.io.sources.FrameSelection`; all when
    None), or why they cannot be a store: a file Pillow does not read, or one of several
    frames."""
    for path in files:
        try:
            with Image.open(path) as image:
                if getattr(image, "n_frames", 1) != 1:
                    return NOT_ONE_FRAME_A_FILE
        except (UnidentifiedImageError, OSError):
            return "a source is not an image Pillow reads"
    chosen = range(len(files)) if selection is None else selection.indices(len(files))  # a frame a file
    return FileCopy([files[index] for index in chosen], list(chosen), conversion.colour, conversion.size)
