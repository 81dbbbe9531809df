"""The gossip theory-of-mind probes: ground truth pinned on hand-built records, the scores,
and the probes asked of scripted bounds in played games."""

from __future__ import annotations

import json

from socialsim.envs.gossip import tom, tom_truth

from socialsim.analysis.gossip_tom import probe_scores, scored_entries
from socialsim.episode import EpisodeSpec
from socialsim.records import EpisodeRecord
from socialsim.runner import play_episode

AGENTS = ["a", "b", "c", "d"]


def _message(i, turn, to, kind, payload):
    return {
        "id": i,
        "turn": turn,
        "sender": "env",
        "to": to,
        "channel": "x",
        "kind": kind,
        "payload": payload,
    }


def _action(i, round_, actor, target, action):
    payload = {"round": round_, "actor": actor, "target": target, "action": action}
    return _message(i, round_, [target], "action", payload)


def _gossip(i, round_, author, about, tone, to="*"):
    payload = {"round": round_, "author": author, "about": about, "tone": tone, "message": None}
    return _message(i, round_, to, "gossip", payload)


def _record(messages, probes=(), game="donation", seats=None):
    return EpisodeRecord(
        experiment="t",
        cell={},
        episode=0,
        seed=0,
        env_id=f"{game}_v0",
        env_kwargs={},
        form="parallel",
        seats=seats or {a: {"kind": "gossip_oracle"} for a in AGENTS},
        messages=messages,
        summary={"game": game},
        probes=list(probes),
    )


# a cooperates with b, b praises a; c defects on a, a criticises c where only a and c see it;
# b cooperates with c, and c criticises b anyway (a lie)
DONATION = [
    _message(0, 1, "*", "rules", {"game": "donation", "agents": AGENTS}),
    _action(1, 1, "a", "b", "cooperate"),
    _gossip(2, 1, "b", "a", "praising"),
    _action(3, 2, "c", "a", "defect"),
    _gossip(4, 2, "a", "c", "criticism", to=["a", "c"]),
    _action(5, 3, "b", "c", "cooperate"),
    _gossip(6, 3, "c", "b", "criticism"),
]


def test_held_reputation_reads_only_the_tones_the_viewer_could_see():
    assert tom_truth.held_reputation(DONATION, "a", "c", "image_scoring", 7) == -1
    assert (
        tom_truth.held_reputation(DONATION, "b", "c", "image_scoring", 7) is None
    )  # hidden from b
    assert tom_truth.held_reputation(DONATION, "d", "a", "stern_judging", 7) == 1
    # before message 6 was delivered, a had heard nothing of b
    assert tom_truth.held_reputation(DONATION, "a", "b", "image_scoring", 6) is None
    assert tom_truth.held_reputation(DONATION, "a", "b", "image_scoring", 7) == -1


def test_gossip_truth_compares_the_tone_with_what_its_subject_did():
    assert tom_truth.gossip_truth(DONATION, "donation", 2) is True
    assert tom_truth.gossip_truth(DONATION, "donation", 4) is True
    assert tom_truth.gossip_truth(DONATION, "donation", 6) is False


def test_has_seen_is_the_audience_of_the_message():
    assert [tom_truth.has_seen(DONATION, who, 4) for who in AGENTS] == [True, False, True, False]
    assert all(tom_truth.has_seen(DONATION, who, 2) for who in AGENTS)


def test_moves_of_each_game_read_as_cooperate_or_defect():
    assert tom_truth.move_of(DONATION, "donation", "c", "a", 2) == "defect"
    assert tom_truth.move_of(DONATION, "donation", "a", "b", 1) == "cooperate"
    assert tom_truth.move_of(DONATION, "donation", "a", "c", 1) is None
    trust = [
        _action(0, 1, "x", "y", {"invest": 5.0}),
        _action(1, 1, "y", "x", {"return": 4.0}),
        _action(2, 2, "y", "x", {"invest": 0.0}),
        _action(3, 2, "x", "y", {"return": 0.0}),
    ]
    assert tom_truth.move_of(trust, "trust", "x", "y", 1) == "cooperate"
    assert tom_truth.move_of(trust, "trust", "y", "x", 1) == "defect"  # returned 4 of 5
    assert tom_truth.move_of(trust, "trust", "y", "x", 2) == "defect"
    assert tom_truth.move_of(trust, "trust", "x", "y", 2) == "cooperate"  # nothing was invested
    market = [_action(0, 1, "s", "b", "H"), _action(1, 1, "b", "s", "none")]
    assert tom_truth.move_of(market, "market", "s", "b", 1) == "cooperate"
    assert tom_truth.move_of(market, "market", "b", "s", 1) == "defect"
    prisoners = [_action(0, 1, "p", "q", "D"), _action(1, 1, "q", "p", "C")]
    assert tom_truth.move_of(prisoners, "prisoners", "p", "q", 1) == "defect"
    assert tom_truth.move_of(prisoners, "prisoners", "q", "p", 1) == "cooperate"


def test_truth_and_informed_of_each_probe_entry():
    record = _record(DONATION)
    base = {"seen": 7, "round": 4}
    cases = [
        ({"probe": "counterpart_move", "seat": "a", "about": "c", "round": 2}, "defect", False),
        ({"probe": "recipient_tone", "seat": "a", "author": "b", "round": 1}, "praising", False),
        (
            {
                "probe": "reputation",
                "seat": "d",
                "viewer": "a",
                "about": "c",
                "norm": "image_scoring",
            },
            "bad",
            False,
        ),
        (
            {
                "probe": "reputation",
                "seat": "c",
                "viewer": "a",
                "about": "c",
                "norm": "image_scoring",
            },
            "bad",
            True,
        ),
        (
            {
                "probe": "reputation",
                "seat": "d",
                "viewer": "b",
                "about": "c",
                "norm": "image_scoring",
            },
            "unrated",
            True,
        ),
        (
            {
                "probe": "will_help",
                "seat": "d",
                "viewer": "a",
                "about": "c",
                "norm": "image_scoring",
            },
            "defect",
            False,
        ),
        (
            {
                "probe": "will_help",
                "seat": "d",
                "viewer": "b",
                "about": "c",
                "norm": "stern_judging",
            },
            "cooperate",
            True,
        ),
        ({"probe": "gossip_true", "seat": "a", "gossip": 6}, "false", False),
        ({"probe": "gossip_true", "seat": "b", "gossip": 6}, "false", True),
        # the question does not show the audience: a narrowed one is not known
        ({"probe": "has_seen", "seat": "a", "gossip": 4, "viewer": "b"}, "no", False),
        ({"probe": "has_seen", "seat": "d", "gossip": 2, "viewer": "c"}, "yes", True),
    ]
    for entry, true, informed in cases:
        entry = {**base, **entry}
        assert tom_truth.truth(record, entry) == true, entry
        assert tom_truth.informed(record, entry) is informed, entry


def test_a_neutral_gossip_claims_nothing_and_is_not_scored():
    messages = [*DONATION, _gossip(7, 4, "d", "a", "neutral")]
    entry = {"probe": "gossip_true", "seat": "b", "gossip": 7, "seen": 8}
    assert tom_truth.truth(_record(messages), entry) is None
    assert probe_scores([_record(messages, [entry])]) == []


def test_scores_credit_abstentions_with_chance_beside_the_tricks():
    def asked(gossip, viewer, answer):
        return {
            "probe": "has_seen",
            "seat": "a",
            "gossip": gossip,
            "viewer": viewer,
            "seen": 7,
            "round": 4,
            "answer": answer,
        }

    # truths: no, yes, no, yes; the rule (public gossip: yes) is right on half
    entries = [asked(4, "b", "no"), asked(4, "c", "no"), asked(4, "d", None), asked(2, "d", "yes")]
    (row,) = probe_scores([_record(DONATION, entries)])
    assert row["agent"] == "gossip_oracle" and row["asked"] == row["items"] == 4
    assert row["item_set"] == "all" and row["balanced_on"] == "answer and rule"
    assert row["answered"] == 3 / 4
    assert row["score"] == 2 / 3
    assert row["score_over_asked"] == 2 / 4
    assert row["credited"] == (2 + 0.5) / 4  # the abstention earns chance
    assert row["chance"] == row["constant"] == row["rule"] == row["abstainer"] == 0.5
    assert row["informed"] == 1 / 4  # message 4's narrowed audience is not in the question
    assert row["oracle"] == (1 + 0.5 * 3) / 4
    assert row["best_trick"] == 0.5
    assert row["normalised"] == 1.0  # as good as the informed oracle


def test_parse_answer_takes_only_the_probes_words():
    assert tom.parse_answer("reputation", " Good. ") == "good"
    assert tom.parse_answer("reputation", "unknown") is None
    assert tom.parse_answer("has_seen", "") is None
    assert tom.parse_answer("recipient_tone", "criticism") == "criticism"
    assert tom.parse_answer("will_help", None) is None


def _spec(probes, seats=None, game="donation_v0"):
    seats = seats or {f"agent_{i}": {"kind": "gossip_oracle"} for i in range(6)}
    return EpisodeSpec(
        env_id=game,
        seed=3,
        seats=seats,
        env_kwargs={"n_agents": 6, "rounds": 12},
        probes=[{"name": name} for name in probes],
    )


def test_probes_never_enter_the_game():
    asked = play_episode(_spec(tom.GOSSIP_PROBES))
    quiet = play_episode(_spec(()))
    assert asked.status == quiet.status == "done"
    assert len(asked.probes) > 0 and quiet.probes == []
    assert asked.messages == quiet.messages and asked.steps == quiet.steps


def test_the_oracle_scores_one_wherever_its_inbox_holds_the_answer():
    seats = {f"agent_{i}": {"kind": "gossip_oracle"} for i in range(6)}
    seats["agent_1"] = seats["agent_4"] = {"kind": "gossip_random_answerer"}
    seats["agent_5"] = {"kind": "always_defect"}  # answers nothing: never asked
    record = play_episode(_spec(tom.GOSSIP_PROBES, seats))
    assert {e["seat"] for e in record.probes} <= {
        "agent_0",
        "agent_1",
        "agent_2",
        "agent_3",
        "agent_4",
    }
    oracle = [e for e in scored_entries(record) if e["seat"] in ("agent_0", "agent_2", "agent_3")]
    informed = [e for e in oracle if e["informed"]]
    assert {e["probe"] for e in informed} >= {tom.REPUTATION, tom.WILL_HELP, tom.HAS_SEEN}
    assert all(e["hit"] for e in informed)
    for e in oracle:  # moves not yet made: it abstains
        if e["probe"] in (tom.COUNTERPART_MOVE, tom.RECIPIENT_TONE):
            assert e["hit"] is None
    randoms = [e for e in scored_entries(record) if e["seat"] in ("agent_1", "agent_4")]
    assert randoms and all(e["hit"] is not None for e in randoms)


def test_both_forms_ask_the_same_questions_and_get_the_same_answers():
    seats = {f"agent_{i}": {"kind": "gossip_oracle"} for i in range(5)}
    entries = {}
    for form in ("parallel", "aec"):
        spec = EpisodeSpec(
            env_id="prisoners_v0",
            seed=1,
            seats=seats,
            env_kwargs={"n_agents": 5},
            form=form,
            probes=[{"name": name} for name in tom.GOSSIP_PROBES],
        )
        record = play_episode(spec)
        assert record.status == "done"
        # the AEC form asks a simultaneous move's questions one mover at a time: same entries
        entries[form] = sorted(json.dumps(e, sort_keys=True) for e in record.probes)
    assert entries["parallel"] == entries["aec"] and entries["aec"]
