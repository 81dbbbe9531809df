"""Word lists for Decrypto: the keyword list and the hint vocabulary of the RL action space.

Both are plain text files, one word per line (blank lines and lines starting with ``#`` are
skipped, surrounding whitespace is stripped). The bundled files live in ``data/``:

* ``keywords.txt`` — 680 distinct lowercase common English nouns, written for this project
  (see ``data/README.md``). 680 is the size of the reference implementation's list, so that a
  seed draws the same code sequence as the reference (codes depend only on the list length).
* ``rl_hints.txt`` — a few hundred common words, disjoint from ``keywords.txt``, that index the
  encoder's ``MultiDiscrete`` action space (so that a sampled hint is never a bundled keyword).

Any other list can be loaded by path (``wordlist=`` and ``hint_vocabulary=`` of the env).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"
KEYWORDS_PATH = DATA / "keywords.txt"
RL_HINTS_PATH = DATA / "rl_hints.txt"


def load_words(
    path: str | os.PathLike, *, minimum: int = 1, what: str = "wordlist"
) -> tuple[str, ...]:
    """The words of the file at ``path``, in file order.

    Raises ``ValueError`` naming ``what`` if the file is missing, holds a duplicate word or
    fewer than ``minimum`` words.
    """
    return _load(str(Path(path).expanduser().resolve()), minimum, what)


@cache
def _load(path: str, minimum: int, what: str) -> tuple[str, ...]:
    if not os.path.isfile(path):
        raise ValueError(
            f"{what}: no file at {path!r}; give the path of a text file with one word per line"
        )
    with open(path, encoding="utf-8") as f:
        words = [line.strip() for line in f]
    words = [w for w in words if w and not w.startswith("#")]
    seen: set[str] = set()
    for word in words:
        if word in seen:
            raise ValueError(f"{what}: {path!r} lists {word!r} twice; words must be distinct")
        seen.add(word)
    if len(words) < minimum:
        raise ValueError(f"{what}: {path!r} has {len(words)} words; at least {minimum} are needed")
    return tuple(words)


def keyword_list(path: str | os.PathLike | None = None) -> tuple[str, ...]:
    """The keyword list at ``path``, or the bundled 680-word list."""
    return load_words(KEYWORDS_PATH if path is None else path, minimum=4, what="wordlist")


def hint_vocabulary(path: str | os.PathLike | None = None) -> tuple[str, ...]:
    """The hint vocabulary at ``path``, or the bundled ``rl_hints.txt``."""
    return load_words(RL_HINTS_PATH if path is None else path, minimum=1, what="hint_vocabulary")


@dataclass(frozen=True)
class Lexicon:
    """The two lists of an env and the tables it derives from them and from the hint limits,
    built once per process for every env with the same settings (read them, never change
    them: the arrays are read-only)."""

    words: tuple[str, ...]  # the keyword list
    hint_vocabulary: tuple[str, ...]  # the RL encoder's hint words, by action index
    vocab_index: dict[str, int]  # a hint's casefolded spelling -> its vocabulary index
    spellings: dict[str, list[int]]  # every vocabulary index of a casefolded word
    word_index: dict[str, int]  # a keyword -> its index in ``words``
    hint_fits: np.ndarray  # int8 per vocabulary word: whether the hint limits allow it


def lexicon(
    wordlist: str | os.PathLike | None,
    hint_vocabulary_path: str | os.PathLike | None,
    max_hint_words: int,
    max_hint_chars: int,
) -> Lexicon:
    """The :class:`Lexicon` of these settings (the bundled lists for ``None``)."""
    return _lexicon(_where(wordlist), _where(hint_vocabulary_path), max_hint_words, max_hint_chars)


def _where(path: str | os.PathLike | None) -> str | None:
    return None if path is None else str(Path(path).expanduser().resolve())


@cache
def _lexicon(
    wordlist: str | None, vocabulary_path: str | None, max_hint_words: int, max_hint_chars: int
) -> Lexicon:
    words = keyword_list(wordlist)
    vocabulary = hint_vocabulary(vocabulary_path)
    spellings: dict[str, list[int]] = {}
    for i, word in enumerate(vocabulary):
        spellings.setdefault(word.casefold(), []).append(i)
    fits = np.array(
        [len(w.split()) <= max_hint_words and len(w) <= max_hint_chars for w in vocabulary],
        dtype=np.int8,
    )
    fits.flags.writeable = False
    return Lexicon(
        words=words,
        hint_vocabulary=vocabulary,
        vocab_index={w.casefold(): i for i, w in enumerate(vocabulary)},
        spellings=spellings,
        word_index={w: i for i, w in enumerate(words)},
        hint_fits=fits,
    )
