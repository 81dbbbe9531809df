"""What a donor-recipient pair of the numpy society does, as lookup tables built from the
norms (:mod:`socialsim.envs.gossip.norms`), and how an agent's reputation is packed.

Because every tone is public, all observers that follow one norm hold the same view of an agent,
so two facts per agent are its reputation under every norm: bad under image scoring (the
valences of the tones about it sum below 0) and bad under standing/stern judging (its latest
non-neutral tone is bad). Both live in one record (:data:`VALENCE`), the high half of the
agent's int64 state, whose low half counts the helps it gave (:data:`RECORD`). A pair is one
key (:data:`SLIPPED`), and everything it does is a lookup by that key in :func:`pair_tables`;
a round's statistics are one ``bincount`` of the pairs' bins (:data:`BINS`) projected by
:data:`COUNTS`. The engine is :mod:`socialsim.society.vectorised`.
"""

from __future__ import annotations

import math

import numpy as np

from socialsim.envs.gossip import norms
from socialsim.envs.gossip.norms import NORMS
from socialsim.society.population import STRATEGIES


def helps(strategy: int, bad_image: int, bad_standing: int) -> bool:
    """Does a donor of ``strategy`` (an index into :data:`STRATEGIES`) mean to help a recipient
    whose reputation is bad under image scoring / under standing and stern judging?"""
    name = STRATEGIES[strategy]
    if name in ("always_cooperate", "always_defect"):
        return name == "always_cooperate"
    bad = bad_image if name == "image_scoring" else bad_standing
    return norms.decide(name, -1 if bad else 1) == "cooperate"


def tone_valence(strategy: int, helped: bool, bad_standing: int) -> int:
    """Valence of the tone a recipient of ``strategy`` publishes about its donor, from
    ``norms.assess``. Always-cooperate and always-defect recipients judge by image scoring
    (honest reports); image scoring ignores the recipient, standing and stern read its standing."""
    name = STRATEGIES[strategy]
    norm = name if name in NORMS else "image_scoring"
    action = "cooperate" if helped else "defect"
    return norms.valence(norms.assess(norm, action, -1 if bad_standing else 1))


# An agent's public record is a 32-bit integer, ``valence_sum * VALENCE + strategy * 4 +
# bad_standing * 2``: its image is bad exactly when the record is negative (the valence sum of
# the tones about it is), so one add per tone keeps both views of its reputation.
VALENCE = 32
CODE = VALENCE - 1  # the record's low bits: strategy * 4 + bad_standing * 2
# A pair's key: unaware * UNAWARE + slipped * SLIPPED + donor (record & CODE) * VALENCE +
# recipient (record & CODE | bad_image), i.e. what the donor is, what the recipient is and how
# it is seen, the slip, and whether the donor does not know the recipient's reputation.
SLIPPED = VALENCE * VALENCE
UNAWARE = 2 * SLIPPED
KEYS = 2 * UNAWARE
# An agent's state is one int64, ``record * RECORD + decided * DECIDED + helps_given``: the
# record in the high 32 bits (so the state is negative exactly when the record is), the helps it
# gave in the low 24, so that what a donor's round changes is one add, and between them the
# byte of what an agent of a distilled strategy decided this round (:mod:`.distilled`; 0 for
# the scripted ones), read with the state that a pair reads anyway.
RECORD = 1 << 32
DECIDED = 1 << 24
HELPS = DECIDED - 1
#: an agent gives at most one help a round: a generation's rounds fit the helps' 24 bits
MAX_ROUNDS = HELPS
# A round's counts per replicate: one bincount of the pairs by (helped, claim, donor's strategy,
# recipient's strategy); a claim is 0 none (a neutral tone), 1 true, 2 false.
BINS = (2, 3, len(STRATEGIES), len(STRATEGIES))


def pair_tables(gossip: bool) -> tuple[np.ndarray, np.ndarray]:
    """What a donor-recipient pair does, by pair key: what the round adds to the donor's
    state (:data:`RECORD`: the tone's valence and the change of its standing to its record,
    whether it helped to its helps given), and the pair's bin of the round's counts. The
    recipient judges by its own standing, which it knows whatever the donor knew. Keys that no
    pair can have stay 0."""
    effect = np.zeros(KEYS, dtype=np.int64)
    count_bin = np.zeros(KEYS, dtype=np.intp)
    for key, parts in pair_keys(len(STRATEGIES)):
        unaware, slipped, donor, donor_bad, recipient, recipient_bad, bad_image = parts
        # a donor that does not know the recipient's reputation sees a stranger
        seen = (0, 0) if unaware else (bad_image, recipient_bad)
        helped = helps(donor, *seen) and not slipped
        tone = tone_valence(recipient, helped, recipient_bad) if gossip else 0
        effect[key], count_bin[key] = outcome(helped, tone, donor, donor_bad, recipient, BINS)
    return effect, count_bin


def pair_keys(strategies: int):
    """Every pair key of a roster of ``strategies`` strategies, with its parts: (unaware,
    slipped, donor, donor_bad, recipient, recipient_bad, bad_image)."""
    codes = [(s, bit) for s in range(strategies) for bit in (0, 1)]  # strategy, standing
    for unaware, slipped in np.ndindex(2, 2):
        for donor, donor_bad in codes:
            for recipient, recipient_bad in codes:
                for bad_image in (0, 1):
                    low = (donor * 4 + donor_bad * 2, recipient * 4 + recipient_bad * 2)
                    key = unaware * UNAWARE + slipped * SLIPPED + low[0] * VALENCE + low[1]
                    yield (
                        key + bad_image,
                        (unaware, slipped, donor, donor_bad, recipient, recipient_bad, bad_image),
                    )


def outcome(
    helped: bool, tone: int, donor: int, donor_bad: int, recipient: int, bins: tuple
) -> tuple[int, int]:
    """A pair's effect on the donor's state and its bin of the round's counts, from whether
    the donor helped and the valence of the recipient's tone."""
    # standing follows the latest non-neutral tone
    now_bad = (tone < 0) if tone else donor_bad
    record_change = tone * VALENCE + (now_bad - donor_bad) * 2
    # a claim is true when its sign is the donor's: +1 a help, -1 a refusal
    claim = 0 if tone == 0 else 1 if tone == (1 if helped else -1) else 2
    return (
        record_change * RECORD + helped,
        int(np.ravel_multi_index((int(helped), claim, donor, recipient), bins)),
    )


PAIR_TABLES = {gossip: pair_tables(gossip) for gossip in (False, True)}


def count_projection(n: int = len(STRATEGIES)) -> np.ndarray:
    """Bins (of a roster of ``n`` strategies) -> a round's counts: the claims (none, true,
    false), then the helps given by each donor strategy, then the helps received by each
    recipient strategy. Float, for BLAS: the counts are integers, exact in float64."""
    bins = (2, 3, n, n)
    helped, claim, donor, recipient = np.unravel_index(np.arange(math.prod(bins)), bins)
    projection = np.zeros((math.prod(bins), 3 + 2 * n))
    projection[np.arange(len(claim)), claim] = 1
    projection[helped == 1, 3 + donor[helped == 1]] = 1
    projection[helped == 1, 3 + n + recipient[helped == 1]] = 1
    return projection


COUNTS = count_projection()
