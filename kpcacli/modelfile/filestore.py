"""The frame store that keeps image files' own bytes (``frame_store`` codec ``files``).

A model fitted on image files, one frame a file (:mod:`kpcacli.io.filecopy`), may keep the
files as they are: format 3's ``stream`` holds them end to end and ``groups`` has a row a file
(a group of one frame), so a frame is read by decoding its file alone. The attribute
``frame_store`` says whether frames are RGB (``colour``); ``frame_digests`` (each frame's
SHA-256) guards every decode, as in every coded store. The fit keeps it only where the files
are smaller than the lossless store (JPEG frames; PNG frames seldom are).
"""

from __future__ import annotations

import json

import numpy as np

from ..io.filecopy import FileCopy, decode_file
from ..io.trainingstore import same_digests
from ..utils.errors import ModelFileError
from .framecodec import EncodedFrames, FrameCodec, FrameCodecError, codable

SAMPLED_FILES = 2  # files a fit decodes from their bytes again, to compare with the frames read


class CopiedFiles(EncodedFrames):
    """Image files as the model file writes them: each file a group of one frame."""

    def __init__(self, copy: FileCopy, frame_shape: tuple[int, ...], description: dict):
        streams = copy.data()
        super().__init__(FrameCodec(0), streams, [1] * len(streams), tuple(frame_shape), description)
        self.colour, self.size = copy.colour, copy.size

    def decode_group(self, number: int) -> np.ndarray:
        return decode_file(self.streams[number], self.colour, self.size).reshape(1, -1)


def copied_files(copy: FileCopy, frame_shape: tuple[int, ...], description: dict) -> CopiedFiles:
    """`copy` as the model stores it, under `description` (the store's own words)."""
    size = None if copy.size is None else list(copy.size)
    return CopiedFiles(copy, frame_shape, {"codec": "files", "colour": copy.colour, "resize": size, **description})


def files_decode_alike(copy: FileCopy, digests: list[bytes]) -> bool:
    """Whether the first ``SAMPLED_FILES`` files, decoded from their bytes as a model decodes
    them, give the frames whose SHA-256 are the first of `digests`."""
    sample = copy.keeping(copy.indices[:SAMPLED_FILES])  # their files alone read
    try:
        decoded = [decode_file(data, copy.colour, copy.size) for data in sample.data()]
    except ValueError:
        return False
    return same_digests(decoded, digests)


class FileDecoder:
    """One stored file, decoded when its frame is asked for (the interface of
    :class:`kpcacli.modelfile.framecodec.GroupDecoder`)."""

    def __init__(self, data: bytes, colour: bool, size, frame_shape: tuple[int, ...]):
        self.data, self.colour, self.size, self.frame_shape = data, colour, size, tuple(frame_shape)
        self.values: np.ndarray | None = None
        self.count = 1

    def frame(self, index: int) -> np.ndarray:
        if self.values is None:
            try:
                values = decode_file(self.data, self.colour, self.size)
            except ValueError as error:
                raise FrameCodecError(str(error)) from None
            if values.shape != self.frame_shape:
                raise FrameCodecError(f"the file holds a frame of {values.shape}, not {self.frame_shape}")
            self.values = values.ravel()
        return self.values

    def every_frame(self) -> np.ndarray:
        return self.frame(0)[np.newaxis]


def check_files_description(
    description: dict, shape: list, table: np.ndarray, name: str = "frame_store"
) -> tuple[bool, tuple[int, int] | None]:
    """Whether a ``files`` store's frames are RGB, and the size they are resized to, its
    description and table checked (a file a group)."""
    colour = description.get("colour")
    if not isinstance(colour, bool):
        raise ModelFileError(f"{name} must say whether frames are RGB (colour). Got {json.dumps(description)[:80]}")
    if not codable(tuple(shape), np.uint8) or colour != (len(shape) == 3):
        raise ModelFileError(f"a files store holds grey or RGB frames as its colour says; frame_shape is {shape}")
    if not np.all(table[:, 1] == 1):
        raise ModelFileError("groups of a files store must hold one frame each")
    return colour, check_resize(description.get("resize"), shape, name)


def check_resize(size, shape: list, name: str = "frame_store") -> tuple[int, int] | None:
    """A store's recorded ``resize``: None, or the (width, height) of `shape`."""
    if size is None:
        return None
    if not (isinstance(size, list) and len(size) == 2 and size == [shape[1], shape[0]]):
        raise ModelFileError(f"{name} resize must be the frames' [width, height]. Got {json.dumps(size)[:40]} instead.")
    return int(size[0]), int(size[1])
