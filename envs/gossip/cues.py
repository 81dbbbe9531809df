"""What a donation-game seat knows at a decision, as the cues a behavioural strategy conditions
on, and the one uniform draw of each decision: written once, read by the distiller (from a
record's bus log) and by the distilled seat (from its inbox), so that both see the same cues.

| decision | cues | choice |
|---|---|---|
| donate (the donor) | the recipient's image is bad (the valences of the tones the donor knows about it sum below 0), its standing is bad (its latest non-neutral tone the donor knows is bad) | help or refuse |
| gossip (the recipient) | the donor helped, the recipient's own standing is bad (from the tones about it) | the tone's valence: good, neutral, bad |

A recipient the donor knows nothing about (nothing published, or not told this round under
``gossip_reach`` < 1) has neither a bad image nor a bad standing, as every norm treats a
stranger. These are the two facts per agent that the numpy society keeps
(:mod:`socialsim.society.pair_tables`): a strategy over these cues is one the population engine
can play.

A decision's uniform draw is a counter-based hash of the seat's seed, the round and the
decision (splitmix64's finaliser), not a stream: the same draw whatever else the seat decided,
and computable for a million seats at once from their seeds (``decision_uniform`` takes numpy
arrays of ``uint64`` too).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from socialsim.envs.gossip import norms
from socialsim.envs.gossip.notebook import Notebook

#: the decisions a distilled strategy makes, as the draw's ``purpose``
DONATE, GOSSIP = 0, 1
#: a gossip tone's valence classes, in the order of the strategy's tone table
VALENCES = (1, 0, -1)
#: the tone a distilled seat publishes for each valence (the society plays the valence only)
TONE_OF_VALENCE = {1: "praising", 0: "neutral", -1: "criticism"}

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_ROUND = 0xD1B54A32D192ED03
_PURPOSE = 0xAEF17502108EF2D9
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


class DonorCues(NamedTuple):
    bad_image: int
    bad_standing: int


class GossipCues(NamedTuple):
    helped: int
    own_bad_standing: int


def is_bad(tones: Any, norm: str) -> int:
    """1 when ``tones`` (oldest first) make an agent bad under ``norm``'s reading, else 0
    (nothing known counts as good)."""
    reputation = norms.reputation(tones or (), norm)
    return int(reputation is not None and not norms.is_good(reputation))


def known_tones(notebook: Notebook, about: str, round_: int) -> list[str]:
    """The tones about ``about`` that the seat may judge by in round ``round_``: every tone
    published, or under ``gossip_reach`` < 1 only what this round's reputation message told."""
    if notebook.rule("gossip_reach", 1.0) < 1:
        return list(notebook.told.get((round_, about), ()))
    return list(notebook.tones.get(about, ()))


def donor_cues(notebook: Notebook, recipient: str, round_: int) -> DonorCues:
    tones = known_tones(notebook, recipient, round_)
    return DonorCues(is_bad(tones, "image_scoring"), is_bad(tones, "stern_judging"))


def gossip_cues(notebook: Notebook, helped: bool) -> GossipCues:
    """The recipient's cues: whether it was helped, and its own standing before the round's
    gossip (every tone about an agent reaches it, whatever the reach)."""
    own = notebook.tones.get(notebook.agent_id, ())
    return GossipCues(int(helped), is_bad(own, "stern_judging"))


def hash_constants(*purposes: int) -> tuple[int, ...]:
    """The constants of :func:`decision_uniform` (for a compiled copy of it): the increment,
    the round's multiplier, each purpose's mix, and the two finalising multipliers."""
    return (_GOLDEN, _ROUND, *((p * _PURPOSE) & _MASK for p in purposes), _MIX1, _MIX2)


def decision_uniform(seed: Any, round_: Any, purpose: int) -> Any:
    """A uniform draw in [0, 1) for the decision ``purpose`` of round ``round_`` by the seat
    seeded ``seed``; ints give a float, numpy ``uint64`` arrays an array of the same draws."""
    if isinstance(seed, np.ndarray):
        with np.errstate(over="ignore"):
            x = seed.astype(np.uint64) ^ (np.uint64(round_) * np.uint64(_ROUND))
            x ^= np.uint64((purpose * _PURPOSE) & _MASK)
            z = x + np.uint64(_GOLDEN)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
            z ^= z >> np.uint64(31)
        return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
    x = (int(seed) & _MASK) ^ ((int(round_) * _ROUND) & _MASK) ^ ((purpose * _PURPOSE) & _MASK)
    z = (x + _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    z ^= z >> 31
    return (z >> 11) * 2.0**-53
