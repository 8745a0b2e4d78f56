"""Just enough PNG decoding (8-bit RGB/RGBA, not interlaced, as Chromium writes screenshots) to
count pixels of a colour in a screenshot."""

from __future__ import annotations

import struct
import zlib
from collections import Counter


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def _unfilter(kind: int, line: bytearray, previous: bytearray, size: int) -> None:
    if kind == 2:  # up: the common case, done without the per-byte branches
        line[:] = bytes((a + b) & 0xFF for a, b in zip(line, previous))
    elif kind:
        for i in range(len(line)):
            left = line[i - size] if i >= size else 0
            up, corner = previous[i], previous[i - size] if i >= size else 0
            line[i] = (line[i] + (0, left, up, (left + up) // 2, _paeth(left, up, corner))[kind]) & 0xFF


def colours(data: bytes) -> Counter:
    """How many pixels of each (r, g, b)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    offset, chunks, header = 8, [], None
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
        offset += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    assert depth == 8 and colour_type in (2, 6) and not interlace
    size = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * size
    previous, counts = bytearray(stride), Counter()
    for row in range(height):
        kind = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        _unfilter(kind, line, previous, size)
        counts.update(zip(line[0::size], line[1::size], line[2::size]))
        previous = line
    return counts
