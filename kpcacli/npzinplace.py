"""Finishing a frame store into an ``.npz`` model file in place, so the frames are written once.

The frame store (:mod:`kpcacli.store`) writes the frames ``RESERVED`` bytes into its file and
keeps their CRC-32 as they stream in. When the model is saved, this module writes a zip local
header and the ``.npy`` header of the ``frames`` member into those reserved bytes (the rest is
a zip "extra field" of padding that readers skip), appends the small members and the central
directory, and the store file is then published under the model's name. A zip member's CRC
covers its ``.npy`` header and the frames; :func:`crc32_combine` joins the CRC of the header,
known only at the end, with the CRC of the frames.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import numpy as np

from .errors import KpcaError

FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # every member's date: identical input, identical bytes
PADDING_ID = 0x6B70  # the extra-field id "pk" of our padding record; zip readers ignore unknown ids


def write_member(archive: zipfile.ZipFile, name: str, array) -> None:
    """Add ``name.npy`` to `archive`, uncompressed, with the fixed timestamp; never pickles."""
    info = zipfile.ZipInfo(f"{name}.npy", date_time=FIXED_TIMESTAMP)
    info.compress_type = zipfile.ZIP_STORED
    with archive.open(info, mode="w", force_zip64=True) as member:
        np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def finish_in_place(out, reserved: int, frames: np.ndarray, frames_crc: int, members: dict) -> None:
    """Turn a file holding `frames` at offset `reserved` into an ``.npz`` archive, in place.

    Parameters
    ----------
    out : binary file opened for reading and writing
        The store file: ``reserved`` bytes of room, then the frames' raw bytes.
    reserved : int
        Where the frames begin.
    frames : (n, d) ndarray
        The frames (only their dtype, shape and size are used).
    frames_crc : int
        CRC-32 of the frames' raw bytes.
    members : dict of str to array
        The other members, written after the frames in this order.
    """
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": np.lib.format.dtype_to_descr(frames.dtype), "fortran_order": False, "shape": frames.shape}
    )
    npy_header = header.getvalue()
    size = len(npy_header) + frames.nbytes
    crc = crc32_combine(zlib.crc32(npy_header), frames_crc, frames.nbytes)
    name = b"frames.npy"
    big = size >= zipfile.ZIP64_LIMIT
    extra = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
    padding = reserved - 30 - len(name) - len(extra) - len(npy_header) - 4
    if padding < 0:
        raise KpcaError("internal error: the reserved header space of the frame store is too small")
    extra += struct.pack("<HH", PADDING_ID, padding) + bytes(padding)
    local = struct.pack(
        "<4sHHHHHIIIHH",
        b"PK\x03\x04",
        45 if big else 20,  # version needed to extract
        0,  # flags
        zipfile.ZIP_STORED,
        0,  # time 00:00:00
        (1980 - 1980) << 9 | 1 << 5 | 1,  # date 1980-01-01, as FIXED_TIMESTAMP
        crc,
        0xFFFFFFFF if big else size,
        0xFFFFFFFF if big else size,
        len(name),
        len(extra),
    )
    out.seek(0)
    out.write(local + name + extra + npy_header)
    if out.tell() != reserved:
        raise KpcaError("internal error: the model header does not end where the frames begin")
    out.seek(reserved + frames.nbytes)
    out.truncate()
    with zipfile.ZipFile(out, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        # The frames member is already in the file: describe it to the central directory.
        info = zipfile.ZipInfo(name.decode(), date_time=FIXED_TIMESTAMP)
        info.compress_type = zipfile.ZIP_STORED
        info.header_offset, info.CRC = 0, crc
        info.file_size = info.compress_size = size
        info.external_attr = 0o644 << 16
        archive.filelist.append(info)
        archive.NameToInfo[info.filename] = info
        for member, array in members.items():
            write_member(archive, member, array)
    out.flush()


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """CRC-32 of ``A + B`` from ``crc32(A)``, ``crc32(B)`` and ``len(B)`` (zlib's algorithm).

    Appending ``len(B)`` zero bytes to ``A``'s CRC is a linear map over GF(2); it is applied
    by repeated squaring of the one-zero-bit operator, one squaring per bit of ``len(B)``.
    """
    if length2 <= 0:
        return crc1

    def times(matrix, vector):
        total, index = 0, 0
        while vector:
            if vector & 1:
                total ^= matrix[index]
            vector >>= 1
            index += 1
        return total

    def square(matrix):
        return [times(matrix, matrix[n]) for n in range(32)]

    operator = [0xEDB88320] + [1 << n for n in range(31)]  # appends one zero bit to a CRC
    for _ in range(3):
        operator = square(operator)  # one zero byte
    while length2:  # append length2 zero bytes to crc1: one squaring per bit of length2
        if length2 & 1:
            crc1 = times(operator, crc1)
        length2 >>= 1
        operator = square(operator)
    return crc1 ^ crc2
