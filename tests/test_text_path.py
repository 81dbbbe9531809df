"""The language agent's path through a gossip env: dict actions decoded by the codec and
inbox reads from the bus, in every spelling the rules accept."""

import numpy as np
import pytest
from socialsim.envs.gossip.actions import ActionCodec
from socialsim.envs.gossip.protocol import GOSSIP, MARKET, PRISONERS

from socialsim.bus import ENV, EVERYONE, MessageBus, team

CODEC, MASKS = ActionCodec(PRISONERS), PRISONERS.masks()


def decode(action, decision="play", codec=CODEC, masks=MASKS):
    return codec.decode("agent_0", decision, action, masks[decision], lambda: 0.0)


@pytest.mark.parametrize(
    "name", ["C", " C ", "cooperate", "Cooperate", " COOPERATE\n", 1, np.int64(1)]
)
def test_every_spelling_of_cooperate_is_the_move_c(name):
    assert decode({"action": name, "justification": "why"}) == ("C", None)


@pytest.mark.parametrize("name", ["D", "defect", " Defect ", 0, np.int8(0)])
def test_every_spelling_of_defect_is_the_move_d(name):
    assert decode({"action": name}) == ("D", None)


def test_a_name_is_matched_as_given_then_lower_cased_never_upper_cased():
    codec, masks = ActionCodec(MARKET), MARKET.masks()
    assert decode({"action": "H"}, "sell", codec, masks) == ("H", None)
    assert decode({"action": " Customised "}, "buy", codec, masks) == ("c", None)
    assert decode({"action": "S"}, "buy", codec, masks) == ("s", None)
    with pytest.raises(ValueError, match="action name must be one of H, L, c, s, none"):
        decode({"action": "h"}, "sell", codec, masks)
    with pytest.raises(ValueError, match="got 'c'"):
        decode({"action": "c"})  # the prisoner's dilemma's C has no lower-case spelling


@pytest.mark.parametrize(
    ("tone", "value"),
    [("praising", 0), (" Praising ", 0), ("CRITICISM", 4), (2, 2), (np.int64(3), 3)],
)
def test_a_tone_by_name_or_index_is_that_tone_with_its_message(tone, value):
    assert decode({"tone": tone, "message": "hi"}, GOSSIP) == ((value, "hi"), None)


@pytest.mark.parametrize(
    ("action", "named"),
    [
        ({"tone": True}, "tone must be"),
        ({"tone": np.True_}, "tone must be"),
        ({"tone": 5}, "tone must be"),
        ({"tone": "sarcastic"}, "tone must be"),
        ({"tone": 1, "message": 7}, "message must be a string"),
        ({"tone": "sarcastic", "message": 7}, "tone must be"),  # the tone is checked first
    ],
)
def test_a_malformed_gossip_action_names_its_field(action, named):
    with pytest.raises(ValueError, match=f"agent_0: {named}"):
        decode(action, GOSSIP)


@pytest.mark.parametrize("name", [True, 2, "maybe", None, 1.0])
def test_a_move_that_is_no_move_name_or_index_is_an_error(name):
    with pytest.raises(ValueError, match="agent_0"):
        decode({"action": name})


def test_a_tone_given_for_a_move_falls_back_to_defect_and_says_why():
    assert decode({"tone": "praising"}) == (
        "D",
        {"reason": "action 2 (praising) is not allowed for a play decision", "fallback": "D"},
    )


def test_a_read_merges_the_public_team_and_private_streams_in_publication_order():
    bus = MessageBus(["alice", "bob"], teams={"red": ["alice"]})
    for kind, to in [("p1", ["alice"]), ("all", EVERYONE), ("t", team("red")), ("p2", ["alice"])]:
        bus.publish(turn=1, sender=ENV, to=to, channel="c", kind=kind)
    assert [m.id for m in bus.peek("alice")] == [0, 1, 2, 3]
    assert [m.kind for m in bus.read("alice")] == ["p1", "all", "t", "p2"]
    bus.publish(turn=2, sender=ENV, to=["alice"], channel="c", kind="p3")
    bus.publish(turn=2, sender=ENV, to=EVERYONE, channel="c", kind="all2")
    assert [m.kind for m in bus.read("alice")] == ["p3", "all2"]
    assert bus.read("alice") == []
    assert [m.kind for m in bus.read("bob")] == ["all", "all2"]


def test_a_read_after_a_quiet_stream_keeps_the_other_streams_cursors():
    bus = MessageBus(["alice", "bob"])
    bus.publish(turn=1, sender=ENV, to=["alice"], channel="c", kind="a")
    assert [m.kind for m in bus.read("alice")] == ["a"]
    bus.publish(turn=1, sender=ENV, to=EVERYONE, channel="c", kind="b")
    assert [m.kind for m in bus.read("alice")] == ["b"]
    bus.publish(turn=2, sender=ENV, to=["alice"], channel="c", kind="c")
    assert [m.kind for m in bus.read("alice")] == ["c"]
