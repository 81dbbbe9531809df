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
(:mod:`socialsim.society.pair_tables`): a strategy over these ``base`` cues is one the
population engine can play.

The extra cues (:data:`EXTRA`), read for both decisions about the counterpart (the recipient
for the donor, the donor for the recipient), each binned as stated, from what the seat was told:

| cue | bins | read from |
|---|---|---|
| ``stock`` | own stock below the episode's initial stock (0/1); the counterpart's stock above the seat's own (0/1) | the round's ``match`` message (both stocks when the round started) and the ``rules`` message's ``initial_resources`` |
| ``round`` | the third of the episode the round falls in: round ``r`` of ``R`` (from 1) is in ``(3 (r - 1)) // R`` (0 early, 1 middle, 2 late) | the ``rules`` message's ``rounds`` |
| ``last`` | the seat's last experience of the counterpart before this round: 0 none (it never was the seat's donor), 1 it helped me, 2 it refused me | the ``action`` messages done to the seat |

The society keeps none of them, so a strategy over them plays in the env's ``distilled`` seat
only (the society plays it summed over them, :func:`socialsim.society.distilled.playable`).

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


class ExtraCues(NamedTuple):
    """The extra cues of a decision (the module docstring says each one's bins)."""

    own_low: int
    other_richer: int
    third: int
    last: int


#: the extra cues a strategy may condition on: name -> (its fields in ExtraCues, their bins)
EXTRA = {"stock": ((0, 1), (2, 2)), "round": ((2,), (3,)), "last": ((3,), (3,))}
#: how each extra cue is named in tables
EXTRA_LABELS = {"stock": "stock", "round": "round", "last": "last experience"}


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


def extra_cues(notebook: Notebook, counterpart: str, round_: int) -> ExtraCues:
    """The extra cues of the seat's decision of round ``round_`` about ``counterpart`` (the
    round's ``match`` message read)."""
    meeting = notebook.current(round_)
    own_low = int(meeting.own < float(notebook.rule("initial_resources", 0.0)))
    rounds = max(int(notebook.rule("rounds", round_)), round_, 1)
    last = 0
    for past in sorted(notebook.meetings, reverse=True):
        before = notebook.meetings[past]
        if past < round_ and before.other == counterpart and before.role == "recipient":
            last = 1 if before.received.get("move") == "cooperate" else 2
            break
    return ExtraCues(own_low, int(meeting.theirs > meeting.own), (3 * (round_ - 1)) // rounds, last)


def check_cues(value: Any, field: str = "cues") -> tuple[str, ...]:
    """The extra cues of a ``--cues`` list (``"base,round"``, a sequence, or ``"all"``), in
    :data:`EXTRA`'s order; ``base`` is always in and may be left unsaid."""
    parts = value.split(",") if isinstance(value, str) else list(value or ())
    allowed = ("base", *EXTRA, "all")
    chosen = set()
    for part in parts:
        part = part.strip() if isinstance(part, str) else part
        if part not in allowed:
            raise ValueError(
                f"{field}: {part!r} is no cue; allowed: {', '.join(allowed)} (base is always in)"
            )
        chosen |= set(EXTRA) if part == "all" else {part}
    return tuple(name for name in EXTRA if name in chosen)


def cue_shape(extras: tuple[str, ...]) -> tuple[int, ...]:
    """The cells of a table over the base cues and ``extras`` (without the choice axis)."""
    return (2, 2, *(b for name in extras for b in EXTRA[name][1]))


def cue_columns(extras: tuple[str, ...]) -> tuple[int, ...]:
    """Where a table over ``extras`` reads a decision's cues, as positions in
    ``(*base cues, *ExtraCues)``."""
    return (0, 1, *(2 + f for name in extras for f in EXTRA[name][0]))


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
