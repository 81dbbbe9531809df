"""The scripted players of the gossip games, alone and in populations (through the runner)."""

from __future__ import annotations

import pytest
from socialsim.agents.scripted import gossip as scripted
from socialsim.envs.gossip.protocol import COOPERATIVE_RETURN_SHARE

from socialsim import registry
from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode

KINDS = [
    "always_cooperate",
    "always_defect",
    "random_donor",
    "entrant",
    "image_scoring",
    "simple_standing",
    "stern_judging",
    "liar",
]
GAMES = [
    ("donation_v0", {}, 9),
    ("prisoners_v0", {}, 5),
    ("trust_v0", {}, 5),
    ("market_v0", {}, 12),
]


def run(env_id, seats, seed=0, form="parallel", **kwargs):
    record = play_episode(
        EpisodeSpec(env_id=env_id, seed=seed, seats=seats, env_kwargs=kwargs, form=form)
    )
    assert record.status == "done", record.error
    return record


def population(n, default, **named):
    seats = {f"agent_{i}": {"kind": default} for i in range(n)}
    seats.update(
        {seat: {"kind": kind} if isinstance(kind, str) else kind for seat, kind in named.items()}
    )
    return seats


def test_every_kind_is_registered():
    assert set(scripted.KINDS) == set(KINDS)
    for kind in KINDS:
        assert registry.agent_class(kind).kind == kind


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("env_id", "kwargs", "n"), GAMES, ids=[g[0] for g in GAMES])
def test_every_kind_plays_every_game_without_invalid_actions(kind, env_id, kwargs, n):
    for form in ("parallel", "aec"):
        record = run(env_id, population(n, kind), form=form, **kwargs)
        assert all(c["invalid_actions"] == 0 for c in record.counters.values())


def test_entrant_always_defects_and_gossips_no_comment():
    record = run(
        "donation_v0", population(9, "always_cooperate", agent_8="entrant"), entrant="isolated"
    )
    interactions = record.summary["interactions"]
    assert [i["action"] for i in interactions if i["donor"] == "agent_8"] == ["defect"] * 4
    assert {(i["tone"], i["message"]) for i in interactions if i["recipient"] == "agent_8"} == {
        ("neutral", "No comment")
    }


def test_with_gossip_the_isolated_entrant_is_refused_after_its_first_defection():
    on = run("donation_v0", population(9, "image_scoring", agent_8="entrant"), entrant="isolated")
    off = run(
        "donation_v0",
        population(9, "image_scoring", agent_8="entrant"),
        entrant="isolated",
        gossip=False,
    )

    def donations_to(r):
        return [i["action"] for i in r.summary["interactions"] if i["recipient"] == "agent_8"]

    assert donations_to(on) == ["defect"] * 4
    assert donations_to(off) == ["cooperate"] * 4
    assert on.returns.get("agent_8", 0.0) == 0.0 and off.returns["agent_8"] == 20.0


@pytest.mark.parametrize("norm", ["image_scoring", "simple_standing", "stern_judging"])
def test_gossip_keeps_discriminators_cooperating_and_makes_defection_not_pay(norm):
    seats = population(9, norm, agent_8="entrant")
    kwargs = {"entrant": "joins", "rounds": 24}
    on = [run("donation_v0", seats, seed=s, **kwargs) for s in range(3)]
    off = [run("donation_v0", seats, seed=s, gossip=False, **kwargs) for s in range(3)]

    def pool_cooperation(records):
        acts = [
            i["action"] == "cooperate"
            for r in records
            for i in r.summary["interactions"]
            if "agent_8" not in (i["donor"], i["recipient"])
        ]
        return sum(acts) / len(acts)

    def mean_return(records, agents):
        return sum(r.returns.get(a, 0.0) for r in records for a in agents) / (
            len(records) * len(agents)
        )

    pool = [f"agent_{i}" for i in range(8)]
    assert pool_cooperation(on) == 1.0
    assert mean_return(on, ["agent_8"]) < mean_return(off, ["agent_8"])
    # without gossip nobody can tell: the defector out-earns the cooperators per interaction
    entrant_off = mean_return(off, ["agent_8"])
    assert entrant_off > 0
    assert mean_return(on, ["agent_8"]) < mean_return(on, pool)


def test_stern_judges_cooperate_and_praise_each_other_beside_an_entrant():
    record = run(
        "donation_v0", population(9, "stern_judging", agent_8="entrant"), entrant="joins", rounds=24
    )
    for i in record.summary["interactions"]:
        if i["recipient"] != "agent_8" and i["donor"] != "agent_8":
            assert i["action"] == "cooperate" and i["tone"] == "praising"


def test_liars_publish_their_mode():
    seats = population(
        9,
        "always_cooperate",
        agent_0={"kind": "liar", "mode": "always_criticise"},
        agent_1={"kind": "liar", "mode": "always_praise"},
        agent_2={"kind": "liar", "mode": "invert"},
        agent_8="always_defect",
    )
    record = run("donation_v0", seats)
    tones = {}
    for i in record.summary["interactions"]:
        tones.setdefault(i["recipient"], set()).add((i["action"], i["tone"]))
    assert {t for _, t in tones["agent_0"]} == {"criticism"}
    assert {t for _, t in tones["agent_1"]} == {"praising"}
    assert tones["agent_2"] <= {("cooperate", "criticism"), ("defect", "praising")}


def test_a_lying_critic_turns_image_scorers_against_honest_cooperators():
    honest = run("donation_v0", population(9, "image_scoring"))
    lied = run(
        "donation_v0",
        population(9, "image_scoring", agent_0={"kind": "liar", "mode": "always_criticise"}),
    )

    def rate(r):
        return sum(i["action"] == "cooperate" for i in r.summary["interactions"]) / 36

    assert rate(honest) == 1.0 and rate(lied) < 1.0


def test_bad_agent_parameters_raise_naming_them():
    with pytest.raises(ValueError, match="p"):
        scripted.RandomDonor(p=1.5)
    with pytest.raises(ValueError, match="mode"):
        scripted.Liar(mode="sometimes")
    with pytest.raises(ValueError, match="norm"):
        scripted.Liar(norm="tit_for_tat")


def test_random_donor_is_seeded():
    seats = {f"agent_{i}": {"kind": "random_donor", "p": 0.5} for i in range(9)}
    a, b = run("donation_v0", seats, seed=4), run("donation_v0", seats, seed=4)
    assert a.content() == b.content()
    actions = [i["action"] for i in a.summary["interactions"]]
    assert 0 < actions.count("cooperate") < 36


def test_trust_cooperators_invest_everything_and_return_twice_the_investment():
    record = run("trust_v0", population(5, "always_cooperate"), gossip=False)
    first = record.summary["interactions"][0]
    assert first["investment"] == 5.0 and first["returned"] == 10.0
    assert first["payoffs"] == {"agent_0": 5.0, "agent_1": 5.0}


@pytest.mark.parametrize("multiplier", [1.5, 2])
def test_trust_cooperators_return_their_share_of_what_they_received_at_any_multiplier(multiplier):
    record = run("trust_v0", population(5, "always_cooperate"), multiplier=multiplier)
    assert all(c["invalid_actions"] == 0 for c in record.counters.values())
    (rules,) = [m for m in record.messages if m["kind"] == "rules"]
    interactions = record.summary["interactions"]
    assert len(interactions) == rules["payload"]["rounds"] == 10  # every pair of 5, to the end
    assert interactions[0]["investment"] == 5.0
    for i in interactions:
        assert i["investment"] > 0
        assert i["returned"] == COOPERATIVE_RETURN_SHARE * multiplier * i["investment"]
    # the first match: 5 invested, multiplier x 5 received, 2/3 of that returned
    first = interactions[0]
    received = multiplier * 5.0
    assert first["returned"] == {1.5: 5.0, 2: 6.666666666666666}[multiplier]
    assert first["payoffs"] == {
        first["investor"]: first["returned"] - 5.0,
        first["responder"]: received - first["returned"],
    }


def test_market_discriminating_buyers_switch_to_standard_after_bad_gossip():
    seats = population(12, "image_scoring", agent_0="always_defect")
    record = run("market_v0", seats)
    deals = [i for i in record.summary["interactions"] if i["seller"] == "agent_0"]
    assert deals[0]["choice"] == "c" and deals[0]["tone"] == "criticism"
    assert {d["choice"] for d in deals[1:]} == {"s"}


@pytest.mark.parametrize(("env_id", "kwargs", "n"), GAMES, ids=[g[0] for g in GAMES])
def test_parallel_and_aec_forms_play_the_same_episode(env_id, kwargs, n):
    seats = population(n, "stern_judging", agent_1={"kind": "random_donor", "p": 0.5})
    parallel = run(env_id, seats, seed=2, **kwargs)
    aec = run(env_id, seats, seed=2, form="aec", **kwargs)
    assert parallel.summary == aec.summary
    assert parallel.messages == aec.messages
    assert {a: r for a, r in parallel.returns.items() if r} == {
        a: r for a, r in aec.returns.items() if r
    }


def test_prisoners_isolated_entrant_is_the_first_player_against_each_agent_in_turn():
    record = run(
        "prisoners_v0", population(5, "image_scoring", agent_4="entrant"), entrant="isolated"
    )
    matches = [(i["players"], i["actions"]) for i in record.summary["interactions"]]
    assert [m[0] for m in matches] == [["agent_4", f"agent_{k}"] for k in range(4)]
    assert [m[1][f"agent_{k}"] for k, m in enumerate(matches)] == ["C", "D", "D", "D"]


@pytest.mark.parametrize(
    "discount, returns",
    [
        (0.2, {"agent_0": 0.0, "agent_1": 0.0, "agent_2": 0.0, "agent_3": 0.0}),  # 0.2 * 3 < 1
        (0.9, {"agent_0": 25.0, "agent_1": 35.0, "agent_2": 35.0, "agent_3": 55.0}),
    ],
)
def test_a_reputation_seeker_invests_in_the_trust_game_when_the_multiplier_makes_it_pay(
    discount, returns
):
    """The trust game's terms are a unit invested against ``multiplier`` for the responder (the
    protocol's help_terms), not the donation game's ``benefit``, which the trust game lacks:
    with discount * multiplier > 1 the seeker trusts as a discriminator does."""
    seats = {f"agent_{i}": {"kind": "reputation_seeker"} for i in range(4)}
    kwargs = {"n_agents": 4, "gossip": True, "discount": discount}
    record = play_episode(EpisodeSpec("trust_v0", 0, seats, kwargs))
    assert record.returns == returns
