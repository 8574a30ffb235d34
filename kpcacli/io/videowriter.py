"""Grey frames to a video file that reads back as what was written.

Each container gets the codec that keeps grey frames best while staying playable:

=============  ========================  ========  ==========================================
container      codec                     default   what it gives
=============  ========================  ========  ==========================================
.mp4 .mov      H.264 (libx264), 4:2:0,   CRF 8     visually lossless; ``--crf 0``: lossless
.avi           full range
.webm          VP9 (libvpx), 4:2:0,      CRF 6     visually lossless; ``--crf 0``: lossless
               full range
.mkv           FFV1, grey                lossless  exact
.gif           GIF, 256-grey palette     lossless  exact for 8-bit grey frames; colour frames
                                                   get a palette of 256 colours each (lossy,
                                                   with a warning); the frame rate is rounded
                                                   to GIF's hundredths of a second
=============  ========================  ========  ==========================================

``python benchmarks/performance.py video-output`` measures each (docs/performance.md). Two
choices make the difference against a general-purpose writer such as imageio's PyAV plugin:

* The grey values go straight into the luma plane, chroma at 128, with the stream marked
  full range (0–255): converting grey to RGB and back to video-range YUV (16–235) costs a
  rounding of 256 levels onto 220 before the codec even starts.
* A low constant rate factor by default, with ``--crf`` to trade quality for size (H.264's
  scale is 0–51, VP9's 0–63; higher is smaller and worse).

H.264's 4:2:0 needs even sizes: frames of odd width or height are written in its 4:0:0
(grey) profile instead, which keeps their exact size (ffmpeg-based players play it; some
browsers do not).

Colour frames go to .mp4, .mov, .avi and .webm as 4:2:0 by default, the chroma sampling that
browsers and most players decode, at the cost of half the colour resolution each way;
``chroma="444"`` (``--chroma 444``) keeps every colour sample (H.264's High 4:4:4 profile,
VP9's profile 1), which ffmpeg-based players play. .mkv keeps RGB itself (FFV1, lossless).
Colour frames of odd size are written 4:4:4 whatever is asked, as 4:2:0 needs even sizes.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..utils.checks import frame_size
from ..utils.cores import available_cores
from ..utils.errors import KpcaError, OutputWarning, ParameterError, param
from .ownership import SOFTWARE, mark_gif
from .readers import DEFAULT_FPS

FULL_RANGE = 2  # AVCOL_RANGE_JPEG: luma 0–255


@dataclass(frozen=True)
class VideoFormat:
    """How one container is written."""

    container: str  # FFmpeg's muxer name
    codec: str
    default_crf: int | None  # None: lossless, no --crf
    max_crf: int | None = None
    options: tuple[tuple[str, str], ...] = ()  # the codec's own, beyond the CRF

    def codec_options(self, crf: int | None) -> dict[str, str]:
        options = dict(self.options)
        if self.codec == "libvpx-vp9":
            # VP9's CRF needs a zero target bitrate; its lossless mode is a switch, not CRF 0.
            options.update({"b": "0", "lossless": "1"} if crf == 0 else {"b": "0", "crf": str(crf)})
        elif crf is not None:
            options["crf"] = str(crf)
        return options


# x264 at its veryfast preset with trellis quantisation and without inter 8x8 partitions, not
# its medium default: the same quality for a few more bytes at more than twice the speed, so a
# decode writes .mp4 at video speed; trellis keeps small textured frames (docs/performance.md,
# design measurements).
H264 = {
    "codec": "libx264",
    "default_crf": 8,
    "max_crf": 51,
    "options": (("preset", "veryfast"), ("x264-params", "trellis=1:partitions=i8x8,i4x4")),
}
VIDEO_FORMATS = {
    ".mp4": VideoFormat("mp4", **H264),
    ".mov": VideoFormat("mov", **H264),
    ".avi": VideoFormat("avi", **H264),
    # realtime with row threads: much faster than the default "good" deadline for the same
    # worst-frame PSNR.
    ".webm": VideoFormat(
        "webm",
        "libvpx-vp9",
        6,
        63,
        (("deadline", "realtime"), ("cpu-used", "8"), ("row-mt", "1")),
    ),
    # FFV1 version 3 in 4 slices, encoded on a thread each core: faster than one slice for the
    # same bytes, and a CRC per slice.
    ".mkv": VideoFormat("matroska", "ffv1", None, options=(("level", "3"), ("slices", "4"))),
    # FFmpeg's GIF encoder keeps every frame; Pillow's (and imageio's) merge equal neighbours
    # into one longer frame, so a clip that pauses came back shorter.
    ".gif": VideoFormat("gif", "gif", None),
}
# The GIF palette: index g is the grey g (BGRA), so the frame's values are the indices.
GREY_PALETTE = np.repeat(np.arange(256, dtype=np.uint8)[:, np.newaxis], 4, axis=1)
GREY_PALETTE[:, 3] = 255


@dataclass(frozen=True)
class VideoSettings:
    """How a video output is written (``--fps``, ``--crf``, ``--chroma``), built once at the
    edge as :class:`kpcacli.io.request.FrameRequest` is on the input side; None is the default.

    Attributes
    ----------
    fps : float, optional
        The frame rate asked for (:func:`check_fps`: a video's only).
    crf : int, optional
        The quality of a lossy container (:func:`check_crf`); by default its visually lossless rate.
    chroma : {"420", "444"}, optional
        The chroma sampling of colour frames in a lossy container (:func:`check_chroma`).
    source_fps : float, optional
        The sources' own rate (:meth:`at_rate`), a video's rate when none was asked for; kept
        apart from `fps` because an output that is not a video refuses only a rate asked for.
    """

    fps: float | None = None
    crf: int | None = None
    chroma: str | None = None
    source_fps: float | None = None

    def at_rate(self, fps: float | None) -> VideoSettings:
        """These settings with the sources' rate `fps`, which a video plays at unless a rate
        was asked for."""
        return replace(self, source_fps=fps)

    @property
    def rate(self) -> float:
        """The rate a video is written at: the one asked for, else the sources', else
        ``DEFAULT_FPS``."""
        return next(rate for rate in (self.fps, self.source_fps, DEFAULT_FPS) if rate is not None)


DEFAULT_VIDEO = VideoSettings()  # every setting the output's default
BITEXACT = {"fflags": "+bitexact"}  # the muxer's options for every video kpca writes


def check_fps(suffix: str, fps: float | None) -> None:
    """Refuse a frame rate given for an output of this suffix that is not a video (a PNG, a
    folder of them, rows of numbers), where it would change nothing.

    Raises
    ------
    ParameterError
        When `fps` is given and the suffix is none of ``VIDEO_FORMATS``.
    """
    if fps is not None and suffix.lower() not in VIDEO_FORMATS:
        videos = ", ".join(VIDEO_FORMATS)
        raise ParameterError(f"{param('fps')} applies to videos ({videos}); {suffix or 'this output'} is not a video")


def check_crf(suffix: str, crf: int | None) -> int | None:
    """The CRF a video of this suffix is written at: `crf`, or the container's default.

    Raises
    ------
    ParameterError
        When the container is lossless (``.mkv``, ``.gif``) and a CRF was given, or the CRF
        is outside the codec's range.
    """
    video = VIDEO_FORMATS.get(suffix.lower())
    if crf is None:
        return video.default_crf if video is not None else None
    if video is None or video.max_crf is None:
        what = "is written losslessly" if video is not None else "is not a video"
        raise ParameterError(f"{param('crf')} applies to .mp4, .mov, .avi and .webm; {suffix or 'this output'} {what}")
    if not 0 <= crf <= video.max_crf:
        raise ParameterError(f"{param('crf')} for {suffix} must be in [0, {video.max_crf}]. Got {crf} instead.")
    return crf


def check_chroma(suffix: str, chroma: str | None) -> str | None:
    """The chroma sampling colour frames are written in to a video of this suffix: `chroma`
    (``"420"`` or ``"444"``), ``"420"`` by default for the lossy containers, None for the
    lossless ones (which keep RGB).

    Raises
    ------
    ParameterError
        When `chroma` is given for a container that does not take it, or is neither value.
    """
    video = VIDEO_FORMATS.get(suffix.lower())
    lossy = video is not None and video.max_crf is not None
    if chroma is None:
        return "420" if lossy else None
    if not lossy:
        what = "keeps RGB" if video is not None else "is not a video"
        raise ParameterError(
            f"{param('chroma')} applies to .mp4, .mov, .avi and .webm; {suffix or 'this output'} {what}"
        )
    if chroma not in ("420", "444"):
        raise ParameterError(f"{param('chroma')} must be 420 or 444. Got {chroma!r} instead.")
    return chroma


def encode_video(
    frames: Iterable[np.ndarray],
    path: str | Path,
    settings: VideoSettings,
    suffix: str | None = None,
    name: str | None = None,
) -> int:
    """Write 8-bit grey frames, each (height, width), or RGB ones, (height, width, 3), to `path`
    as the video its `suffix` (default: the path's) calls for, at `settings` (playing at its
    :attr:`VideoSettings.rate`), one frame at a time; return the number written. `name`
    is the file messages name (the target, when `path` is a temporary file that becomes it).

    Raises
    ------
    KpcaError
        When the encoder fails (the message names the codec and the file). An error raised
        by `frames` itself (a decoder, a lost worker) passes through as it is.
    """
    import av  # lazy: loading PyAV costs start-up time

    suffix = (suffix or Path(path).suffix).lower()
    video = VIDEO_FORMATS[suffix]
    crf = check_crf(suffix, settings.crf)
    chroma = check_chroma(suffix, settings.chroma)
    # 29.97 read back from a header is 30000/1001: keep the exact rational rate.
    rate = Fraction(settings.rate).limit_denominator(1001)
    written = 0
    try:
        # bitexact: no FFmpeg version string in the file and no random Matroska UIDs, so the
        # same frames give the same bytes on every run and with any FFmpeg whose encoder gives
        # the same stream (the PyAV builds of the lock for Python 3.11 and for 3.12 differ
        # only in that string).
        with av.open(str(path), "w", format=video.container, container_options=BITEXACT) as container:
            container.metadata["comment"] = SOFTWARE  # the mark that lets a later run replace it
            stream = None
            for frame in frames:
                frame = np.ascontiguousarray(frame, dtype=np.uint8)
                if stream is None:
                    stream, first = _open_stream(container, video, crf, rate, frame.shape, chroma), frame.shape
                elif frame.shape != first:
                    raise KpcaError(
                        f"frame {written} is {frame_size(frame.shape)}, the video's first {frame_size(first)}"
                    )
                picture = _picture(frame, stream.pix_fmt)
                picture.pts = written
                written += 1
                for packet in stream.encode(picture):
                    container.mux(packet)
            if stream is not None:
                for packet in stream.encode():
                    container.mux(packet)
    except av.FFmpegError as error:
        raise KpcaError(
            f"cannot encode video '{name or path}' with {video.codec} ({type(error).__name__}: {error})"
        ) from None
    if video.codec == "gif" and written:
        mark_gif(path)  # FFmpeg's GIF muxer writes no metadata
    return written


def _open_stream(container, video: VideoFormat, crf, rate: Fraction, shape: tuple[int, ...], chroma: str | None):
    height, width = shape[:2]
    colour = len(shape) == 3
    odd = height % 2 or width % 2
    stream = container.add_stream(video.codec, rate=rate, options=video.codec_options(crf))
    stream.width, stream.height = width, height
    if video.codec == "gif":
        stream.pix_fmt = "pal8"
        if colour:  # a palette of 256 colours a frame: not the frames written
            warnings.warn(
                "a GIF holds 256 colours a frame: the colour frames are written with a palette of their own, "
                "not exactly; .mkv (FFV1) or PNGs keep them",
                OutputWarning,
                stacklevel=1,
            )
    elif colour:
        # RGB itself in FFV1; else 4:2:0, which every player decodes (it halves the colour
        # resolution, which a textured clip shows), or 4:4:4 when asked for or when the size is odd.
        if video.codec == "ffv1":
            stream.pix_fmt = "bgr0"
        else:
            stream.pix_fmt = "yuv444p" if chroma == "444" or odd else "yuv420p"
    elif video.codec == "ffv1" or (odd and video.codec == "libx264"):
        stream.pix_fmt = "gray"
    else:
        stream.pix_fmt = "yuv420p"
    stream.codec_context.time_base = 1 / rate
    stream.codec_context.color_range = FULL_RANGE
    stream.codec_context.thread_count = available_cores()
    if video.codec == "ffv1":
        stream.codec_context.thread_type = "SLICE"  # FFV1 threads over slices, not frames
    return stream


def _picture(frame: np.ndarray, pix_fmt: str):
    """A PyAV frame of `pix_fmt` holding `frame`: a grey frame as its luma, chroma (if any) at
    128, marked full range, or as the indices into the grey palette (``pal8``); an RGB frame
    converted by swscale to full-range YUV (BT.601, as the reader converts back), to ``bgr0``,
    or to a palette of its own 256 colours (``pal8``: GIF is lossy for colour)."""
    import av

    if frame.ndim == 3:
        return _colour_picture(frame, pix_fmt)
    height, width = frame.shape
    picture = av.VideoFrame(width, height, pix_fmt)
    _fill_plane(picture.planes[0], frame)
    if pix_fmt == "pal8":
        picture.planes[1].update(GREY_PALETTE.tobytes())
        return picture
    for chroma in picture.planes[1:]:
        chroma.update(np.full(chroma.buffer_size, 128, dtype=np.uint8))
    picture.color_range = FULL_RANGE
    return picture


def _colour_picture(frame: np.ndarray, pix_fmt: str):
    import av
    from av.video.reformatter import Interpolation, VideoReformatter

    if pix_fmt == "pal8":
        from PIL import Image

        quantised = Image.fromarray(frame).quantize(256)
        palette = np.zeros((256, 4), dtype=np.uint8)
        colours = np.asarray(quantised.getpalette()[: 3 * 256], dtype=np.uint8).reshape(-1, 3)
        palette[: len(colours), :3] = colours[:, ::-1]  # BGRA
        palette[:, 3] = 255
        picture = av.VideoFrame(frame.shape[1], frame.shape[0], "pal8")
        _fill_plane(picture.planes[0], np.asarray(quantised))
        picture.planes[1].update(palette.tobytes())
        return picture
    source = av.VideoFrame.from_ndarray(frame, format="rgb24")
    picture = VideoReformatter().reformat(
        source,
        format=pix_fmt,
        dst_color_range=FULL_RANGE,
        interpolation=Interpolation.BILINEAR | Interpolation.ACCURATE_RND,
    )
    picture.color_range = FULL_RANGE
    return picture


def _fill_plane(plane, values: np.ndarray) -> None:
    """Copy 8-bit (height, width) `values` into a PyAV plane, whose rows are padded to its
    line size."""
    height, width = values.shape
    padded = np.zeros((height, plane.line_size), dtype=np.uint8)
    padded[:, :width] = values
    plane.update(padded)
