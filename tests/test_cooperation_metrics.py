"""Cooperation metrics over hand-built episode records (the summary schema of the gossip envs)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from socialsim.envs.gossip.protocol import TONES, market_payoffs

from socialsim.analysis import cooperation as co
from socialsim.analysis import dynamics as dy
from socialsim.analysis import entrant as en
from socialsim.analysis import figures, tables
from socialsim.records import EpisodeRecord

# The reference's N=9 donation order (donor, recipient), by agent index.
ALIGN_9 = [
    (0, 1), (2, 0), (0, 3), (4, 0), (0, 5), (6, 0), (0, 7), (8, 0), (1, 2), (3, 1), (1, 4), (5, 1),
    (1, 6), (7, 1), (1, 8), (2, 3), (4, 2), (2, 5), (6, 2), (2, 7), (8, 2), (3, 4), (5, 3), (3, 6),
    (7, 3), (3, 8), (4, 5), (6, 4), (4, 7), (8, 4), (5, 6), (7, 5), (5, 8), (6, 7), (8, 6), (7, 8),
]  # fmt: skip
# The reference's N=5 prisoner's dilemma round robin.
CIRCLE_5 = [(1, 4), (2, 3), (0, 4), (1, 2), (0, 3), (4, 2), (0, 2), (3, 1), (0, 1), (3, 4)]


def record(summary, seats=None, messages=(), cell=None, episode=0) -> EpisodeRecord:
    agents = summary["agents"]
    return EpisodeRecord(
        experiment="test",
        cell=cell or {},
        episode=episode,
        seed=episode,
        env_id=f"{summary['game']}_v0",
        env_kwargs={},
        form="parallel",
        seats=seats or {a: {"kind": "scripted"} for a in agents},
        messages=list(messages),
        summary=summary,
    )


def donation_record(
    choose, n=9, pairs=ALIGN_9, cost=1.0, benefit=5.0, tone=None, entrant=None, gossip=True, **extra
):
    """Play the donation rules by hand: ``choose(round, donor, recipient) -> action``."""
    agents = [f"agent_{i}" for i in range(n)]
    resources = dict.fromkeys(agents, 10.0)
    interactions, messages = [], []
    for round_, (d, r) in enumerate(pairs, start=1):
        donor, recipient = agents[d], agents[r]
        action = choose(round_, donor, recipient)
        before = (resources[donor], resources[recipient])
        cooperated = action == "cooperate"
        resources[donor] -= cost if cooperated else 0.0
        resources[recipient] += benefit if cooperated else 0.0
        published = (tone or (lambda a, *_: "praising" if a == "cooperate" else "criticism"))(
            action, donor, recipient
        )
        if not gossip:
            published = None
        interactions.append(
            {
                "round": round_,
                "donor": donor,
                "recipient": recipient,
                "action": action,
                "donor_before": before[0],
                "recipient_before": before[1],
                "donation": cost if cooperated else 0.0,
                "benefit": benefit if cooperated else 0.0,
                "ratio": (cost if cooperated else 0.0) / before[0],
                "tone": published,
                "message": None,
                "invalid": False,
            }
        )
        if published is not None:
            messages.append(
                {
                    "id": len(messages),
                    "turn": round_,
                    "sender": "env",
                    "to": "*",
                    "channel": "gossip",
                    "kind": "gossip",
                    "payload": {
                        "round": round_,
                        "author": recipient,
                        "about": donor,
                        "tone": published,
                        "message": "",
                    },
                }
            )
    summary = {
        "game": "donation",
        "n_agents": n,
        "cost": cost,
        "benefit": benefit,
        "initial_resources": 10.0,
        "discount": 0.99,
        "gossip": gossip,
        "agents": agents,
        "entrant": entrant,
        "resources": resources,
        "interactions": interactions,
        **extra,
    }
    return record(summary, messages=messages)


def everyone(action):
    return lambda *_: action


# -- reference values ------------------------------------------------------------------------------


def test_everyone_cooperating_in_n9_donation_ends_with_26_each_welfare_144_image_plus_4():
    rec = donation_record(everyone("cooperate"))
    assert co.agent_returns(rec) == {f"agent_{i}": 16.0 for i in range(9)}
    assert all(v == 26.0 for v in rec.summary["resources"].values())
    assert co.social_welfare(rec) == 144.0
    assert co.image_scores(rec) == {f"agent_{i}": 4 for i in range(9)}
    assert co.cooperation_rate(rec) == 1.0
    assert co.average_donation(rec) == {f"agent_{i}": 1.0 for i in range(9)}
    assert co.gini(rec.summary["resources"].values()) == 0.0


def test_everyone_defecting_in_n9_donation_has_image_minus_4_and_no_welfare():
    rec = donation_record(everyone("defect"))
    assert co.image_scores(rec) == {f"agent_{i}": -4 for i in range(9)}
    assert co.social_welfare(rec) == 0.0
    assert co.cooperation_rate(rec) == 0.0
    assert co.average_donation(rec) == {f"agent_{i}": 0.0 for i in range(9)}
    assert co.discounted_returns(rec) == {f"agent_{i}": 0.0 for i in range(9)}


def test_prisoners_n5_all_cooperate_returns_16_each():
    agents = [f"agent_{i}" for i in range(5)]
    interactions = [
        {
            "round": round_,
            "players": [agents[a], agents[b]],
            "actions": {agents[a]: "C", agents[b]: "C"},
            "payoffs": {agents[a]: 4.0, agents[b]: 4.0},
            "tones": {agents[a]: "praising", agents[b]: "praising"},
            "messages": {agents[a]: None, agents[b]: None},
        }
        for round_, (a, b) in enumerate(CIRCLE_5, start=1)
    ]
    summary = {"game": "prisoners", "n_agents": 5, "cost": 1.0, "benefit": 5.0, "discount": 0.99,
               "gossip": True, "agents": agents, "entrant": None, "interactions": interactions}  # fmt: skip
    rec = record(summary)
    assert co.agent_returns(rec) == dict.fromkeys(agents, 16.0)
    assert co.image_scores(rec) == dict.fromkeys(agents, 4)
    assert co.prisoners_cooperation_ratio(rec) == dict.fromkeys(agents, 1.0)
    assert co.social_welfare(rec) == 80.0
    assert co.reputation_accuracy(rec) == 1.0


def test_gini_of_one_to_five_is_0_266667():
    assert round(co.gini([1, 2, 3, 4, 5]), 6) == 0.266667


def test_gini_when_one_holds_everything_of_five_is_0_8():
    assert co.gini([0, 0, 0, 0, 10]) == pytest.approx(0.8, abs=1e-12)


def test_gini_of_equal_values_is_zero_and_of_no_values_is_an_error():
    assert co.gini([0, 0, 0]) == 0.0
    with pytest.raises(ValueError, match="values"):
        co.gini([])


def test_standard_error_uses_population_std_like_the_reference():
    values = [1.0, 2.0, 3.0, 4.0]
    assert co.standard_error(values) == np.std(values, ddof=0) / 2.0
    assert co.standard_error([]) == 0.0


# -- discounting -----------------------------------------------------------------------------------


def test_discounted_return_counts_the_agents_own_interactions_not_global_rounds():
    # agent_0 plays rounds 1 (donor, cooperates: -1), 3 (recipient, gets 5), 6 (donor, defects: 0)
    # and 9 (recipient, gets 5); with gamma 0.5 over its own k = 0..3: -1 + 2.5 + 0 + 0.625.
    pairs = [(0, 1), (2, 3), (2, 0), (1, 3), (3, 2), (0, 3), (1, 2), (3, 1), (1, 0)]
    defect_round = 6

    def choose(round_, donor, recipient):
        return "defect" if round_ == defect_round else "cooperate"

    rec = donation_record(choose, n=4, pairs=pairs)
    assert co.discounted_returns(rec, discount=0.5)["agent_0"] == 2.125
    # over the global round index it would have been -1 + 0.25*5 + 0 + 0.5**8*5
    assert co.discounted_returns(rec, discount=0.5)["agent_0"] != -1 + 1.25 + 5 * 0.5**8
    # gamma 1 is the undiscounted return, equal to final - initial resources
    assert co.discounted_returns(rec, discount=1.0) == co.agent_returns(rec)
    assert co.agent_returns(rec)["agent_0"] == 9.0


def test_discounted_return_defaults_to_the_episode_discount():
    rec = donation_record(everyone("cooperate"))
    # agent_0 is donor, recipient, donor... in rounds 1-8: -1, +5, -1, +5, ...
    expected = sum((-1.0 if k % 2 == 0 else 5.0) * 0.99**k for k in range(8))
    assert co.discounted_returns(rec)["agent_0"] == pytest.approx(expected, rel=1e-15)


def test_a_discount_outside_zero_one_is_rejected_naming_it():
    rec = donation_record(everyone("cooperate"))
    with pytest.raises(ValueError, match="discount"):
        co.discounted_returns(rec, discount=1.5)


def test_a_summary_without_its_discount_is_an_error_naming_the_setting():
    rec = donation_record(everyone("cooperate"))
    del rec.summary["discount"]
    with pytest.raises(ValueError, match="'discount'"):
        co.discounted_returns(rec)


def test_donation_ratio_is_over_the_resources_before_donating():
    rec = donation_record(everyone("cooperate"))
    # agent_0 donates in rounds 1, 3, 5, 7 holding 10, 14, 18, 22 before each.
    expected = np.mean([1 / 10, 1 / 14, 1 / 18, 1 / 22])
    assert co.average_donation_ratio(rec)["agent_0"] == pytest.approx(expected, rel=1e-15)


def test_cooperation_by_round_follows_each_round():
    rec = donation_record(lambda round_, *_: "cooperate" if round_ % 3 else "defect")
    by_round = co.cooperation_by_round(rec)
    assert list(by_round) == list(range(1, 37))
    assert by_round[3] == 0.0 and by_round[4] == 1.0
    assert co.cooperation_rate(rec) == 24 / 36


# -- entrant, reputation, tones --------------------------------------------------------------------


ISOLATED_9 = [(8, 0), (1, 8), (8, 2), (3, 8), (8, 4), (5, 8), (8, 6), (7, 8)]


def test_ostracism_counts_defections_against_the_entrant_after_its_gossiped_defection():
    # The entrant defects on agent_0 in round 1; of the later donors to it, agent_3 and agent_7
    # refuse, agent_1 (round 2) and agent_5 help: 2 of 4.
    refusing = {"agent_3", "agent_7"}

    def choose(round_, donor, recipient):
        if donor == "agent_8" or donor in refusing:
            return "defect"
        return "cooperate"

    rec = donation_record(choose, pairs=ISOLATED_9, entrant="agent_8")
    assert co.ostracism(rec) == 0.5


def test_ostracism_with_gossip_off_starts_at_the_first_defection():
    rec = donation_record(everyone("defect"), pairs=ISOLATED_9, entrant="agent_8", gossip=False)
    assert co.ostracism(rec) == 1.0
    assert co.tone_counts(rec) == dict.fromkeys(TONES, 0)
    assert math.isnan(co.reputation_accuracy(rec))


def test_ostracism_without_an_entrant_is_nan():
    assert math.isnan(co.ostracism(donation_record(everyone("cooperate"))))


def test_refusing_the_entrant_does_not_count_against_the_residents_cooperation():
    # A joining entrant: agent_8 plays the reference's order; it defects, the residents help
    # each other, and the donors after its first gossiped defection (round 8: 8 -> 0) refuse.
    def choose(round_, donor, recipient):
        if donor == "agent_8":
            return "defect"
        if recipient == "agent_8" and round_ > 8:
            return "defect"
        return "cooperate"

    rec = donation_record(choose, entrant="agent_8")
    split = en.cooperation_split(rec)
    assert split["cooperation_residents"] == 1.0
    assert split["cooperation_by_entrant"] == 0.0
    # agent_8 is recipient 4 times: round 15 (1->8), 26 (3->8), 33 (5->8), 36 (7->8), all after
    assert split["cooperation_to_entrant"] == 0.0
    assert split["cooperation_to_entrant_after"] == 0.0
    assert math.isnan(split["cooperation_to_entrant_before"])
    assert en.exposure_round(rec) == 8
    assert co.cooperation_rate(rec) == 28 / 36  # the blended rate the headline no longer shows


def test_without_an_entrant_everyone_is_a_resident_and_the_entrant_metrics_are_undefined():
    split = en.cooperation_split(donation_record(everyone("cooperate")))
    assert split["cooperation_residents"] == 1.0
    assert math.isnan(split["cooperation_to_entrant"])
    assert math.isnan(split["cooperation_by_entrant"])


def test_resources_gini_and_reputation_follow_the_rounds():
    # agent_8 defects on everyone, the others cooperate: ALIGN_9 order, one pair per round
    rec = donation_record(lambda r, d, rc: "defect" if d == "agent_8" else "cooperate")
    held = dy.resources_by_round(rec)
    assert held[1]["agent_0"] == 9.0 and held[1]["agent_1"] == 15.0
    assert held[36] == rec.summary["resources"]
    assert dy.gini_by_round(rec)[36] == co.gini(rec.summary["resources"].values())
    assert dy.reputation_accuracy_by_round(rec)[8] == 1.0  # agent_8's defection, criticised
    reputation = dy.reputation_by_round(rec)
    assert reputation[8]["agent_8"] == -1 and reputation[36]["agent_8"] == -4
    assert reputation[36]["agent_0"] == 4  # praised for each of its 4 donations
    table = tables.dynamics_report([rec])["dynamics"]
    assert len(table) == 36 and table["gini"].iloc[-1] == dy.gini_by_round(rec)[36]


def test_cooperation_by_round_is_split_by_who_chose_towards_whom():
    rec = donation_record(
        lambda r, d, rc: "defect" if "agent_8" in (d, rc) else "cooperate",
        pairs=ISOLATED_9 + [(0, 1)],
        entrant="agent_8",
    )
    by_round = en.cooperation_by_round_split(rec)
    assert by_round[1]["by_entrant"] == 0.0
    assert math.isnan(by_round[1]["residents"]) and math.isnan(by_round[1]["to_entrant"])
    assert by_round[2]["to_entrant"] == 0.0
    assert by_round[9]["residents"] == 1.0


def test_reputation_accuracy_scores_non_neutral_tones_against_the_donors_action():
    # a liar who praises every defection and a neutral gossiper who makes no claim
    def tone(action, donor, recipient):
        if recipient == "agent_0":
            return "neutral"
        return "praising"

    rec = donation_record(lambda round_, *_: "cooperate" if round_ % 2 else "defect", tone=tone)
    verdicts = []
    for i in rec.summary["interactions"]:
        if i["recipient"] != "agent_0":
            verdicts.append(i["action"] == "cooperate")
    assert co.reputation_accuracy(rec) == sum(verdicts) / len(verdicts)
    by_agent = co.reputation_accuracy_by_agent(rec)
    # agent_1 is donor in rounds 9, 11, 13, 15 (all cooperate) and never in front of agent_0
    assert by_agent["agent_1"] == 1.0
    # agent_2 is donor in rounds 2 (to agent_0: neutral), 16, 18, 20 (all defect, praised)
    assert by_agent["agent_2"] == 0.0


def test_tone_distribution_counts_published_gossip():
    rec = donation_record(lambda round_, *_: "cooperate" if round_ <= 27 else "defect")
    assert co.tone_counts(rec) == {
        "praising": 27,
        "neutral": 0,
        "mocking": 0,
        "complaint": 0,
        "criticism": 9,
    }
    assert co.tone_distribution(rec)["criticism"] == 0.25
    assert co.tones_by_action(rec)["defect"]["criticism"] == 9


# -- trust and market ------------------------------------------------------------------------------


def test_trust_investment_and_return_ratios():
    agents = ["agent_0", "agent_1"]
    interactions = [
        {"round": 1, "investor": "agent_0", "responder": "agent_1", "investor_before": 5.0, "responder_before": 5.0,
         "investment": 2.0, "returned": 3.0, "payoffs": {"agent_0": 1.0, "agent_1": 3.0}, "tones": {}, "messages": {}},
        {"round": 2, "investor": "agent_1", "responder": "agent_0", "investor_before": 8.0, "responder_before": 6.0,
         "investment": 0.0, "returned": 0.0, "payoffs": {"agent_1": 0.0, "agent_0": 0.0}, "tones": {}, "messages": {}},
    ]  # fmt: skip
    summary = {"game": "trust", "n_agents": 2, "multiplier": 3.0, "initial_resources": 5.0, "discount": 0.5,
               "agents": agents, "resources": {"agent_0": 6.0, "agent_1": 8.0}, "interactions": interactions}  # fmt: skip
    rec = record(summary)
    assert co.total_investment(rec) == {"agent_0": 2.0, "agent_1": 0.0}
    assert co.average_investment_ratio(rec) == {"agent_0": 0.4, "agent_1": 0.0}
    assert co.total_returned(rec) == {"agent_0": 0.0, "agent_1": 3.0}
    assert co.average_returned_ratio(rec) == {"agent_0": 0.0, "agent_1": 0.5}
    assert co.agent_returns(rec) == {"agent_0": 1.0, "agent_1": 3.0}
    assert co.discounted_returns(rec) == {"agent_0": 1.0, "agent_1": 3.0}
    assert co.gini(co.discounted_returns(rec).values()) == 0.25


def test_market_deal_rate_outcome_shares_and_global_discounting():
    sellers, buyers = ["agent_0", "agent_1"], ["agent_2", "agent_3"]
    plays = [("agent_0", "agent_2", "H", "c"), ("agent_1", "agent_3", "L", "s"),
             ("agent_0", "agent_3", "H", "none"), ("agent_1", "agent_2", "L", "s")]  # fmt: skip
    interactions = []
    for round_, (seller, buyer, quality, choice) in enumerate(plays, start=1):
        s, b = market_payoffs(quality, choice)
        interactions.append(
            {"round": round_, "seller": seller, "buyer": buyer, "quality": quality, "choice": choice,
             "payoffs": {seller: float(s), buyer: float(b)}, "tone": "praising" if quality == "H" else "complaint",
             "message": None}
        )  # fmt: skip
    summary = {
        "game": "market",
        "discount": 0.5,
        "agents": sellers + buyers,
        "entrant": None,
        "interactions": interactions,
    }
    rec = record(summary)
    assert co.deal_rate(rec) == 0.75
    assert co.outcome_shares(rec) == {"Hc": 0.25, "Hs": 0.0, "Lc": 0.0, "Ls": 0.5}
    assert co.outcome_shares(rec, given_deal=True) == {
        "Hc": 1 / 3,
        "Hs": 0.0,
        "Lc": 0.0,
        "Ls": 2 / 3,
    }
    assert co.welfare_per_round(rec) == (5 + 2 + 0 + 2) / 4
    assert co.discounted_welfare(rec) == 5 + 0.5 * 2 + 0.25 * 0 + 0.125 * 2
    assert co.agent_returns(rec) == {"agent_0": 2.0, "agent_1": 2.0, "agent_2": 4.0, "agent_3": 1.0}
    assert co.reputation_accuracy(rec) == 1.0


def test_a_metric_asked_of_the_wrong_game_names_the_game():
    rec = donation_record(everyone("cooperate"))
    with pytest.raises(ValueError, match="market"):
        co.deal_rate(rec)


# -- report and figures ----------------------------------------------------------------------------


def test_cooperation_report_has_a_block_per_grid_cell(tmp_path):
    records = []
    for episode in range(2):
        for gossip, action in ((True, "cooperate"), (False, "defect")):
            rec = donation_record(everyone(action))
            rec.cell = {"env.kwargs.gossip": gossip}
            rec.episode = episode
            rec.seats = {
                a: {"kind": "image_scoring" if a != "agent_8" else "always_defect"}
                for a in rec.summary["agents"]
            }
            records.append(rec)
    report = tables.cooperation_report(records)
    assert set(report) == {
        "cells",
        "episodes",
        "agents",
        "kinds",
        "rounds",
        "tones",
        "tones_by_action",
    }
    cells = report["cells"].set_index("cell")
    assert cells.loc["gossip=True", "social_welfare"] == 144.0
    assert cells.loc["gossip=False", "social_welfare"] == 0.0
    assert cells.loc["gossip=True", "n"] == 2
    kinds = report["kinds"].set_index(["cell", "kind"])
    assert kinds.loc[("gossip=True", "image_scoring"), "image_score"] == 4.0
    rounds = report["rounds"]
    assert len(rounds) == 2 * 36
    assert set(rounds["cooperation_rate"]) == {0.0, 1.0}
    paths = figures.plot_cooperation(report, tmp_path)
    assert [p.name for p in paths] == [
        "cooperation_by_round.png",
        "returns_by_kind.png",
        "tones_by_action.png",
    ]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)


# -- real episodes ---------------------------------------------------------------------------------


def play(env_id: str, n: int, kind: str, **env_kwargs) -> EpisodeRecord:
    from socialsim.episode import EpisodeSpec
    from socialsim.runner import play_episode

    seats = {f"agent_{i}": {"kind": kind} for i in range(n)}
    rec = play_episode(EpisodeSpec(env_id=env_id, seed=0, seats=seats, env_kwargs=env_kwargs))
    assert rec.status == "done", rec.error
    return rec


def test_a_real_n9_donation_episode_of_cooperators_gives_26_each_welfare_144_image_plus_4():
    rec = play("donation_v0", 9, "always_cooperate")
    agents = [f"agent_{i}" for i in range(9)]
    assert rec.summary["resources"] == dict.fromkeys(agents, 26.0)
    assert co.agent_returns(rec) == dict.fromkeys(agents, 16.0)
    assert co.social_welfare(rec) == 144.0
    assert co.image_scores(rec) == dict.fromkeys(agents, 4)
    assert co.agent_returns(rec) == rec.returns  # the runner's summed rewards agree
    assert co.tone_counts(rec)["praising"] == 36


def test_a_real_n5_prisoners_episode_of_cooperators_returns_16_each():
    rec = play("prisoners_v0", 5, "always_cooperate")
    assert co.agent_returns(rec) == {f"agent_{i}": 16.0 for i in range(5)}
    assert co.prisoners_cooperation_ratio(rec) == {f"agent_{i}": 1.0 for i in range(5)}


def test_the_report_covers_a_real_episode_of_every_game():
    records = [
        play("donation_v0", 9, "always_cooperate"),
        play("prisoners_v0", 5, "always_cooperate"),
        play("trust_v0", 5, "always_cooperate"),
        play("market_v0", 12, "always_cooperate"),
    ]
    for rec in records:
        rec.cell = {"env.id": rec.env_id}
    report = tables.cooperation_report(records)
    cells = report["cells"].set_index("game")
    assert cells.loc["donation", "social_welfare"] == 144.0
    assert cells.loc["prisoners", "social_welfare"] == 80.0
    assert cells.loc["market", "deal_rate"] == 1.0
    assert cells.loc["market", "share_Hc"] == 1.0
    assert cells.loc["market", "welfare_per_round"] == 5.0
    assert cells.loc["trust", "gini"] >= 0.0
    agents = report["agents"]
    trust = agents[agents["game"] == "trust"]
    assert (trust["average_investment_ratio"] == 1.0).all()  # cooperators invest everything
    assert set(report["rounds"]["cell"]) == {"id=donation_v0", "id=prisoners_v0"}
    tones = report["tones"].set_index(["cell", "tone"])
    assert tones.loc[("id=donation_v0", "praising"), "share"] == 1.0


def test_importing_the_metrics_loads_neither_pandas_nor_matplotlib():
    code = (
        "import sys, socialsim.analysis.cooperation; "
        "print(sorted({'pandas', 'matplotlib'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
