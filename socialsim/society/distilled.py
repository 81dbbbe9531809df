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

A round with draws first puts in each distilled agent's state what it decides this round,
whatever it meets (:mod:`.decide`: one byte, a pass over the agents per distilled strategy),
then plays the pairs as a round without draws does, reading that byte with the states it reads
anyway. A pair's key (:mod:`.pair_tables`) gains two parts: the donor's help
(:data:`HELP_DRAWN`) and the recipient's valence class (:data:`TONE_DRAWN`, 0 good, 1 neutral,
2 bad), from the rules for a scripted agent (as it decides without draws) and from its byte for
a distilled one. A society without a distilled strategy does not draw at all.

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
from typing import Any, NamedTuple

import numpy as np

from socialsim.envs.gossip.cues import VALENCES
from socialsim.seeding import agent_seeds
from socialsim.society.decide import thresholds
from socialsim.society.kernels import decide, play_pairs
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


class DrawnTables(NamedTuple):
    """The tables of a round with draws (see :mod:`.decide` and
    :func:`~socialsim.society.kernels.play_pairs_loop`)."""

    help_cuts: np.ndarray  #: (8 codes, 4 cells): a help's threshold, by strategy and cell
    tone_cuts: np.ndarray  #: (8 codes, helped, bad standing, 2): the valence classes' cuts
    codes: np.ndarray  #: the distilled strategies' codes (those that decide)
    help_rule: np.ndarray  #: by pair key: 0 refuse, 1 help, 2 the donor's decision
    tone_rule: np.ndarray  #: by pair key with the help: a class 0-2, 12 the recipient's
    effect: np.ndarray  #: by pair key with both: what the round adds to the donor's state
    count_bin: np.ndarray  #: by pair key with both: the pair's bin of the round's counts


def drawn_tables(gossip: bool, distilled: Sequence[Any]) -> DrawnTables:
    """The tables of a round with draws, for the scripted strategies and ``distilled`` (in
    roster order). A scripted strategy's decisions are in the rules, as in a round without
    draws; a distilled one's are drawn (:mod:`.decide`), by its ``P(help)`` in each cell of
    what a donor sees and its valence shares given whether it was helped and its own
    standing."""
    scripted, n = len(STRATEGIES), len(STRATEGIES) + len(distilled)
    bins = (2, 3, n, n)
    help_p, tone_p = np.zeros((8, 4)), np.ones((8, 2, 2, 2))  # a code has 3 bits
    for i, strategy in enumerate(distilled):
        helping, tones = strategy.help_probability(), strategy.valence_probability()
        for bad_image, bad_standing in np.ndindex(2, 2):
            help_p[scripted + i, 2 * bad_image + bad_standing] = helping[bad_image, bad_standing]
        for helped, bad in np.ndindex(2, 2):
            shares = tones[helped, bad] if gossip else (1.0, 0.0, 0.0)
            tone_p[scripted + i, helped, bad] = (shares[0], shares[0] + shares[1])
    help_rule = np.zeros(KEYS, dtype=np.uint8)
    tone_rule = np.zeros(2 * KEYS, dtype=np.uint8)
    effect = np.zeros(DRAWN_KEYS, dtype=np.int64)
    count_bin = np.zeros(DRAWN_KEYS, dtype=np.intp)
    for key, parts in pair_keys(n):
        unaware, slipped, donor, donor_bad, recipient, recipient_bad, bad_image = parts
        seen = (0, 0) if unaware else (bad_image, recipient_bad)
        help_rule[key] = helps(donor, *seen) if donor < scripted else 2
        for helping in (0, 1):
            helped = bool(helping) and not slipped
            if not gossip:
                rule = 0
            elif recipient < scripted:
                rule = VALENCES.index(tone_valence(recipient, helped, recipient_bad))
            else:
                rule = 12
            tone_rule[key + helping * HELP_DRAWN] = rule
            for t, valence in enumerate(VALENCES):
                full = key + helping * HELP_DRAWN + t * TONE_DRAWN
                tone = valence if gossip else 0
                effect[full], count_bin[full] = outcome(
                    helped, tone, donor, donor_bad, recipient, bins
                )
    codes = np.arange(scripted, n, dtype=np.int64)
    return DrawnTables(
        thresholds(help_p), thresholds(tone_p), codes, help_rule, tone_rule, effect, count_bin
    )


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
        buffers: Any = None,
    ) -> None:
        """One round: what every agent decides (:func:`~socialsim.society.kernels.decide`),
        then the pairs (:func:`~socialsim.society.kernels.play_pairs` with the decisions);
        ``draws`` are the round's slip draws, error, reach draws and gossip reach, ``buffers``
        the numpy path's."""
        if not self.seeded:
            raise ValueError("seeds: a society with distilled strategies needs integer seeds")
        t = self.tables
        decide(state, self.agent_seeds, t.help_cuts, t.tone_cuts, t.codes, round_)
        slips, error, reach, gossip_reach = draws
        play_pairs(
            order, state, helps_received, t.effect, slips, error, reach, gossip_reach,
            t.count_bin, counts, t.help_rule, t.tone_rule, buffers=buffers,
        )  # fmt: skip
