"""A frame request: which frames a command reads, and how they become arrays.

Built once at the edge (the click layer, or a Python caller) from the sources, ``--frames``,
``--resize``, ``--colour`` and standard input, and passed down whole: every workflow and both
engines (:mod:`kpcacli.engines.engine`) read frames through it, so none re-assembles them from loose
arguments.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .filecopy import FileCopy, file_copy
from .packets import NOT_ONE_VIDEO, SourceCopy, source_copy
from .provenance import Provenance
from .readers import Conversion, Frame, is_image_file
from .sources import (
    FrameSelection,
    count_frames,
    estimate_frames,
    expand_sources,
    iter_frames,
    source_frame_rate,
    source_provenance,
)


@dataclass(frozen=True)
class FrameRequest:
    """The frames of `sources` that `selection` chooses (all when None), converted by
    `conversion` (grey or RGB, resized or not); ``-`` among the sources reads `stdin`
    (default: the process's standard input).

    Examples
    --------
    >>> request = FrameRequest.of(["clip.mp4"], selection="::2", resize=(320, 180))
    >>> request.selection.text, request.conversion.size
    ('::2', (320, 180))
    """

    sources: tuple[str, ...]
    selection: FrameSelection | None = None
    conversion: Conversion = Conversion()
    stdin: BinaryIO | None = None

    @classmethod
    def of(
        cls,
        sources: Iterable[str] | str,
        *,
        selection: FrameSelection | str | None = None,
        resize: tuple[int, int] | None = None,
        colour: bool = False,
        stdin: BinaryIO | None = None,
    ) -> FrameRequest:
        """A request from the values a caller holds: `selection` as ``--frames`` text or
        parsed, `resize` as (width, height)."""
        sources = (sources,) if isinstance(sources, str) else tuple(str(source) for source in sources)
        if isinstance(selection, str):
            selection = FrameSelection.parse(selection)
        return cls(sources, selection, Conversion(resize, bool(colour)), stdin)

    @property
    def resize(self) -> tuple[int, int] | None:
        return self.conversion.size

    @property
    def colour(self) -> bool:
        return self.conversion.colour

    def in_colour(self, colour: bool) -> FrameRequest:
        """The same frames, RGB when `colour` (as a colour model reads them), else grey."""
        return dataclasses.replace(self, conversion=Conversion(self.conversion.size, colour))

    def files(self) -> list[str]:
        """The sources as files, folders and globs expanded (:func:`kpcacli.io.sources.expand_sources`)."""
        return expand_sources(self.sources)

    @property
    def reads_stdin(self) -> bool:
        return "-" in self.files()

    def frames(self) -> Iterator[Frame]:
        """The chosen frames, in order (:func:`kpcacli.io.sources.iter_frames`)."""
        return iter_frames(
            self.sources,
            resize=self.conversion.size,
            stdin=self.stdin,
            selection=self.selection,
            colour=self.conversion.colour,
        )

    def count(self) -> int:
        """How many frames :meth:`frames` yields, from headers where a format has one."""
        return count_frames(self.sources, self.selection)

    def estimate(self) -> int | None:
        """How many frames :meth:`frames` will yield, cheaply, for progress bars (None when
        unknown)."""
        return estimate_frames(self.sources, self.selection)

    def frame_rate(self) -> float | None:
        """The first video source's frame rate (None without one)."""
        return source_frame_rate(self.sources)

    def provenance(self, indices: Iterable[int], loaded: int, total: int | None = None) -> Provenance:
        """What a model fitted on the frames numbered `indices`, of the `loaded` frames this
        request chose, records of them (:func:`kpcacli.io.sources.source_provenance`)."""
        return source_provenance(self.sources, indices, self.selection, loaded, total=total)

    def source_copy(self) -> SourceCopy | FileCopy | str:
        """The chosen frames as their source holds them: the coded packets of their groups,
        copied from the one video this request reads (:func:`kpcacli.io.packets.source_copy`),
        or the image files that hold them (:func:`kpcacli.io.filecopy.file_copy`); or why
        there is no such copy."""
        files = self.files()
        if "-" in files:
            return "the frames come from standard input"
        if all(is_image_file(path) for path in files):
            return file_copy(files, self.selection, self.conversion)
        if len(files) != 1:
            return NOT_ONE_VIDEO
        chosen = None if self.selection is None else self.selection.indices(count_frames(files))
        return source_copy(files, chosen, self.conversion)
