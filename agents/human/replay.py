"""Recorded Decrypto games played again: each recorded seat gives, turn by turn, what its player
gave, so that any agent can take the decoder or the interceptor seat of a human game (the
Decrypto paper's replay of human games, its Table 1).

``decrypto_replay_encoder`` gives the recorded hints; ``decrypto_replay_guesser`` the recorded
guesses of a decoder or an interceptor. Both carry their turns in their spec (``recorded``, a
parameter the report's agent labels leave out, so every replayed game's seat reads as one
player), so an episode's record holds what was replayed. ``socialsim replay`` (:mod:`socialsim.replay`) builds the specs
from a results directory or a file in the Decrypto reference's human-data form, and gives the
env the recorded keywords and codes (``decrypto_v0``'s ``keywords=`` and ``codes=``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.envs.decrypto.protocol import given_codes, parse_code, render_code

from socialsim.agent import Agent
from socialsim.bus import Message


def _turn(info: Mapping[str, Any], recorded: int, kind: str) -> int:
    turn = int(info["turn"])
    if turn > recorded:
        raise ValueError(
            f"{kind}: the recorded game has {recorded} turns and this is turn {turn}; play it "
            f"with max_turns = {recorded}"
        )
    return turn


class ReplayEncoder(Agent):
    """Gives the recorded hints of each turn; with ``codes``, checks that each turn's code is
    the recorded one (a replay on another game is an error naming both codes)."""

    def __init__(self, recorded: Sequence[Sequence[str]], codes: Sequence[Any] | None = None):
        hints = recorded
        if isinstance(hints, str) or not isinstance(hints, Sequence) or not hints:
            raise ValueError(f"recorded: expected a list of turns of 3 hints each, got {hints!r}")
        for turn, given in enumerate(hints, 1):
            if (
                isinstance(given, str)
                or not isinstance(given, Sequence)
                or len(given) != 3
                or not all(isinstance(h, str) for h in given)
            ):
                raise ValueError(f"recorded: turn {turn}'s hints must be 3 strings, got {given!r}")
        self.hints = [list(h) for h in hints]
        self.codes = None if codes is None else given_codes(codes, len(self.hints))

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]):
        turn = _turn(info, len(self.hints), "decrypto_replay_encoder")
        if self.codes is not None and tuple(info["code"]) != self.codes[turn - 1]:
            raise ValueError(
                f"decrypto_replay_encoder: turn {turn}'s code is {render_code(info['code'])}, "
                f"not the recorded {render_code(self.codes[turn - 1])}; give the env the "
                "recorded codes (codes=)"
            )
        return {"hints": list(self.hints[turn - 1])}


class ReplayGuesser(Agent):
    """Gives the recorded guess of each turn (a decoder's or an interceptor's); ``None`` for a
    turn where the recorded interceptor made no guess (the first-round rule)."""

    def __init__(self, recorded: Sequence[Any]):
        guesses = recorded
        if isinstance(guesses, str) or not isinstance(guesses, Sequence) or not guesses:
            raise ValueError(f"recorded: expected a list of codes, one per turn, got {guesses!r}")
        self.guesses: list[tuple[int, int, int] | None] = []
        for turn, guess in enumerate(guesses, 1):
            try:
                self.guesses.append(None if guess is None else parse_code(guess))
            except ValueError:
                raise ValueError(
                    f"recorded: turn {turn}'s guess {guess!r} is not a code (distinct digits "
                    "1-4, such as '3-1-4')"
                ) from None

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]):
        turn = _turn(info, len(self.guesses), "decrypto_replay_guesser")
        guess = self.guesses[turn - 1]
        if guess is None:
            raise ValueError(
                f"decrypto_replay_guesser: the recorded {self.seat} made no guess on turn {turn}"
            )
        return {"guess": list(guess)}
