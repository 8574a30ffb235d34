"""Memory budgets: how many bytes each pass holds at once, named for the pass, in one place.

Every large pass works on a part of the data at a time so that a long clip of megapixel
frames runs in bounded memory. The parts differ in purpose, and so in size; the threads each
pass may use are :mod:`kpcacli.utils.parallel`'s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Budgets:
    """Bytes each pass may hold at once. :data:`BUDGETS` is the one instance every module reads
    at the time of the pass (tests shrink a budget to force many parts)."""

    # One float64 block of pixel columns in the Gram pass and its kin (it is copied once and
    # shifted). 4 MiB keeps the block in cache between the conversion, the shift and the GEMM.
    gram_block: int = 4 * 2**20
    # One float64 tile of the store read against a few vectors (encoding a few frames, a frame
    # seen in part): small enough to stay in cache between its conversion and its product.
    tile: int = 2**20
    # Training frames read at a time, as float64 rows, by the mean frame and the finiteness check.
    row_block: int = 4 * 2**20
    # New frames encoded per pass over the training frames, as float64 pixels.
    encode_batch: int = 256 * 2**20
    # Frames completed together from part of them (kpca reconstruct): their float64 working
    # arrays, about ten a frame (the candidates kept beside the rounds).
    reconstruct_batch: int = 256 * 2**20
    # The training frames at one mask's hidden values, gathered once in their own dtype for the
    # rounds of a completion (109 8-bit frames of 1280 x 720 at a quarter hidden: 27 MB).
    hidden_values: int = 256 * 2**20
    # Training frames held at once, in their own dtype, when pre-images are formed (uint8
    # frames: 64 frames of 1280 x 720).
    synthesis_group: int = 64 * 2**20
    # Pre-images formed per pass over the training frames: their float64 sums.
    synthesis_batch: int = 128 * 2**20
    # Frames made ahead of the writer (a video's encoder, a folder's PNGs), in their own dtype:
    # a whole batch of pre-images is formed while the batch before is written, not two frames.
    queued_frames: int = 64 * 2**20
    # On a cluster: decoded frames (float64) one task returns, and the frames' bytes one Gram
    # task gathers (its columns of every chosen frame).
    cluster_decode: int = 256 * 2**20
    cluster_gram_task: int = 256 * 2**20
    # The transport pre-image's displacement fields kept per model (float32, two per pixel):
    # consecutive codes share their pairs of neighbours.
    flow_cache: int = 256 * 2**20
    # Frames a group of a clip's copied packets keeps once decoded, as uint8, for the next
    # frames asked of it (modelfile/sourcestore.py): a lossless store's group of 32 megapixel
    # frames. A clip's groups run to 250 frames; one kept whole held 500 MB of 1080p frames.
    group_frames: int = 64 * 2**20
    # On a GPU (--device cuda): one float64 block of pixel columns of the Gram pass and of
    # encoding, in the device's memory (a GEMM needs wide blocks to run at the device's speed).
    device_block: int = 512 * 2**20
    # On a GPU: the training frames, in their own dtype, held in the device's memory for a pass
    # when they fit here and in half its free memory (kpcacli.utils.arrays.free_device_memory):
    # sent once a block of whole frames (contiguous, no gather on the host), their columns
    # taken there; larger clips are sent a block of pixel columns at a time.
    device_frames: int = 32 * 2**30


BUDGETS = Budgets()


def count_within(budget: int, item_bytes: int) -> int:
    """How many items of `item_bytes` bytes fit in `budget` bytes; at least one."""
    return max(1, int(budget) // max(1, int(item_bytes)))


def release_pages(frames) -> None:
    """Let go of the pages of a memory-mapped store that passes have read (``madvise`` with
    ``MADV_DONTNEED``): they stay in the page cache, and a later read maps them again at the
    cost of a minor fault, but they stop counting in the process's resident memory. The store
    is read-only and file-backed, so nothing is lost, whichever thread reads it meanwhile. An
    array that is not a memory map (or a view of one) is left as it is."""
    import mmap

    advice = getattr(mmap, "MADV_DONTNEED", None)
    while frames is not None and advice is not None:  # a view's bases lead to the mapping
        mapping = frames if isinstance(frames, mmap.mmap) else getattr(frames, "_mmap", None)  # numpy.memmap's own
        if isinstance(mapping, mmap.mmap):
            mapping.madvise(advice)
            return
        frames = getattr(frames, "base", None)


RELEASE_INTERVAL = 0.1  # seconds between two releases of a store's pages (PageRelease)


class PageRelease:
    """The pages of a memory-mapped store released every ``RELEASE_INTERVAL`` seconds on a
    thread of its own (:func:`release_pages`), for as long as the store is open.

    A fit reads its store in many passes (the Gram, the axes, the held-back frames of the
    solver choice, each frame's neighbours), and every page a pass touched stayed mapped: a fit
    of 300 frames of 1920 x 1080 held the 593 MiB of raw frames in its resident memory on top of
    its own arrays (docs/performance.md). Released as it goes, a pass maps at most what it
    reads in a tenth of a second.
    """

    def __init__(self, frames, interval: float = RELEASE_INTERVAL):
        import threading

        self.frames, self.interval = frames, interval
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="kpca-page-release", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.wait(self.interval):
            release_pages(self.frames)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join()
