"""Suffix arrays of token-id arrays, sorted by libdivsufsort (C) through ctypes.

The library is the one the `pydivsufsort` wheel ships (its `libdivsufsort.*` file). Its Python part,
which needs numpy, is never imported: the engine runs wherever that one file is, which is what lets the
VS Code extension bundle it without numpy (about 17 MB a wheel, one per Python version).

libdivsufsort sorts bytes. Token ids are written big-endian in the fewest bytes that hold the largest
(1, 2 or 4), so byte order is id order, and the suffixes that start on a token boundary, in the order
the library returns them, are the suffix array of the ids.
"""

from __future__ import annotations

import ctypes
import importlib.util
import sys
from array import array
from functools import lru_cache
from itertools import compress
from pathlib import Path


class SuffixSortUnavailable(ImportError):
    """libdivsufsort cannot be found or loaded."""


@lru_cache(maxsize=1)
def _library() -> ctypes.CDLL:
    spec = importlib.util.find_spec("pydivsufsort")  # finds the package without importing it (numpy)
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    names = ("libdivsufsort.*", "divsufsort.dll")
    found = [path for place in places for name in names for path in sorted(Path(place).glob(name))]
    if not found:
        raise SuffixSortUnavailable("the embedded engine needs libdivsufsort, from the pydivsufsort package "
                                    f"(pip install pydivsufsort); looked in {places or 'no pydivsufsort'}")
    try:
        lib = ctypes.CDLL(str(found[0]))
    except OSError as exc:
        raise SuffixSortUnavailable(f"libdivsufsort ({found[0]}) does not load: {exc}") from exc
    lib.divsufsort.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int32), ctypes.c_int32]
    lib.divsufsort.restype = ctypes.c_int32
    return lib


def suffix_array(ids: array) -> array:
    """The suffix array (`array('i')`) of non-negative token ids."""
    if not ids:
        return array("i")
    top = max(ids)
    width = 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4
    data = array({1: "B", 2: "H", 4: "I"}[width], ids)
    if width > 1 and sys.byteorder == "little":
        data.byteswap()
    raw = data.tobytes()
    if len(raw) >= 1 << 31:
        raise ValueError(f"{len(ids)} tokens are too many for one suffix array: use more shards")
    out = array("i", bytes(4 * len(raw)))
    status = _library().divsufsort(raw, ctypes.cast(out.buffer_info()[0], ctypes.POINTER(ctypes.c_int32)),
                                   len(raw))
    if status:
        raise RuntimeError(f"libdivsufsort failed ({status})")
    if width == 1:
        return out
    return _on_boundaries(out, width)


def _on_boundaries(offsets: array, width: int) -> array:
    """The byte offsets that are multiples of `width` (a power of two), in order, divided by it — at C
    speed: a mask from each offset's low byte, then one shift of the whole buffer as a big integer (every
    kept offset is a non-negative multiple of `width`, so no bit crosses from one into another wrongly)."""
    low = offsets.tobytes()[:: offsets.itemsize] if sys.byteorder == "little" else \
        offsets.tobytes()[offsets.itemsize - 1 :: offsets.itemsize]
    kept = array("i", compress(offsets, low.translate(_BOUNDARY[width])))
    shift = width.bit_length() - 1
    order = sys.byteorder
    shifted = int.from_bytes(kept.tobytes(), order) >> shift
    out = array("i")
    out.frombytes(shifted.to_bytes(len(kept) * kept.itemsize, order))
    return out


_BOUNDARY = {w: bytes(1 if b % w == 0 else 0 for b in range(256)) for w in (2, 4)}
