"""Assessment norms of indirect reciprocity, as gossip tones.

Gossip in the ALIGN games is one of five tones, in this order (the action index of tone ``i``
in the donation game's ``Discrete(7)`` is ``2 + i``):

| index | tone        | valence |
|-------|-------------|---------|
| 0     | `praising`  | +1 (good) |
| 1     | `neutral`   | 0       |
| 2     | `mocking`   | -1 (bad) |
| 3     | `complaint` | -1 (bad) |
| 4     | `criticism` | -1 (bad) |

A *norm* says which tone an observer publishes about a donor after seeing its action towards a
recipient of known reputation (:func:`assess`), how an observer turns the tones published about
an agent into a reputation (:func:`reputation`), and whom a discriminator helps
(:func:`decide`). Reputations are ``1`` (good), ``-1`` or ``0`` (bad) or ``None`` (unknown).

| norm              | cooperate with good | defect against good | cooperate with bad | defect against bad |
|-------------------|---------------------|---------------------|--------------------|--------------------|
| `image_scoring`   | praising            | criticism           | praising           | criticism          |
| `simple_standing` | praising            | criticism           | praising           | neutral (justified)|
| `stern_judging`   | praising            | criticism           | criticism          | praising           |

An unknown recipient counts as good everywhere (discriminators cooperate with strangers).
"""

from __future__ import annotations

from collections.abc import Sequence

from socialsim.envs.gossip.protocol import TONES

NORMS: tuple[str, ...] = ("image_scoring", "simple_standing", "stern_judging")
ACTIONS: tuple[str, ...] = ("cooperate", "defect")

_VALENCE = {"praising": 1, "neutral": 0, "mocking": -1, "complaint": -1, "criticism": -1}


def _check_norm(norm: str) -> None:
    if norm not in NORMS:
        raise ValueError(f"norm: unknown norm {norm!r}; allowed: {', '.join(NORMS)}")


def valence(tone: str) -> int:
    """+1 for praising, 0 for neutral, -1 for mocking, complaint and criticism."""
    try:
        return _VALENCE[tone]
    except (KeyError, TypeError):
        raise ValueError(f"tone: unknown tone {tone!r}; allowed: {', '.join(TONES)}") from None


def is_good(recipient_reputation: int | None) -> bool:
    """Unknown (``None``) and positive reputations are good; 0 and negative ones are bad."""
    return recipient_reputation is None or recipient_reputation > 0


def assess(norm: str, action: str, recipient_reputation: int | None) -> str:
    """The tone an observer following ``norm`` publishes about a donor who chose ``action``
    (``"cooperate"`` or ``"defect"``) towards a recipient of reputation ``recipient_reputation``."""
    _check_norm(norm)
    if action not in ACTIONS:
        raise ValueError(f"action: must be one of {', '.join(ACTIONS)}, got {action!r}")
    cooperated = action == "cooperate"
    if norm == "image_scoring":
        return "praising" if cooperated else "criticism"
    good = is_good(recipient_reputation)
    if norm == "simple_standing":
        if cooperated:
            return "praising"
        return "criticism" if good else "neutral"
    # stern judging: the right action is to help the good and refuse the bad
    return "praising" if cooperated == good else "criticism"


MEMORIES: tuple[str, ...] = ("tally", "latest")


def reputation(
    tones_about_agent: Sequence[str], norm: str, memory: str | None = None
) -> int | None:
    """A discriminator's view of an agent from the tones published about it, oldest first.

    ``memory`` is how the tones are weighed; by default the norm's own: ``"tally"`` for
    ``image_scoring`` (the sign of the summed valences; a sum of 0 counts as good, ``1``) and
    ``"latest"`` for ``simple_standing``/``stern_judging`` (the valence of the most recent
    non-neutral tone; only neutral tones count as good). ``memory="latest"`` with image scoring
    is the classic binary image of the indirect-reciprocity literature, under which one
    justified refusal makes a donor bad. ``None`` when nothing has been published.
    """
    _check_norm(norm)
    if memory is None:
        memory = "tally" if norm == "image_scoring" else "latest"
    elif memory not in MEMORIES:
        raise ValueError(f"memory: must be one of {', '.join(MEMORIES)}, got {memory!r}")
    if not tones_about_agent:
        return None
    if memory == "tally":
        return 1 if sum(valence(t) for t in tones_about_agent) >= 0 else -1
    for tone in reversed(tones_about_agent):
        value = valence(tone)
        if value:
            return value
    return 1


def decide(norm: str, recipient_reputation: int | None) -> str:
    """``"cooperate"`` unless the recipient's reputation is bad (strangers are helped)."""
    _check_norm(norm)
    return "cooperate" if is_good(recipient_reputation) else "defect"
