"""Scripted proxies for the ALIGN papers' findings: populations that show, with no language
model, what the paper shows with them. Each reads only its inbox (the ``rules`` message, the
gossip) through the protocol's :class:`~socialsim.envs.gossip.notebook.Notebook`, and takes its
norm as a parameter (so that one grid axis, ``seats.*.norm``, sets it for a whole population),
and ``memory``, how tones are weighed into a reputation (``"tally"`` or ``"latest"``; by default
the norm's own, see :func:`~socialsim.envs.gossip.norms.reputation`).

| kind                 | moves                                                        | gossip it publishes |
|----------------------|--------------------------------------------------------------|---------------------|
| `reputation_seeker`  | self-interested: helps only when helping pays (see below)    | the tone `norm` assigns |
| `norm_discriminator` | helps counterparts in good standing under `norm`             | the tone `norm` assigns |
| `norm_cooperator`    | always cooperates                                            | the tone `norm` assigns |
| `norm_defector`      | always defects                                               | the tone `norm` assigns |

**The reputation seeker** stands in for the paper's reasoning models, which cooperate only
where it is in their interest. Helping costs ``cost`` now and pays only through reputation: a
donor in good standing is helped later, worth about ``discount * benefit`` per future meeting
(the game's terms from :func:`~socialsim.envs.gossip.protocol.help_terms`: in the trust game a
unit invested costs one and is worth ``multiplier``).
So it cooperates if and only if (1) gossip is on (its move will be reported; without gossip
nobody can condition on it and defection is the dominant move), (2) ``discount * benefit >
cost`` (the paper's condition gamma > c/b for reputation to sustain cooperation) and (3) the
recipient is in good standing under ``norm`` (helping a bad agent earns nothing under standing
norms). Where no gossip exists every counterpart is an unknown, and it defects against them.

**Honest gossip under a norm** (`norm_cooperator`, `norm_defector`): the tone the norm assigns
to what was done to me, judged against my own standing, as a discriminator of that norm writes
it. A defector gossiping under image scoring criticises a justified refusal; under simple
standing it says nothing bad (neutral), under stern judging it praises it. This is how
"justified defection is punished" under image scoring only.
"""

from __future__ import annotations

from typing import Any

from socialsim.agents.scripted.gossip import Discriminator
from socialsim.envs.gossip import norms, protocol

KINDS = {
    "reputation_seeker": "socialsim.agents.scripted.proxies:ReputationSeeker",
    "norm_discriminator": "socialsim.agents.scripted.proxies:NormDiscriminator",
    "norm_cooperator": "socialsim.agents.scripted.proxies:NormCooperator",
    "norm_defector": "socialsim.agents.scripted.proxies:NormDefector",
}


class NormDiscriminator(Discriminator):
    """A discriminator whose norm is a parameter: helps the good, gossips as ``norm`` assigns."""

    def __init__(self, norm: str = "simple_standing", memory: str | None = None):
        if norm not in norms.NORMS:
            raise ValueError(f"norm: must be one of {', '.join(norms.NORMS)}, got {norm!r}")
        if memory is not None and memory not in norms.MEMORIES:
            raise ValueError(
                f"memory: must be one of {', '.join(norms.MEMORIES)} (or absent), got {memory!r}"
            )
        self.norm = norm
        self.memory = memory


class NormCooperator(NormDiscriminator):
    """Always cooperates; gossips honestly under ``norm``."""

    def cooperates(self, counterpart, decision, info) -> str:
        return "cooperate"


class NormDefector(NormDiscriminator):
    """Always defects; gossips honestly under ``norm``."""

    def cooperates(self, counterpart, decision, info) -> str:
        return "defect"


class ReputationSeeker(NormDiscriminator):
    """Self-interested: cooperates only when gossip is on, ``discount * benefit > cost`` and the
    recipient is in good standing under ``norm``; defects otherwise."""

    def helping_pays(self) -> bool:
        rule = self.notebook.rule
        if not rule("gossip", False):
            return False
        terms = protocol.help_terms(self.notebook.rules)  # the game's own terms, never restated
        if terms is None:
            return False
        cost, benefit = terms
        return float(rule("discount", 0.0)) * benefit > cost

    def cooperates(self, counterpart: str, decision: str, info: Any) -> str:
        if not self.helping_pays():
            return "defect"
        return super().cooperates(counterpart, decision, info)
