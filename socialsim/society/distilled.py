"""Distilled strategies in the numpy society (:mod:`socialsim.distill`): a roster of the scripted
strategies and up to three distilled ones, and the tables of a round in which pairs draw.

A distilled strategy chooses by chance: a donor helps when its decision's uniform draw is below
``P(help | what it sees)``; a recipient publishes the valence class whose cumulative share first
exceeds its draw. The draws are those the ``distilled`` seat makes in the donation env
(:func:`socialsim.envs.gossip.cues.decision_uniform` of the agent's seed, the round and the
decision), the agent's seed being the env's (:func:`socialsim.seeding.agent_seeds`: agent ``i``
is seat ``agent_i`` of the episode seeded as the replicate), so the env and the society play
the same generations for the same seed. Nothing is drawn from the society's Generators, whose
streams stay those of the scripted strategies.

A pair's key (:mod:`.pair_tables`) then gains two parts: the donor's draw of help
(:data:`HELP_DRAWN`) and the recipient's valence class (:data:`TONE_DRAWN`, 0 good, 1 neutral,
2 bad). The scripted strategies' probabilities are 0 or 1, so they play as they do without
draws; a society without a distilled strategy does not draw at all.

The society keeps the base cues only (the recipient's image and standing; for gossip, the
help and the recipient's own standing). A strategy distilled over extra cues too (``socialsim
distill --cues``: stock, round, last experience) plays here summed over them
(:func:`playable`, with a warning): its counts summed over the extra cues are exactly the
strategy ``--cues base`` fits to the same decisions, so the society plays that, while the env's
``distilled`` seat plays the full table; the env and the society then no longer play the same
generations.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from socialsim.envs.gossip.cues import VALENCES
from socialsim.seeding import agent_seeds
from socialsim.society.kernels import play_drawn_pairs
from socialsim.society.pair_tables import KEYS, helps, outcome, pair_keys, tone_valence
from socialsim.society.population import STRATEGIES

#: a strategy's code takes 3 bits of the record (strategy * 4 + standing * 2 < 32)
MAX_DISTILLED = 8 - len(STRATEGIES)
HELP_DRAWN = KEYS
TONE_DRAWN = 2 * KEYS
DRAWN_KEYS = 6 * KEYS


def roster(distilled: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The strategy names of a society: the scripted ones, then the distilled ones (codes 5,
    6, 7), each a :class:`~socialsim.distill.strategy.Strategy` (or anything with its
    ``help_probability`` and ``valence_probability``)."""
    distilled = dict(distilled or {})
    if len(distilled) > MAX_DISTILLED:
        raise ValueError(
            f"distilled: at most {MAX_DISTILLED} distilled strategies in one society, "
            f"got {len(distilled)}"
        )
    for name, strategy in distilled.items():
        if not isinstance(name, str) or name in STRATEGIES:
            raise ValueError(
                f"distilled: {name!r} must be a name of its own (not one of {', '.join(STRATEGIES)})"
            )
        if not hasattr(strategy, "help_probability") or not hasattr(
            strategy, "valence_probability"
        ):
            raise ValueError(f"distilled.{name}: must be a distilled Strategy, got {strategy!r}")
    return (*STRATEGIES, *distilled)


def playable(distilled: Mapping[str, Any] | None) -> dict[str, Any]:
    """``distilled`` as the society plays it: a strategy over extra cues summed over them
    (:meth:`~socialsim.distill.strategy.Strategy.marginal`), with a ``UserWarning`` naming it."""
    played = {}
    for name, strategy in (distilled or {}).items():
        extras = tuple(getattr(strategy, "extras", ()))
        if extras:
            warnings.warn(
                f"distilled.{name}: the strategy's cues are base,{','.join(extras)}; the society "
                f"keeps the base cues only, so it plays {name} summed over {', '.join(extras)} "
                "(the strategy --cues base fits); the env's distilled seat plays the full table",
                UserWarning,
                stacklevel=3,
            )
            strategy = strategy.marginal()
        played[name] = strategy
    return played


def drawn_tables(
    gossip: bool, distilled: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The tables of a round with draws, for the scripted strategies and ``distilled`` (in
    roster order): ``P(help)`` by pair key; the two cuts of the recipient's draw by pair key
    with the help drawn (``(2, 2 KEYS)``); the effect on the donor's state and the count bin by
    the key with both draws."""
    n = len(STRATEGIES) + len(distilled)
    bins = (2, 3, n, n)
    helping = [s.help_probability() for s in distilled]
    tones = [s.valence_probability() for s in distilled]
    p_help = np.zeros(KEYS)
    cuts = np.ones((2, 2 * KEYS))
    effect = np.zeros(DRAWN_KEYS, dtype=np.int64)
    count_bin = np.zeros(DRAWN_KEYS, dtype=np.intp)
    for key, parts in pair_keys(n):
        unaware, slipped, donor, donor_bad, recipient, recipient_bad, bad_image = parts
        seen = (0, 0) if unaware else (bad_image, recipient_bad)
        if donor < len(STRATEGIES):
            p_help[key] = float(helps(donor, *seen))
        else:
            p_help[key] = helping[donor - len(STRATEGIES)][seen]
        for drawn in (0, 1):
            helped = bool(drawn) and not slipped
            if not gossip:
                shares = np.array([1.0, 0.0, 0.0])
            elif recipient < len(STRATEGIES):
                shares = np.zeros(3)
                shares[VALENCES.index(tone_valence(recipient, helped, recipient_bad))] = 1.0
            else:
                shares = tones[recipient - len(STRATEGIES)][int(helped), recipient_bad]
            cuts[:, key + drawn * HELP_DRAWN] = (shares[0], shares[0] + shares[1])
            for t, valence in enumerate(VALENCES):
                full = key + drawn * HELP_DRAWN + t * TONE_DRAWN
                tone = valence if gossip else 0
                effect[full], count_bin[full] = outcome(
                    helped, tone, donor, donor_bad, recipient, bins
                )
    return p_help, cuts, effect, count_bin


class DrawnPlay:
    """A society's rounds with distilled strategies: the tables of :func:`drawn_tables` and
    the agents' seeds (flat, replicate after replicate, as the kernel indexes them), which
    :meth:`seed` sets from the replicates' seeds (integers: each replicate's agents are the
    seats of the env's episode seeded alike)."""

    def __init__(
        self,
        gossip: bool,
        distilled: Mapping[str, Any],
        shape: tuple[int, int],
        replicas: Sequence[Any],
    ):
        self.tables = drawn_tables(gossip, list(distilled.values()))
        self.n_agents = shape[1]
        self.agent_seeds = np.zeros(shape[0] * shape[1], dtype=np.uint64)
        self.seeded = False
        if all(isinstance(s, (int, np.integer)) and not isinstance(s, bool) for s in replicas):
            self.seed(replicas)

    def seed(self, replicas: Sequence[Any]) -> None:
        for seed in replicas:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
                raise ValueError(
                    "seeds: a society with distilled strategies needs integer seeds >= 0 (its "
                    f"agents draw as the env's seats do), got {seed!r}"
                )
        n = self.n_agents
        for r, seed in enumerate(replicas):
            self.agent_seeds[r * n : (r + 1) * n] = agent_seeds(int(seed), n)
        self.seeded = True

    def take_seeds(self, whole: DrawnPlay, first: int, stop: int) -> None:
        """The seeds of replicates ``first`` to ``stop - 1`` of ``whole`` (a part of it)."""
        n = self.n_agents
        self.agent_seeds[...] = whole.agent_seeds[first * n : stop * n]
        self.seeded = whole.seeded

    def play(
        self,
        order: np.ndarray,
        state: np.ndarray,
        helps_received: np.ndarray,
        draws: tuple,
        counts: np.ndarray,
        round_: int,
    ) -> None:
        """One round (:func:`~socialsim.society.kernels.play_drawn_pairs`); ``draws`` are the
        round's slip draws, error, reach draws and gossip reach."""
        if not self.seeded:
            raise ValueError("seeds: a society with distilled strategies needs integer seeds")
        p_help, cuts, effect, count_bin = self.tables
        slips, error, reach, gossip_reach = draws
        play_drawn_pairs(
            order, state, helps_received, p_help, cuts, effect, slips, error, reach,
            gossip_reach, count_bin, counts, self.agent_seeds, round_,
        )  # fmt: skip
