"""The ``rl`` agent kind: a policy saved by Stable-Baselines3 (``model.save(path)``) plays a seat.

``kind = "rl", path = "donor.zip"`` in an experiment file puts the policy in that seat:

* ``path``: the SB3 zip; a relative path in an experiment file is read against the file's
  folder (given with ``--set`` or ``--with``, against the working directory). It is loaded when
  the experiment is checked (its spaces checked against the seat's: a missing or unfit file is a
  configuration error naming the seat and the path, exit status 2, before anything is written)
  and once per run (shared by every episode through the run context) with ``algorithm``
  (``"MaskablePPO"``, the default, or ``"PPO"``), on the CPU.
* The policy sees what it saw in training (a :class:`~socialsim.rl.view.SeatView`, perhaps
  with some keys filtered out): the keys its saved observation space names, each either the
  seat's own (``observation``, ``action_mask``) or a feature of :data:`FEATURES` (those of
  :mod:`socialsim.rl.features` and :mod:`socialsim.agents.rl.decrypto`) computed from the seat's
  inbox and info.
* The seat's observation and action mask are checked against the file's observation and
  action spaces when the experiment is checked and again at the first decision; a mismatch is a
  ``ValueError`` naming both.
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
from socialsim.rl.view import flat_mask_space

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
    try:
        return Algorithm.load(path, device="cpu")
    except Exception as error:  # noqa: BLE001 - a zip of something else, a truncated file
        raise ValueError(
            f"path: {path!r} is not a policy {algorithm} can load: {type(error).__name__}: {error}"
        ) from None


class PolicyAgent(Agent):
    """A saved SB3 policy in a seat (see the module docstring)."""

    file_params = ("path",)
    #: an [evolution] run keeps the seat every generation: never selected out, nobody's parent
    keeps_seat = True

    def __init__(self, path: str, algorithm: str = "MaskablePPO", deterministic: bool = True):
        if algorithm not in ALGORITHMS:
            raise ValueError(
                f"algorithm: must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}"
            )
        if not Path(path).is_file():
            raise ValueError(f"path: no policy file at {str(path)!r}")
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

    def check_seat(self, agent_id: str, observation_space: Any, action_space: Any) -> None:
        """Load the policy and check that seat ``agent_id`` of an env with these spaces gives
        what it takes (see :meth:`check`); the check of an experiment calls it."""
        model = load_policy(self.path, self.algorithm)
        keys = list(getattr(model.observation_space, "spaces", {}))
        shapes = {}
        mask_space = flat_mask_space(observation_space["action_mask"])
        given = {"observation": observation_space["observation"], "action_mask": mask_space}
        for key in keys:  # a key the seat cannot give is left out: check names the keys
            if key in given:
                shapes[key] = given[key].shape
            elif key in FEATURES:
                shapes[key] = FEATURES[key].space.shape
        self.agent_id = agent_id
        self.model = None  # the run loads its own copy, shared by its episodes
        self.check(shapes, int(np.prod(mask_space.shape)), model)

    def check(
        self, seen: Mapping[str, Any], n_actions: int | np.ndarray, model: Any = None
    ) -> None:
        """Raise ``ValueError`` if the seat's observation (``seen``: key -> value or shape) or
        its actions (``n_actions``, or the mask) do not fit the file's."""
        model = model if model is not None else self.model
        space, actions = model.observation_space, model.action_space
        problems = []
        shapes = {k: v if isinstance(v, tuple) else np.shape(v) for k, v in seen.items()}
        if not isinstance(space, spaces.Dict) or set(space.spaces) != set(seen):
            problems.append(f"observation keys {sorted(seen)}")
        else:
            for key, shape in shapes.items():
                if space[key].shape != shape:
                    problems.append(f"{key} of shape {shape}")
        n_actions = int(n_actions if np.ndim(n_actions) == 0 else np.size(n_actions))
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
