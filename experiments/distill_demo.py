"""From a dozen language-model seats to a million agents, offline: distil the seats of
``llm_align_donation`` (played against the shipped test chat server's scripted players, so no
model and no network), print the strategy's fidelity, play it at scale with and without gossip,
and evolve it among scripted norms.

    python experiments/distill_demo.py [--out results/distill_demo] [--agents 1000000]
        [--rounds 1000] [--seeds 10] [--generations 20]

Steps (each printed):

1. ``socialsim run llm_align_donation`` with gossip on, 4 episodes of 9 seats (the file's other
   settings), every seat the test server's ``play`` model: one seat (Jack, ``agent_2``) always
   defects, the others cooperate unless the prompt's log criticises the recipient; all gossip
   what happened;
2. ``socialsim distill`` of its seats (``--by model``): the fidelity table, held out by whole
   episodes, beside the best constant and the scripted norms; the cue table, the same held-out
   scores of the strategy over the base cues (what the population engine plays) and with each
   extra cue the record holds (stock, round, last experience) and all of them; then the
   strategy's cells;
3. the strategy alone at ``--agents`` agents for ``--rounds`` rounds (one seed), with gossip and
   without: cooperation in the last 100 rounds;
4. the strategy evolving among stern judges and always-defectors (a third each, 1,000 agents,
   30 rounds a generation, selection with no mutation, ``--seeds`` seeds): the mean shares of
   the last generation, and in how many seeds each strategy is still present.

The population engine plays the distilled tables with the draws of the ``distilled`` seat in
the env (tests/test_distill_society.py shows both give the same generations for one seed), so
step 3's numbers are those a million such seats would make in the donation env. What this
shows is the machinery: the test server's players are scripted, not a language model.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import socialsim
from socialsim.distill.command import cells_text, distill
from socialsim.distill.fidelity import cue_table_text, table_text
from socialsim.distill.strategy import save
from socialsim.society.evolution import Evolution
from socialsim.society.generations import EvolvingSociety
from socialsim.society.vectorised import ReplicatedSociety
from socialsim.testing.gossip_policies import GossipPolicy
from socialsim.testing.llm_server import ScriptedChatServer
from socialsim.testing.playground import PlayPolicy

#: the seat whose test-server player always defects (agent_2)
DEFECTORS = ("Jack",)


def play_llm_run(out: Path, episodes: int) -> Path:
    run = out / "llm_align_donation"
    players = PlayPolicy()
    players.gossip = GossipPolicy(defectors=DEFECTORS)
    with ScriptedChatServer(players, alternating_roles=True) as server:
        socialsim.run(
            "llm_align_donation",
            out=run,
            overrides=[
                f"episodes={episodes}",
                "grid.env.kwargs.gossip=[true]",
                "grid.seats.*.equilibrium_knowledge=[true]",
                f"seats.*.model.api_base={server.url}",
                "seats.*.model.model=openai/play",
            ],
            progress=False,
        )
    return run


def at_scale(strategy, agents: int, rounds: int, gossip: bool) -> float:
    society = ReplicatedSociety(
        {"llm": agents}, seeds=[0], gossip=gossip, distilled={"llm": strategy}
    )
    table = society.run(rounds)
    return float(table["cooperation_rate"].iloc[-100:].mean())


def evolve(strategy, seeds: int, generations: int) -> tuple[dict[str, float], dict[str, int]]:
    population = {"llm": 334, "stern_judging": 333, "always_defect": 333}
    run = EvolvingSociety(
        population,
        seeds=range(seeds),
        rounds=30,
        evolution=Evolution("selection", pool=("stern_judging", "always_defect")),
        distilled={"llm": strategy},
    )
    table = run.run(generations)
    last = table.xs(generations - 1, level="generation")
    shares = {s: float(last[f"share_{s}"].mean()) for s in population}
    present = {s: int((last[f"share_{s}"] > 0).sum()) for s in population}
    return shares, present


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results/distill_demo")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--agents", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--generations", type=int, default=20)
    args = parser.parse_args()
    out = Path(args.out)
    start = time.monotonic()
    run = play_llm_run(out, args.episodes)
    print(f"1. played {run} ({time.monotonic() - start:.0f} s)")
    strategies, source = distill([run], by="model", folds=min(4, args.episodes))
    save(out / "llm_policy.json", strategies, source)
    [(name, strategy)] = strategies.items()
    print(f"2. distilled {out / 'llm_policy.json'}")
    print(table_text(name, strategy.fidelity))
    print(cue_table_text(name, strategy.fidelity))
    print(cells_text(strategy))
    for gossip in (True, False):
        begun = time.monotonic()
        rate = at_scale(strategy, args.agents, args.rounds, gossip)
        print(
            f"3. {args.agents:,} agents x {args.rounds:,} rounds, gossip "
            f"{'on' if gossip else 'off'}: cooperation in the last 100 rounds {rate:.3f} "
            f"({time.monotonic() - begun:.0f} s)"
        )
    shares, present = evolve(strategy, args.seeds, args.generations)
    print(
        f"4. generation {args.generations - 1} of {args.seeds} seeds (1,000 agents): "
        + ", ".join(f"{s} {shares[s]:.3f} (present in {present[s]} seeds)" for s in shares)
    )


if __name__ == "__main__":
    main()
