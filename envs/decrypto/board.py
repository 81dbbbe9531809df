"""Decrypto's numeric observation: where each part of the vector lies (:class:`Layout`), the
vector with nothing hidden written part by part as the game moves (:class:`Board`), and what
each seat is shown of it (:func:`seat_views`).

The parts, in order (``T = max_turns``; the value table is in :mod:`socialsim.envs.decrypto_v0`'s
docstring): ``turn``, ``decision``, ``tokens`` (miscommunications, interceptions),
``keywords``, ``code``, ``hints`` (this turn's), ``hint_history`` (keyword ``k``'s ``s``-th hint
at ``k * T + s``), ``codes_played`` (turn ``t``'s digits at ``3t``), ``guesses`` (turn ``t``'s
decoder's and interceptor's at ``2t``). A seat's observation is the board read through its view:
an index array that shows each slot's own cell, or one of the constants after the vector (the
decision's code, a hidden keyword's ``N``, a hidden code digit's 0), so one numpy take builds it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np
from socialsim.envs.decrypto.protocol import CODE_INDEX, CODES, GUESS, HINTS, SEATS, TOKENS_TO_LOSE
from socialsim.envs.decrypto.words import Lexicon

if TYPE_CHECKING:
    from socialsim.envs.decrypto.core import DecryptoGame, TurnResult

#: the decision's code at slot ``decision``: none, hints, guess
DECISION_CODE = {None: 0, HINTS: 1, GUESS: 2}


class Layout:
    """Where each part of the observation vector lies in games of ``max_turns`` turns: a
    ``slice`` per part, named as in the module docstring, computed once."""

    def __init__(self, max_turns: int):
        T = max_turns
        sizes = (
            ("turn", 1),
            ("decision", 1),
            ("tokens", 2),
            ("keywords", 4),
            ("code", 3),
            ("hints", 3),
            ("hint_history", 4 * T),
            ("codes_played", 3 * T),
            ("guesses", 2 * T),
        )
        self.max_turns = T
        self.parts: dict[str, slice] = {}
        start = 0
        for name, size in sizes:
            self.parts[name] = slice(start, start + size)
            start += size
        self.size = start
        part = self.parts
        self.turn, self.decision, self.tokens = part["turn"], part["decision"], part["tokens"]
        self.keywords, self.code, self.hints = part["keywords"], part["code"], part["hints"]
        self.hint_history = part["hint_history"]
        self.codes_played, self.guesses = part["codes_played"], part["guesses"]

    def high(self, n_words: int, n_hints: int) -> np.ndarray:
        """The largest value of each slot (``n_words`` keywords, ``n_hints`` vocabulary words)."""
        high = np.zeros(self.size, dtype=np.int64)
        high[self.turn] = self.max_turns
        high[self.decision] = max(DECISION_CODE.values())
        high[self.tokens] = TOKENS_TO_LOSE
        high[self.keywords] = n_words
        high[self.code] = high[self.codes_played] = 4
        high[self.hints] = high[self.hint_history] = n_hints + 1
        high[self.guesses] = len(CODES)
        return high


@functools.cache
def layout(max_turns: int) -> Layout:
    """The layout of games of ``max_turns`` turns, shared by the envs that play them."""
    return Layout(max_turns)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@functools.cache
def seat_views(max_turns: int) -> dict[tuple[str | None, str | None], np.ndarray]:
    """The board cell each slot shows, by seat and decision (seat ``None``: the global state,
    the decision then the phase), in games of ``max_turns`` turns; shared and read-only. The
    cells after the vector hold 0, 1, 2 and N (see :class:`Board`)."""
    parts = layout(max_turns)
    size = parts.size
    views = {}
    for seat in (*SEATS, None):
        for decision, code in DECISION_CODE.items():
            view = np.arange(size)
            view[parts.decision] = size + code
            if seat == "interceptor":
                view[parts.keywords] = size + 3  # hidden: N
            if seat is not None and (seat != "encoder" or decision != HINTS):
                view[parts.code] = size  # hidden: 0
            views[seat, decision] = _read_only(view)
    return views


class Board:
    """The observation vector with nothing hidden, written part by part where the game moves
    (:meth:`start`, :meth:`hint`, :meth:`reveal`), and read through a seat's view
    (:meth:`show`).

    Each part is a ``memoryview`` of the vector under its layout name: a game's moves write it
    one Python int at a time (numpy's item and slice assignments convert each value, at several
    times the cost)."""

    def __init__(self, max_turns: int, lexicon: Lexicon):
        self.layout = parts = layout(max_turns)
        n_words, n_hints = len(lexicon.words), len(lexicon.hint_vocabulary)
        self._word_index, self._n_words = lexicon.word_index, n_words
        #: a hint's place: its vocabulary index, V for a word outside it, V + 1 for none yet
        self._vocab_index, self._outside, self._no_hint = lexicon.vocab_index, n_hints, n_hints + 1
        size = parts.size
        # the vector, then the values a hidden slot shows instead of its own: 0, 1, 2 and N
        self.values = np.zeros(size + 4, dtype=np.int64)
        self.values[size:] = (0, 1, 2, n_words)
        #: before the first hint: no hint (V + 1), no code played (0), no guess (24)
        self._empty = self.values.copy()
        self._empty[parts.hints] = self._empty[parts.hint_history] = self._no_hint
        self._empty[parts.guesses] = len(CODES)
        self._bind()
        self._views = seat_views(max_turns)

    #: the parts of :attr:`values` written through memoryviews, made by :meth:`_bind`
    _CELLS = (
        "turn",
        "tokens",
        "keywords",
        "code",
        "hints",
        "hint_history",
        "codes_played",
        "guesses",
    )

    def _bind(self) -> None:
        """Make each part's memoryview of :attr:`values` (again, after a copy or unpickling)."""
        cells, parts = memoryview(self.values), self.layout
        for name in self._CELLS:
            setattr(self, name, cells[getattr(parts, name)])

    def __getstate__(self) -> dict:
        # a memoryview cannot be pickled or copied: a copy binds its own to its own values
        return {k: v for k, v in self.__dict__.items() if k not in self._CELLS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind()

    def show(self, seat: str | None, decision: str | None) -> np.ndarray:
        """What ``seat`` sees while it has ``decision`` (``None``: the global state in
        ``decision``'s phase), a new array."""
        return self.values[self._views[seat, decision]]

    def start(self, game: DecryptoGame) -> None:
        """A new game: its turn, keywords and first code; no hint, code played or guess yet."""
        self.values[:] = self._empty
        self.turn[0] = game.turn
        keywords, index, hidden = self.keywords, self._word_index, self._n_words
        for slot, keyword in enumerate(game.keywords):
            keywords[slot] = index.get(keyword, hidden)
        code = self.code
        code[0], code[1], code[2] = game.code

    def hint(self, words: list[str]) -> None:
        """This turn's hints, shown as their hint-vocabulary indices (V: outside it)."""
        index, outside = self._vocab_index, self._outside
        hints = self.hints
        hints[0], hints[1], hints[2] = [index.get(word.casefold(), outside) for word in words]

    def reveal(self, game: DecryptoGame, result: TurnResult) -> None:
        """The turn of ``result`` is over: its hints join their keywords' histories, its code
        and guesses are played, and the next turn's counters and code (0s once over) show."""
        T, turn = self.layout.max_turns, result.turn - 1
        history, hints, by_keyword = self.hint_history, self.hints, game.hint_history
        for hint, digit in zip(hints, result.code, strict=True):  # the game has added them
            history[(digit - 1) * T + len(by_keyword[digit - 1]) - 1] = hint
        played, guesses = self.codes_played, self.guesses
        played[3 * turn], played[3 * turn + 1], played[3 * turn + 2] = result.code
        interceptor = result.interceptor_guess
        guesses[2 * turn] = CODE_INDEX[result.decoder_guess]
        guesses[2 * turn + 1] = len(CODES) if interceptor is None else CODE_INDEX[interceptor]
        hints[0] = hints[1] = hints[2] = self._no_hint
        self.turn[0] = game.turn
        self.tokens[0], self.tokens[1] = game.miscommunications, game.interceptions
        code = self.code
        code[0], code[1], code[2] = (0, 0, 0) if game.code is None else game.code
