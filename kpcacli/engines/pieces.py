"""The sources cut into loading tasks for a cluster's workers (:class:`~kpcacli.engines.tasks.Piece`):
runs of image files, and ranges of a video's frames that start at keyframes where they can.

A video's ranges come from a demux-only pass on the client (:func:`kpcacli.io.video.frame_table`):
each task seeks to the keyframe before its range and decodes forward by timestamp, so variable
frame rates stay right.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence

import numpy as np

from ..io.readers import Conversion, is_video_file
from ..io.sources import FrameSelection, local_range
from ..io.video import frame_table
from .tasks import Piece

TASKS_PER_THREAD = 4  # pieces per worker thread, so that uneven tasks even out
PIECE_FRAMES = 64  # frames per loading task (a video's ranges grow to its keyframe spacing)


def cut_pieces(files: list[str], wanted: int, conversion: Conversion) -> list[Piece]:
    """About `wanted` pieces (more for long videos: at most :data:`PIECE_FRAMES` frames each)
    that open `files` at their absolute paths, name frames as the user named the sources, and
    convert them as `conversion` says."""
    pieces: list[Piece] = []
    run: list[str] = []
    run_length = max(1, min(PIECE_FRAMES, math.ceil(len(files) / wanted)))
    for path in files:
        if is_video_file(path):
            if run:
                pieces.append(Piece(tuple(run)))
                run = []
            table = frame_table(path)
            parts = max(wanted, math.ceil(len(table) / PIECE_FRAMES))
            for start, stop in table.ranges(parts):
                window, offset = table.window(start, stop)
                pieces.append(Piece((path,), window, offset, offset + stop - start, start))
        else:
            run.append(path)
            if len(run) == run_length:
                pieces.append(Piece(tuple(run)))
                run = []
    if run:
        pieces.append(Piece(tuple(run)))
    return [
        dataclasses.replace(
            piece,
            paths=tuple(os.path.abspath(path) for path in piece.paths),
            labels=piece.paths,
            conversion=conversion,
        )
        for piece in pieces
    ]


def chosen_in_pieces(pieces: list[Piece], counts: Sequence[int], selection: FrameSelection) -> tuple[list[Piece], int]:
    """Of `pieces` (`counts` frames each), the frames `selection` chooses (``--frames``): each
    piece keeps its chosen frames and pieces without one are left out; and the frames in all."""
    total = sum(counts)
    chosen = selection.indices(total)
    offsets = np.cumsum([0, *counts[:-1]])
    kept = [local_range(chosen, int(offset), count) for offset, count in zip(offsets, counts)]
    return [dataclasses.replace(piece, keep=rows) for piece, rows in zip(pieces, kept) if len(rows)], total


def split_rows(chosen: np.ndarray, counts: Sequence[int]) -> list[np.ndarray]:
    """The sorted frame indices `chosen`, split among consecutive pieces of `counts` frames,
    each as indices within its piece."""
    starts = np.cumsum([0, *counts])
    return [chosen[(chosen >= a) & (chosen < b)] - a for a, b in zip(starts, starts[1:])]
