"""How an agent's action becomes a core choice, for the gossip envs.

An action is an index of the game's ``Discrete`` space (the RL view; the table is the
protocol's ``Game.actions``) or, for language agents, a dict: ``{"action": index or name,
"justification": str}`` for a move, ``{"tone": 0-4 or tone name, "message": str}`` for gossip
(``tone`` indexes ``TONES``, not the action space), ``{"amount": number}`` in the trust game. A
malformed action is a ``ValueError`` naming the agent, the expected form and what it got; a
well-formed action that the decision's mask forbids becomes the decision's fallback, with the
flag ``{"reason", "fallback"}``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from socialsim.envs.gossip.protocol import AMOUNT_STEPS, GOSSIP, TONE_INDEX, TONES, TRUST, Game

Flag = dict[str, Any]


class ActionCodec:
    """Decodes the actions of one game (see the module docstring)."""

    def __init__(self, game: Game):
        self.game = game
        self.actions = game.actions
        self.first_tone = game.first_tone
        names = {choice: i for i, (_, choice) in enumerate(game.moves) if isinstance(choice, str)}
        names.update({alias: names[choice] for alias, choice in game.aliases.items()})
        self.names = names
        #: a tone's name -> its action index (the exact spelling; others are stripped and
        #: lower-cased first)
        self.tones = {tone: self.first_tone + i for tone, i in TONE_INDEX.items()}
        self.amounts = game is TRUST

    def expected(self) -> str:
        if self.amounts:
            return (
                f"an action in Discrete({len(self.actions)}) (0-{AMOUNT_STEPS}: k/{AMOUNT_STEPS} "
                "of the most you may send; then the tones), {'amount': number, 'justification': "
                "str} or {'tone': 0-4 or tone name, 'message': str}"
            )
        return (
            f"an action in Discrete({len(self.actions)}), {{'action': index or name, "
            "'justification': str} or {'tone': 0-4 or tone name, 'message': str}"
        )

    def describe(self, index: int) -> str:
        decisions, value = self.actions[index]
        if GOSSIP in decisions:
            return f"action {index} ({TONES[value]})"
        if self.amounts:
            return f"action {index} (send {value:g} of the most allowed)"
        return f"action {index} ({value})"

    def decode(
        self,
        agent: str,
        decision: str,
        action: Any,
        allowed: np.ndarray,
        limit: Callable[[], float],
    ) -> tuple[Any, Flag | None]:
        """``(core choice, flag or None)`` of ``agent``'s action for ``decision``; ``allowed``
        is the decision's mask, ``limit()`` the most a trust seat may send (``limit`` may be
        ``None`` in the games without amounts)."""
        kind = type(action)
        extra = None
        if kind is int and 0 <= action < len(self.actions):  # the RL path first
            index = action
        elif kind is dict and "tone" in action:  # then a language agent's two forms, the
            tone = action["tone"]  # names as the tables spell them looked up at once
            index = self.tones.get(tone) if type(tone) is str else None
            if index is None:
                index = self._tone(agent, tone)
            extra = _message(agent, action)
        elif kind is dict and "action" in action:
            name = action["action"]
            index = self.names.get(name) if type(name) is str else None
            if index is None:
                index = self._named(agent, name, action)
        else:
            index, extra = self._index(agent, action)
        decisions, value = self.actions[index]
        if decision not in decisions or not allowed[index]:
            fallback = self.game.fallbacks[decision]
            shown = TONES[fallback[0]] if decision == GOSSIP else fallback
            reason = f"{self.describe(index)} is not allowed for a {decision} decision"
            return fallback, {"reason": reason, "fallback": shown}
        if decision == GOSSIP:
            return (value, extra), None
        if self.amounts:
            # an exact amount as given (the core rejects it if out of range), else a grid step
            return (extra if extra is not None else value * limit()), None
        return value, None

    def _bad(self, agent: str, action: Any) -> ValueError:
        return ValueError(f"{agent}: expected {self.expected()}, got {action!r}")

    def _index(self, agent: str, action: Any) -> tuple[int, Any]:
        """``(action index, free text or exact amount)`` of an int or dict action."""
        if type(action) is dict or isinstance(action, Mapping):
            if "tone" in action:
                return self._tone(agent, action["tone"]), _message(agent, action)
            if "action" in action:
                return self._named(agent, action["action"], action), None
            if self.amounts and "amount" in action:
                return 0, _amount(action["amount"])
            raise self._bad(agent, action)
        if (
            isinstance(action, bool)
            or not isinstance(action, (int, np.integer))
            or not 0 <= action < len(self.actions)
        ):
            raise self._bad(agent, action)
        return int(action), None

    def _tone(self, agent: str, tone: Any) -> int:
        if isinstance(tone, str):
            index = self.tones.get(tone)
            if index is not None:
                return index
            tone = TONE_INDEX.get(tone.strip().lower(), tone)
        if (
            isinstance(tone, bool)
            or not isinstance(tone, (int, np.integer))
            or not 0 <= tone < len(TONES)
        ):
            raise ValueError(
                f"{agent}: tone must be an index 0-{len(TONES) - 1} or one of "
                f"{', '.join(TONES)}, got {tone!r}"
            )
        return self.first_tone + int(tone)

    def _named(self, agent: str, value: Any, action: Any) -> int:
        if isinstance(value, str):
            index = self.names.get(value)
            if index is None:
                key = value.strip()
                index = self.names.get(key, self.names.get(key.lower()))
            if index is None:
                raise ValueError(
                    f"{agent}: action name must be one of {', '.join(self.names)}, got {value!r}"
                )
            return index
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            if 0 <= value < self.first_tone:
                return int(value)
        raise self._bad(agent, action)


def _message(agent: str, action: Mapping) -> str | None:
    message = action.get("message")
    if message is not None and not isinstance(message, str):
        raise ValueError(f"{agent}: message must be a string, got {message!r}")
    return message


def _amount(amount: Any) -> float:
    if isinstance(amount, str):
        try:
            amount = float(amount)
        except ValueError:
            raise ValueError(f"amount: must be a number, got {amount!r}") from None
    if (
        isinstance(amount, bool)
        or not isinstance(amount, (int, float, np.integer, np.floating))
        or not math.isfinite(amount)
    ):
        raise ValueError(f"amount: must be a number, got {amount!r}")
    return float(amount)
