"""The in-place zip trick on its own: the CRC arithmetic and the archive it finishes."""

from __future__ import annotations

import io
import zipfile
import zlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kpcacli.npzinplace import crc32_combine, finish_in_place


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=5000))
def test_crc32_combine_equals_the_crc_of_the_concatenation(first, second):
    assert crc32_combine(zlib.crc32(first), zlib.crc32(second), len(second)) == zlib.crc32(first + second)


def test_crc32_combine_of_a_long_tail():
    """Lengths with many bits set exercise every squaring of the zero-byte operator."""
    tail = bytes(range(256)) * 4099  # 1,049,344 bytes
    assert crc32_combine(zlib.crc32(b"npy header"), zlib.crc32(tail), len(tail)) == zlib.crc32(b"npy header" + tail)


def test_finishing_a_store_in_place_gives_a_valid_npz():
    reserved = 4096
    frames = np.arange(6 * 10, dtype=np.uint8).reshape(6, 10)
    out = io.BytesIO(bytes(reserved) + frames.tobytes())
    finish_in_place(out, reserved, frames, zlib.crc32(frames.tobytes()), {"k": np.int64(3), "v": np.ones(2)})
    out.seek(0)
    with zipfile.ZipFile(out) as archive:
        assert archive.testzip() is None  # every CRC checks
        assert [info.filename for info in archive.infolist()] == ["frames.npy", "k.npy", "v.npy"]
    out.seek(0)
    with np.load(out, allow_pickle=False) as archive:
        np.testing.assert_array_equal(archive["frames"], frames)
        assert int(archive["k"]) == 3
    assert out.getvalue()[reserved:].startswith(frames.tobytes())  # the frames never moved
