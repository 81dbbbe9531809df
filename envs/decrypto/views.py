"""What Decrypto shows besides the numeric observation (:mod:`.board`): each seat's decision by
phase, the read-only containers its infos and masks are handed in, and the public state as text
(``render()``). Tables made once and shared, read-only, by every
:class:`~socialsim.envs.decrypto.env.DecryptoEnv`."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
from socialsim.envs.decrypto.protocol import GUESS, HINTS, TOKENS_TO_LOSE

if TYPE_CHECKING:
    from socialsim.envs.decrypto.env import DecryptoEnv


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
    for phase in (None, HINTS, GUESS)
    for interceptor_guesses in (True, False)
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
