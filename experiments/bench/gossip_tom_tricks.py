"""What answerers that hold no beliefs score on the gossip theory-of-mind probes: the constant
answer to every question (the first word of each probe, as an unbalanced share of every settled
question, the way scores were read before the items were balanced), the best constant and the
probe's rule on the balanced items of each set, chance, and the informed oracle. Scripted seats
only (no model), so it takes seconds::

    python experiments/bench/gossip_tom_tricks.py [--episodes 8]

Two populations: the bundled ``llm_align_tom`` with its LLM seats played by inbox oracles, and
a mixed one under ``gossip_reach`` 0.5 (10 agents: 6 answering seats, a defector, a random
donor, an inverting liar; random schedule). Every row's ``best const`` equals ``chance`` by the
balance; ``rule`` is at chance on false-belief items wherever ``balanced_on`` says
``answer and rule``.
"""

from __future__ import annotations

import argparse

from socialsim.envs.gossip import tom

from socialsim import config
from socialsim.analysis.gossip_tom import probe_scores, scored_entries
from socialsim.episode import EpisodeSpec
from socialsim.runner import play_episode


def bundled(episodes: int) -> list:
    oracle = '{kind = "gossip_oracle", norm = "simple_standing"}'
    sets = [f"seats.agent_{i}={oracle}" for i in range(3)] + [f"episodes={episodes}"]
    return [play_episode(spec) for spec in config.load("llm_align_tom", sets).specs()]


def mixed(episodes: int) -> list:
    seats = {f"agent_{i}": {"kind": "gossip_oracle", "norm": "simple_standing"} for i in range(10)}
    seats.update(
        {
            "agent_4": {"kind": "gossip_constant_answerer"},
            "agent_5": {"kind": "gossip_rule_answerer"},
            "agent_6": {"kind": "gossip_abstainer"},
            "agent_7": {"kind": "always_defect"},
            "agent_8": {"kind": "random_donor"},
            "agent_9": {"kind": "liar", "mode": "invert"},
        }
    )
    kwargs = {"n_agents": 10, "rounds": 12, "gossip_reach": 0.5, "schedule": "random"}
    probes = [{"name": p} for p in tom.GOSSIP_PROBES]
    return [
        play_episode(
            EpisodeSpec(env_id="donation_v0", seed=s, seats=seats, env_kwargs=kwargs, probes=probes)
        )
        for s in range(episodes)
    ]


def report(name: str, records: list) -> None:
    entries = [e for r in records for e in scored_entries(r)]
    print(f"\n{name}: {len(records)} episodes")
    print(
        f"{'probe':17}{'set':13}{'asked':>6}{'first word':>11}{'items':>6}"
        f"{'best const':>11}{'rule':>6}{'chance':>7}{'oracle':>7}  balanced_on"
    )
    pooled: dict[tuple[str, str], list] = {}
    for row in probe_scores(records, label=lambda seat: "all"):
        pooled[(row["probe"], row["item_set"])] = row
    for (probe, item_set), row in pooled.items():
        mine = [e for e in entries if e["probe"] == probe and e["item_set"] == item_set]
        first = sum(e["truth"] == tom.ANSWERS[probe][0] for e in mine) / len(mine)
        print(
            f"{probe:17}{item_set:13}{row['asked']:6d}{first:11.2f}{row['items']:6d}"
            f"{row['constant']:11.2f}{row['rule']:6.2f}{row['chance']:7.2f}{row['oracle']:7.2f}"
            f"  {row['balanced_on']}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    args = parser.parse_args()
    report("llm_align_tom (LLM seats as oracles)", bundled(args.episodes))
    report("mixed, gossip_reach 0.5", mixed(args.episodes))


if __name__ == "__main__":
    main()
