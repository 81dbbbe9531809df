import gc
from types import MappingProxyType

import pytest

from socialsim.bus import ENV, EVERYONE, MessageBus, freeze, team, thaw


def make_bus() -> MessageBus:
    return MessageBus(
        ["alice", "bob", "eve"], teams={"encoders": ["alice", "bob"], "interceptors": ["eve"]}
    )


def test_team_message_never_reaches_the_other_team():
    bus = make_bus()
    bus.publish(
        turn=1,
        sender=ENV,
        to=team("encoders"),
        channel="team",
        kind="keywords",
        payload={"keywords": ["a"]},
    )
    assert [m.kind for m in bus.read("alice")] == ["keywords"]
    assert [m.kind for m in bus.read("bob")] == ["keywords"]
    assert bus.read("eve") == []
    assert bus.audience_of(0) == frozenset({"alice", "bob"})


def test_read_returns_only_messages_new_since_last_look():
    bus = make_bus()
    bus.publish(turn=1, sender=ENV, to=EVERYONE, channel="public", kind="a")
    assert [m.kind for m in bus.read("eve")] == ["a"]
    bus.publish(turn=1, sender=ENV, to=["eve"], channel="private", kind="b")
    bus.publish(turn=2, sender="alice", to=["bob"], channel="private", kind="c")
    assert [m.kind for m in bus.peek("eve")] == ["b"]
    assert [m.kind for m in bus.read("eve")] == ["b"]
    assert bus.read("eve") == []
    assert [m.kind for m in bus.read("bob")] == ["a", "c"]


def test_what_an_agent_could_see_by_turn_is_exact_on_a_hand_built_log():
    bus = make_bus()
    bus.publish(turn=1, sender=ENV, to=EVERYONE, channel="public", kind="m0")
    bus.publish(turn=1, sender=ENV, to=team("encoders"), channel="team", kind="m1")
    bus.publish(turn=2, sender=ENV, to=["eve"], channel="private", kind="m2")
    bus.publish(turn=2, sender="bob", to=["alice", "eve"], channel="chat", kind="m3")
    bus.publish(turn=3, sender=ENV, to=EVERYONE, channel="public", kind="m4")
    assert [m.id for m in bus.visible_to("eve", 1)] == [0]
    assert [m.id for m in bus.visible_to("eve", 2)] == [0, 2, 3]
    assert [m.id for m in bus.visible_to("alice", 2)] == [0, 1, 3]
    assert [m.id for m in bus.visible_to("bob", 3)] == [0, 1, 4]
    assert [m.id for m in bus.visible_to("bob")] == [0, 1, 4]
    assert bus.audience_of(3) == frozenset({"alice", "eve"})
    assert bus.audience_of(4) == frozenset({"alice", "bob", "eve"})


def test_messages_are_immutable_once_published():
    bus = make_bus()
    payload = {"hints": ["sky", "sea"], "nested": {"x": 1}}
    message = bus.publish(
        turn=1, sender=ENV, to=EVERYONE, channel="public", kind="hints", payload=payload
    )
    payload["hints"].append("changed")  # the caller's dict is not the message's
    assert message.payload["hints"] == ("sky", "sea")
    with pytest.raises(TypeError):
        message.payload["hints"] = ()
    with pytest.raises(TypeError):
        message.payload["nested"]["x"] = 2
    with pytest.raises(AttributeError):
        message.kind = "other"


def test_message_round_trips_through_json():
    bus = make_bus()
    message = bus.publish(
        turn=4,
        sender="bob",
        to=["alice"],
        channel="chat",
        kind="note",
        payload={"a": [1, {"b": None}]},
    )
    data = message.to_json()
    assert data == {
        "id": 0,
        "turn": 4,
        "sender": "bob",
        "to": ["alice"],
        "channel": "chat",
        "kind": "note",
        "payload": {"a": [1, {"b": None}]},
    }
    assert type(message).from_json(data) == message


@pytest.mark.parametrize(
    ("to", "fragment"),
    [
        ("team:nobody", "unknown team 'nobody'"),
        (["mallory"], "unknown agents ['mallory']"),
        ("all", "is not an audience"),
    ],
)
def test_unknown_audience_is_a_clear_error(to, fragment):
    bus = make_bus()
    with pytest.raises(ValueError, match="to: ") as error:
        bus.publish(turn=1, sender=ENV, to=to, channel="c", kind="k")
    assert fragment in str(error.value)
    assert bus.log == ()


def test_payload_must_be_json():
    bus = make_bus()
    with pytest.raises(TypeError, match=r"payload\.when: set is not JSON-serialisable"):
        bus.publish(turn=1, sender=ENV, to=EVERYONE, channel="c", kind="k", payload={"when": {1}})
    assert bus.log == ()


def test_a_trusted_publishers_frozen_payload_is_kept_as_it_is():
    bus = make_bus()
    payload = freeze({"hints": ["sky", "sea"]})
    message = bus.publish(
        turn=1,
        sender=ENV,
        to=EVERYONE,
        channel="public",
        kind="hints",
        payload=payload,
        frozen=True,
    )
    assert message.payload is payload
    assert message.to_json()["payload"] == {"hints": ["sky", "sea"]}


def test_reading_for_an_agent_the_bus_does_not_know_is_a_clear_error():
    bus = make_bus()
    with pytest.raises(ValueError, match="agent: unknown agent 'mallory'"):
        bus.read("mallory")
    with pytest.raises(ValueError, match="agent: unknown agent 'mallory'"):
        bus.visible_to("mallory")


def test_a_log_of_flat_payloads_holds_nothing_the_garbage_collector_walks():
    # A full collection walks every tracked object; an episode's log at a few hundred agents
    # is hundreds of thousands of messages, so the bus keeps them untracked until read.
    bus = make_bus()
    gc.collect()
    before = len(gc.get_objects())
    for turn in range(1, 1001):
        bus.post(turn, EVERYONE, "gossip", "gossip", {"author": "alice", "tone": "neutral"})
        bus.post(turn, ("bob", "eve"), "private", "action", {"actor": "alice", "amount": 1.5})
    gc.collect()
    assert len(gc.get_objects()) - before < 20  # the bus's lists, not 2,000 messages
    assert len(bus.log) == 2000  # made on demand, as the readers' views are
    # once the bus has a reader, each message is made as it is posted (and so is tracked)
    read = make_bus()
    read.read("bob")
    gc.collect()
    before = len(gc.get_objects())
    for turn in range(1, 1001):
        read.post(turn, EVERYONE, "gossip", "gossip", {"author": "alice", "tone": "neutral"})
    gc.collect()
    assert len(gc.get_objects()) - before >= 1000
    assert len(read.read("bob")) == 1000


def test_a_message_is_made_once_for_all_its_readers_and_reads_as_published():
    bus = make_bus()
    bus.post(1, EVERYONE, "public", "rules", {"rounds": 3, "agents": ("alice", "bob", "eve")})
    bus.post(1, ("alice", "eve"), "private", "match", {"roles": {"alice": "donor"}, "round": 1})
    alice, eve = bus.read("alice"), bus.read("eve")
    assert alice == eve and all(a is e for a, e in zip(alice, eve, strict=True))
    assert [m.id for m in alice] == [0, 1] and bus.read("bob")[0] is alice[0]
    with pytest.raises(TypeError):
        alice[1].payload["roles"]["alice"] = "recipient"
    fields = bus.fields()  # what the record's encoder reads: the plain values posted
    assert [(f["id"], f["turn"], f["sender"], f["to"], f["kind"]) for f in fields] == [
        (0, 1, ENV, EVERYONE, "rules"),
        (1, 1, ENV, ("alice", "eve"), "match"),
    ]
    assert [f["payload"] for f in fields] == [
        {"rounds": 3, "agents": ("alice", "bob", "eve")},
        {"roles": {"alice": "donor"}, "round": 1},
    ]
    assert [thaw(f["payload"]) for f in fields] == [m.to_json()["payload"] for m in bus.log]


def test_an_env_post_to_an_unknown_audience_is_a_clear_error_and_logs_nothing():
    bus = make_bus()
    with pytest.raises(ValueError, match=r"to: unknown agents \['mallory'\]"):
        bus.post(1, ("mallory",), "private", "k", {})
    with pytest.raises(ValueError, match="to: 'alice' is not an audience"):
        bus.post(1, "alice", "private", "k", {})
    assert bus.log == () and bus.fields() == []


def test_messages_posted_once_the_bus_has_readers_read_as_those_made_at_reading():
    lazy, eager = make_bus(), make_bus()
    eager.read("bob")  # a reader: from now on each message is made as it is posted
    for bus in (lazy, eager):
        bus.post(1, EVERYONE, "public", "rules", {"rounds": 2})
        bus.post(1, ("alice", "bob"), "private", "match", {"roles": {"alice": "donor"}})
        bus.post(1, "team:encoders", "team", "keywords", {"keywords": ("sky", "sea")})
        bus.post(1, ("bob", "bob"), "private", "note", {"n": 1})  # named twice, got once
    for agent in ("alice", "bob", "eve"):
        assert eager.read(agent) == lazy.read(agent) and eager.peek(agent) == []
    assert [m.id for m in eager.visible_to("bob")] == [0, 1, 2, 3]
    assert eager.log == lazy.log and eager.fields() == lazy.fields()
    alice, bob = eager.visible_to("alice"), eager.visible_to("bob")
    assert alice[1] is bob[1] and alice[0] is bob[0]  # one message for all its readers
    with pytest.raises(TypeError):
        bob[1].payload["roles"]["alice"] = "recipient"


def test_an_env_named_view_is_for_the_envs_own_messages_not_another_publishers():
    shallow = {"note": MappingProxyType}  # the env's notes hold only scalars
    for readers in (False, True):
        bus = MessageBus(["alice", "bob"], views=shallow)
        if readers:
            bus.read("bob")
        bus.publish(turn=1, sender="alice", to=["bob"], channel="chat", kind="note",
                    payload={"inner": {"x": 1}})  # fmt: skip
        (note,) = bus.read("bob")
        with pytest.raises(TypeError):
            note.payload["inner"]["x"] = 2  # still deeply read-only
