"""RL on socialsim's games: Gymnasium seat views (one learner seat, every other seat an agent).

* :class:`~socialsim.rl.view.SeatView`: a ``gymnasium.Env`` over any socialsim env whose other
  seats are played by agents built from experiment-style specs and fed as the runner feeds them.
* :mod:`socialsim.rl.features`: optional extra observation keys a seat could compute from what
  it perceives (its observation, its inbox, its info), shared by the view and the ``rl`` agent.
* :mod:`socialsim.rl.registration`: the Gymnasium ids (``socialsim/Donation-v0``, ...),
  registered when ``socialsim`` is imported.
* :class:`~socialsim.rl.seats.SharedSeats`: parameter sharing, the learner seats of several
  Parallel games as one Stable-Baselines3 ``VecEnv`` (needs the ``rl`` extra).
* :class:`~socialsim.rl.rllib.RLlibSeats`: the learner seats of one game as an RLlib
  ``MultiAgentEnv``, and ``shared_ppo``, one masked PPO policy for all of them (needs the
  ``rllib`` extra). Both play their games through :class:`~socialsim.rl.games.LearnerGame`.
* :mod:`socialsim.rl.plain`: wrappers for MARL libraries, either form: ``numeric_infos``
  (plain numeric infos, the mask included), ``padded_roles`` (one space for every seat, so one
  policy hosts Decrypto's roles) and ``box_observations`` (Box observations).
* :class:`~socialsim.rl.vector.ProcessVectorEnv`: a Gymnasium vector env with several envs per
  worker process, one round trip per worker and step.

Training scripts that use them: ``experiments/train/`` (``donor.py``, ``interceptor.py``,
``shared_donors.py``, ``rllib_donation.py``); a saved SB3 policy plays a seat as the ``rl``
agent kind.

Importing this package loads none of them (``import socialsim`` stays light); ``SeatView`` is
imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["SeatView"]


def __getattr__(name: str) -> Any:
    if name == "SeatView":
        return importlib.import_module("socialsim.rl.view").SeatView
    raise AttributeError(f"module 'socialsim.rl' has no attribute {name!r}")
