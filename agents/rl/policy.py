"""The ``rl`` agent kind: a policy saved by Stable-Baselines3 (``model.save(path)``) plays a seat.

``kind = "rl", path = "donor.zip"`` in an experiment file puts the policy in that seat:

* ``path``: the SB3 zip, relative to the working directory. It is loaded once per run (shared by
  every episode through the run context) with ``algorithm`` (``"MaskablePPO"``, the default, or
  ``"PPO"``), on the CPU.
* The policy sees what it saw in training (a :class:`~socialsim.rl.view.SeatView`, perhaps
  with some keys filtered out): the keys its saved observation space names, each either the
  seat's own (``observation``, ``action_mask``) or a feature of :data:`FEATURES` (those of
  :mod:`socialsim.rl.features` and :mod:`socialsim.agents.rl.decrypto`) computed from the seat's
  inbox and info.
* At the first decision the observation and the action mask are checked against the file's
  observation and action spaces; a mismatch is a ``ValueError`` naming both.
* ``deterministic`` (default true): the most probable legal action, else a sample.

Needs the ``rl`` extra (``pip install -e ".[rl]"``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces
from socialsim.agents.rl.decrypto import HintHistory

from socialsim.agent import Agent
from socialsim.bus import Message
from socialsim.rl import features as features_module

ALGORITHMS = ("MaskablePPO", "PPO")
#: every feature a saved policy may name: the engine's and those that need agents' data
FEATURES: dict[str, type] = {**features_module.FEATURES, HintHistory.name: HintHistory}
_RAW_KEYS = ("observation", "action_mask")


def load_policy(path: str, algorithm: str = "MaskablePPO"):
    """The SB3 model saved at ``path`` (a clear error if the file or the rl extra is missing)."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    if not Path(path).is_file():
        raise ValueError(f"path: no policy file at {path!r}")
    try:
        if algorithm == "MaskablePPO":
            from sb3_contrib import MaskablePPO as Algorithm
        else:
            from stable_baselines3 import PPO as Algorithm
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"the rl agent kind needs {error.name}: pip install -e '.[rl]'"
        ) from error
    return Algorithm.load(path, device="cpu")


class PolicyAgent(Agent):
    """A saved SB3 policy in a seat (see the module docstring)."""

    def __init__(self, path: str, algorithm: str = "MaskablePPO", deterministic: bool = True):
        if algorithm not in ALGORITHMS:
            raise ValueError(
                f"algorithm: must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}"
            )
        self.path = str(path)
        self.algorithm = algorithm
        self.deterministic = bool(deterministic)
        self.model = None

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        if self.model is None:
            shared = getattr(self, "run", None)
            cache = shared.shared if shared is not None else {}
            key = ("rl", str(Path(self.path).resolve()), self.algorithm)
            if key not in cache:
                cache[key] = load_policy(self.path, self.algorithm)
            self.model = cache[key]
            keys = list(getattr(self.model.observation_space, "spaces", {}))
            self.raw_keys = [k for k in keys if k in _RAW_KEYS]
            self.feature_names = [k for k in keys if k not in _RAW_KEYS]
        self.features = features_module.build(self.feature_names, FEATURES)
        for feature in self.features:
            feature.reset(agent_id)
        self.checked = False

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]) -> Any:
        mask = observation["action_mask"]
        if isinstance(mask, tuple):  # a Decrypto encoder's per-hint masks, as the view joins them
            mask = np.concatenate(mask).astype(np.int8)
        given = {"observation": observation["observation"], "action_mask": mask}
        seen = {key: given[key] for key in self.raw_keys}
        for feature in self.features:
            seen[feature.name] = feature(observation, messages, info)
        if not self.checked:
            self.check(seen, mask)
            self.checked = True
        action, _ = self.model.predict(
            seen,
            deterministic=self.deterministic,
            **({"action_masks": mask.astype(bool)} if self.algorithm == "MaskablePPO" else {}),
        )
        return int(action) if np.ndim(action) == 0 else np.asarray(action)

    def check(self, seen: Mapping[str, np.ndarray], mask: np.ndarray) -> None:
        """Raise ``ValueError`` if the seat's observation or actions do not fit the file's."""
        space, actions = self.model.observation_space, self.model.action_space
        problems = []
        if not isinstance(space, spaces.Dict) or set(space.spaces) != set(seen):
            problems.append(f"observation keys {sorted(seen)}")
        else:
            for key, value in seen.items():
                if space[key].shape != np.shape(value):
                    problems.append(f"{key} of shape {np.shape(value)}")
        n_actions = int(np.size(mask))
        expected = (
            actions.n
            if isinstance(actions, spaces.Discrete)
            else int(np.sum(actions.nvec))
            if isinstance(actions, spaces.MultiDiscrete)
            else None
        )
        if expected != n_actions:
            problems.append(f"an action mask of {n_actions} actions")
        if problems:
            raise ValueError(
                f"path: the policy in {self.path} takes observation {space} and action "
                f"{actions}; seat {self.agent_id} gives {', '.join(problems)}"
            )
