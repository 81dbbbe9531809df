"""What Decrypto shows: which board cell each slot of a seat's observation reads, by seat and
decision, each seat's decision by phase, and the public state as text (``render()``). Tables
made once and shared, read-only, by every :class:`~socialsim.envs.decrypto.env.DecryptoEnv`."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
from socialsim.envs.decrypto.protocol import GUESS, HINTS, SEATS, TOKENS_TO_LOSE

if TYPE_CHECKING:
    from socialsim.envs.decrypto.env import DecryptoEnv

DECISION_CODE = {None: 0, HINTS: 1, GUESS: 2}


class FrozenMapping(Mapping):
    """A read-only mapping that copies, deep-copies and pickles as the dict it holds would: what
    an info hands every seat (a ``MappingProxyType`` is read-only too, but RL libraries
    deep-copy infos, and it cannot be copied)."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping) -> None:
        self._data = dict(data)

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._data!r})"

    def __reduce__(self):
        return type(self), (self._data,)


def read_only(array: np.ndarray) -> np.ndarray:
    """``array``, made read-only: an encoder's mask, which its observations share."""
    array.flags.writeable = False
    return array


#: each seat's decision, by phase (None: the game is over) and whether the interceptor guesses
#: this turn; the tables are shared, read-only
DECISIONS: dict[tuple[str | None, bool], Mapping[str, str | None]] = {
    (phase, interceptor_guesses): MappingProxyType(
        {
            "encoder": HINTS if phase == HINTS else None,
            "decoder": GUESS if phase == GUESS else None,
            "interceptor": GUESS if phase == GUESS and interceptor_guesses else None,
        }
    )
    for phase in DECISION_CODE
    for interceptor_guesses in (True, False)
}


def seat_view(seat: str | None, decision: str | None, size: int) -> np.ndarray:
    """The board cell each of the ``size`` slots of ``seat``'s observation shows while it has
    ``decision`` (``seat`` None: the global state, ``decision`` the phase): its own cell but for
    slot 1, the decision's code, and the slots hidden from the seat (see ``DecryptoEnv._board``)."""
    view = np.arange(size)
    view[1] = size + DECISION_CODE[decision]
    if seat == "interceptor":
        view[4:8] = size + 3  # the keywords, hidden: N
    if seat is not None and (seat != "encoder" or decision != HINTS):
        view[8:11] = size  # the code, hidden: 0
    return view


@functools.cache
def board_views(size: int) -> dict[tuple[str | None, str | None], np.ndarray]:
    """The board cell each slot shows, by seat and decision (seat None: the global state), for
    a board of ``size`` slots; shared by the envs of that size, read-only."""
    return {
        (seat, decision): read_only(seat_view(seat, decision, size))
        for seat in (*SEATS, None)
        for decision in DECISION_CODE
    }


def render_text(env: DecryptoEnv) -> str:
    """What ``render()`` shows: turn and phase, the tokens, this turn's hints once given and the
    public hint history by keyword position."""
    game = env.game
    if game is None:
        return "Decrypto: no game yet (call reset())"
    if game.done:
        head = f"Decrypto, game over after turn {game.turn} of {game.max_turns}: {game.ending}"
    else:
        doing = "the encoder hints" if env.phase == HINTS else "the guessers guess"
        head = f"Decrypto, turn {game.turn} of {game.max_turns}: {doing}"
    lines = [
        head,
        f"tokens: miscommunications {game.miscommunications}/{TOKENS_TO_LOSE}, "
        f"interceptions {game.interceptions}/{TOKENS_TO_LOSE}",
    ]
    if env.hints:
        lines.append("hints this turn: " + ", ".join(env.hints))
    lines.append("hint history by keyword:")
    for position, hints in enumerate(game.hint_history, 1):
        lines.append(f"  {position}: " + (", ".join(hints) if hints else "-"))
    return "\n".join(lines)
