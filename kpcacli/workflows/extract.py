"""``kpca extract``: the frames encode would see, written as images or a video."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..io.outputs import write_frames
from ..io.readers import Frame
from ..io.request import FrameRequest
from ..io.videowriter import DEFAULT_VIDEO, VideoSettings
from ..utils.errors import InputError
from ..utils.progress import progress_bar
from .running import at_source_rate


def extract_frames(
    request: FrameRequest, output, *, video: VideoSettings = DEFAULT_VIDEO, progress: bool = False
) -> int:
    """``kpca extract``: write exactly the frames ``kpca encode`` would see (same request) to
    `output`: one PNG, a folder (the frames keep their names: :func:`kpcacli.io.outputs.png_name`)
    or a video at `video` (by default at the first video source's frame rate, else 25), with a
    progress bar counting the frames written when `progress`. Returns how many were written."""
    frames = request.frames()
    if request.reads_stdin:  # no header to count standard input's frames from
        frames = list(frames)
        count = len(frames)
    else:
        count = request.count()
    # write_frames checks the target against `count` before it reads the first frame.
    with progress_bar(progress, desc="extracting", total=count, unit="frame") as bar:
        write_frames(_images(frames, bar), output, count=count, video=at_source_rate(video, request=request))
    return count


def _images(frames: Iterable[Frame], bar) -> Iterator[Frame]:
    for frame in frames:
        if frame.pixels.ndim == 1:
            raise InputError(f"'{frame.name}' is a point, not an image: extract writes frames")
        yield frame
        bar.update()
