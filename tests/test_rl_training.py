"""A short MaskablePPO run learns to help donors of good standing and refuse those of bad."""

import importlib.util
import json
from pathlib import Path

import pytest

from socialsim import cli, records

pytest.importorskip("sb3_contrib")

SCRIPT = Path(__file__).resolve().parent.parent / "experiments" / "train" / "donor.py"


def load_script():
    spec = importlib.util.spec_from_file_location("train_donor", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_a_12000_step_donor_judges_by_reputation_and_beats_both_baselines(tmp_path, capsys):
    """About a minute on 2 shared cores (12,000 learner steps, 60 evaluation episodes)."""
    donor = load_script()
    out = tmp_path / "train"
    status = donor.main(
        ["--timesteps", "12000", "--seed", "0", "--episodes", "20", "--out", str(out)]
    )
    printed = capsys.readouterr().out
    result = json.loads((out / "result.json").read_text())
    policy, cooperate, defect = result["rl"], result["always_cooperate"], result["always_defect"]
    assert policy["episodes"] == cooperate["episodes"] == defect["episodes"] == 20
    assert policy["n_good"] >= 50 and policy["n_bad"] >= 20
    assert policy["coop_good"] >= 0.8
    assert policy["coop_bad"] <= 0.2
    assert policy["mean_return"] > cooperate["mean_return"] > defect["mean_return"]
    assert status == 0 and "success:" in printed
    assert (out / "donor.zip").is_file() and (out / "training_curve.png").stat().st_size > 10_000
    # the evaluation is an ordinary results directory: the report reads it
    held = records.read_records(out / "eval")
    assert len(held) == 60 and {r.seats["agent_0"]["kind"] for r in held} == {
        "rl",
        "always_cooperate",
        "always_defect",
    }
    assert cli.main(["report", str(out / "eval")]) == 0
    assert list((out / "eval").glob("*.csv")) or list((out / "eval").rglob("*.csv"))


def test_cooperation_by_standing_reads_the_tones_published_before_the_round():
    donor = load_script()
    record = records.EpisodeRecord.from_json(
        {
            "experiment": "",
            "cell": {},
            "episode": 0,
            "seed": 0,
            "env_id": "donation_v0",
            "env_kwargs": {},
            "form": "parallel",
            "seats": {},
            "status": "done",
            "error": None,
            "messages": [
                gossip(1, "agent_2", "criticism"),
                gossip(2, "agent_2", "praising"),  # after round 2's donations
                gossip(1, "agent_3", "praising"),
            ],
            "steps": [],
            "returns": {},
            "summary": {
                "interactions": [
                    donation(2, "agent_2", "defect"),  # bad: criticised in round 1
                    donation(3, "agent_2", "cooperate"),  # good again: praised in round 2
                    donation(2, "agent_3", "cooperate"),  # good
                    donation(1, "agent_4", "cooperate"),  # nothing said yet: a stranger
                ]
            },
            "counters": {},
            "events": {},
            "probes": [],
            "timing": {},
        }
    )
    assert donor.cooperation_by_standing(record, "agent_0") == {
        "good": [True, True],
        "bad": [False],
        "stranger": [True],
    }


def gossip(round_, about, tone):
    payload = {"round": round_, "author": "agent_9", "about": about, "tone": tone, "message": None}
    return {"kind": "gossip", "payload": payload}


def donation(round_, recipient, action):
    return {"round": round_, "donor": "agent_0", "recipient": recipient, "action": action}
