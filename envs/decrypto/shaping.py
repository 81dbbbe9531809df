"""Decrypto's shaped rewards for learners, the env's ``turn_rewards`` option (off by default).

The game pays only at its end (+-1). With ``turn_rewards = w`` each reveal also pays: the
encoder and the decoder +w when the decoder reads the code and -w on a miscommunication, the
interceptor +w for an interception. The rules and the outcome stay the game's; only what a
learner is paid along the way changes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def checked_weight(value: Any) -> float:
    """``turn_rewards`` as a float; ``ValueError`` naming it unless it is a number >= 0."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not 0 <= value or not math.isfinite(value):
        raise ValueError(f"turn_rewards: must be a number >= 0, got {value!r}")
    return float(value)


def shaped(rewards: Mapping[str, float], result: Any, w: float) -> dict[str, float]:
    """``rewards`` of a reveal plus its shaped rewards of weight ``w`` (``result``: the turn's
    :class:`~socialsim.envs.decrypto.core.TurnResult`)."""
    team = -w if result.miscommunication else w
    out = {seat: float(reward) for seat, reward in rewards.items()}
    out["encoder"] += team
    out["decoder"] += team
    out["interceptor"] += w if result.interception else 0.0
    return out
