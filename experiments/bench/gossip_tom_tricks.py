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
``answer and rule``. Last, how often ``will_help``'s truth differs from what the discriminator Y
then did (8 agents, 2 defectors, reach 0.5): by the truth before it counted Y's private
``reputation`` message (the gossip Y could see) and by today's (``tom_truth.truth``).

Printed on 2026-12-06 (8 episodes). ``llm_align_tom``, the first word of each probe as a share
of every settled question, then on the balanced items (= chance):

| probe | set | asked | first word | items | best constant = rule = chance | oracle |
|---|---|---|---|---|---|---|
| counterpart_move | all | 379 | 0.78 | 170 | 0.50 | 0.50 |
| recipient_tone | all | 389 | 0.81 | 48 | 0.33 | 0.33 |
| reputation | false_belief | 471 | 0.10 | 135 | 0.33 | 0.72 |
| reputation | true_belief | 3369 | 0.68 | 126 | 0.33 | 0.66 |
| will_help | false_belief | 420 | 0.86 | 118 | 0.50 | 0.82 |
| will_help | true_belief | 3420 | 0.85 | 452 | 0.50 | 0.77 |
| gossip_true | all | 675 | 0.96 | 58 | 0.50 | 0.53 |
| has_seen | all | 704 | 0.94 | 86 | 0.50 | 0.72 |

The mixed population: every best constant at chance and every rule too, but ``has_seen`` (the
rules' audience is the answer under limited reach: rule = oracle = 1.00); no seat is informed of
a second-order answer (oracle = chance). The discriminator's move against ``will_help``'s old
truth 0.095 of 294 moves, against today's 0.000.
"""

from __future__ import annotations

import argparse

from socialsim.envs.gossip import norms, tom, tom_truth

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


def discriminators_moves(episodes: int) -> None:
    seats = {f"agent_{i}": {"kind": "gossip_oracle"} for i in range(8)}
    seats["agent_6"] = seats["agent_7"] = {"kind": "always_defect"}
    kwargs = {"n_agents": 8, "rounds": 12, "gossip_reach": 0.5, "schedule": "random"}
    old = new = asked = 0
    for seed in range(episodes):
        moves = set()  # each move once, however many seats were asked about it
        spec = EpisodeSpec(
            env_id="donation_v0",
            seed=seed,
            seats=seats,
            env_kwargs=kwargs,
            probes=[{"name": "will_help"}],
        )
        record = play_episode(spec)
        messages = record.messages
        for e in record.probes:
            key = (e["round"], e["viewer"], e["about"])
            if seats[e["viewer"]]["kind"] != "gossip_oracle" or key in moves:
                continue
            moves.add(key)
            move = tom_truth.move_of(messages, "donation", e["viewer"], e["about"], e["round"])
            could_see = [
                m["payload"]["tone"]
                for m in tom_truth.seen_by(messages, e["viewer"], e["seen"], ("gossip",))
                if m["payload"]["about"] == e["about"]
            ]
            before = norms.decide(e["norm"], norms.reputation(could_see, e["norm"]))
            asked += 1
            old += before != move
            new += tom_truth.truth(record, e) != move
    print(
        f"\nwill_help's truth against the discriminator's move ({asked} moves): "
        f"before {old / asked:.3f}, now {new / asked:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8)
    args = parser.parse_args()
    report("llm_align_tom (LLM seats as oracles)", bundled(args.episodes))
    report("mixed, gossip_reach 0.5", mixed(args.episodes))
    discriminators_moves(args.episodes)


if __name__ == "__main__":
    main()
