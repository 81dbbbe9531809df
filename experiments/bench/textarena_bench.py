"""Benchmark: actions per second of ``prisoners_v0`` against TextArena's iterated prisoner's
dilemma, on the path a language agent takes and on the integer (RL) path, in the same process.

Both games are set to the same shape: two players, 10 rounds, and in each round one free-text
message and one cooperate/defect decision per player, so an episode is 40 actions on each side.
TextArena's ``IteratedPrisonersDilemma-v0`` is registered with ``num_rounds=10,
communication_turns=1``; ours is ``prisoners_v0.env(n_agents=2, schedule="random", rounds=10)``
(one pair, so one match a round; the gossip phase is the message).

* **Text path.** TextArena with its default wrappers (``LLMObservationWrapper``, which renders
  the player's whole history as a prompt string at every ``get_observation()``, and
  ``ClipCharactersActionWrapper``), driven as its README does: ``ta.make(...)`` per episode,
  ``reset(num_players=2)``, ``get_observation()`` and ``step(text)`` until done, ``close()``;
  the text is a sentence in the conversation turns and ``"[Cooperate]"`` or ``"[Defect]"`` at the
  decisions. Ours: the AEC loop of PettingZoo's docs with ``last(observe=False)`` (a language
  agent does not read the RL vector), one inbox read (``env.bus.read(agent)``, the messages new
  since its last turn) per decision, and dict actions: ``{"action": "C" | "D",
  "justification": sentence}`` and ``{"tone": name, "message": sentence}``. What each side hands
  the agent differs: TextArena a finished prompt string, ours the new messages (the prompt is the
  agent's own, in ``agents/``); neither side's model is run.
* **Int path.** TextArena's ``-raw`` env (no wrappers: ``get_observation()`` returns the new
  observation tuples), the same text actions. Ours: ``last()`` (the observation vector and the
  action mask) and an int action drawn from the mask.

**The int path does not compare like with like.** TextArena has no RL view: its raw env hands
back the strings its last step appended and matches one regex per action; it builds no numeric
observation, no action mask, no per-agent reward, termination or info tables, and it draws no
seeded randomness at reset. Our int path builds a fresh float32 vector and int8 mask at every
``last()``, keeps PettingZoo's AEC tables, seeds a Generator per ``reset(seed=...)`` (about
13 us an episode) and publishes the same audited messages as the text path (5 a round); the
loop's own agent also pays numpy to draw from the mask where TextArena's side picks a string.
The int ratio is therefore an RL env against a text env's floor; the like-for-like comparison
is the text path, where both sides play the same messages and decisions.

One *action* is one ``step`` by the player to act: TextArena's ``env.step(text)``; ours an AEC
``env.step(action)`` of an agent with a decision (the ``step(None)`` of agents leaving at the end
is not counted; its time is). Episodes follow each other, every ``make``/``reset``/``close``
timed; ours resets one env per episode (``reset(seed=seed + i)``), as PettingZoo's docs do, and
``--make-per-episode`` builds a new one each episode as TextArena's docs do. Choices are drawn
from one seeded numpy Generator per run (TextArena's game draws nothing at random; it is reset
without a seed, which would seed the global ``random``). Times are the thread's CPU time; the
four runs alternate trial by trial and the best trial of each is kept. Goal: text path >= 1.0x
TextArena with its default wrappers, int path >= 1.0x its raw env. Prints the figures, asserts
nothing; skips with a message where ``textarena`` (our ``bench`` extra) is not installed.

    python experiments/bench/textarena_bench.py                    # 20,000 actions a run, best of 5
    python experiments/bench/textarena_bench.py --quick            # 4,000, best of 2
    python experiments/bench/textarena_bench.py --make-per-episode
    python experiments/bench/textarena_bench.py --rounds 50       # both games 50 rounds long
    python experiments/bench/textarena_bench.py --only "prisoners_v0 text path"  # one side

Measured on 2026-12-01 on 2 shared cores under a load of 7 to 10 (other sessions' test suites),
textarena 0.7.4, ``--trials 7``, three alternating rounds of main's code (466534a) and of this
benchmark's change (the dict-action codec and the inbox read reworked), this script for both:

| code | text path / TextArena default | int path / TextArena ``-raw`` |
|---|---|---|
| main 466534a | 0.81, 0.73, 0.70 | 0.19, 0.15, 0.21 |
| after | 0.81, 0.68, 1.02 | 0.16, 0.16, 0.15 |

Best microseconds per action over those runs: TextArena default 24.5-28.1, ``-raw`` 5.4-7.1;
ours text 27.6-38.9, int 32.0-39.0. The load moved the same code by up to 0.3 between rounds,
more than the change, which saves about 3 us of the ~33 us of a text action: a dict action
decodes in 1.3-1.5 us instead of 2.4-3.9 (``python -m timeit -s "from
socialsim.envs.gossip.actions import ActionCodec; from socialsim.envs.gossip.protocol import
PRISONERS; c = ActionCodec(PRISONERS); m = PRISONERS.masks()['gossip']; a = {'tone':
'praising', 'message': 'hi'}" "c.decode('agent_0', 'gossip', a, m, float)"``, and with
``{'action': 'C'}`` for ``play``) and an inbox read of this game's pattern takes about 1.3 us
instead of 2.7 (thread time).

Where the rest goes (cProfile of the text loop): the env's ``apply`` about 46% (the core's
``advance`` 20%; five bus messages a round with their read-only payload wrappers 14%; the infos
4%), ``check_action`` 14% (the codec 6% of it), the reset 10-15% (a Generator made from the seed
and the random schedule's ten ``rng.permutation`` calls: about 185 us an episode, against 35 us
for TextArena's ``make`` and ``reset``). The int path adds the observation vector at every
``last()``. TextArena's raw env appends strings and matches one regex per action; its default
wrappers re-render the player's whole history at every ``get_observation()``, a cost that grows
with the game: with ``--rounds 50`` the text path is 2.31x (main) and 3.12x (after), the int
path 0.20x and 0.17x. ``--make-per-episode`` (our env built, about 0.3 ms, and first reset
every episode): text path 0.54x, int path 0.18x. The issue's earlier 0.71x and 0.57x came from
a script that is not in the repository; with this one main's int path measures 0.15-0.21x.

On a quiet machine (load average under 1), 2026-12-01 evening, ``--trials 5``: text path
**0.83x** TextArena's default wrappers (26.5 against 22.4 us an action) and int path **0.20x**
its raw env (27.0 against 5.0 us); neither goal is met at the default 10 rounds.

**The hot path shortened (issue 12, second pass).** Profiled first (cProfile, opcode counts
per function, callgrind), then: the random schedule drawn in one ``permuted`` call per block
instead of one ``permutation`` a round (the same draws, pinned by the record hashes); the
core's payloads and records built as dict literals of their protocol types and made read-only
where they are built (a match's two parts at once, a trust move when published), instead of a
generic walk and copy of every payload; stocks and seat codes as Python lists (they change one
at a time, where numpy scalars cost more than the arithmetic); tone counts kept in the
observation's dtype, so each observation copies them without a cast; the core's re-check
skipped for choices the codec takes from the game's own action table; the codec's two dict
forms decoded without a detour; the AEC step shorter (a leaving agent told by its empty queue,
rewards added in place). Same records: ``record_hashes.py`` prints main's seven digests, and the
observations, rewards, infos and bus logs of all four gossip envs in both forms are identical.
Measured on 2026-12-01 on 2 shared cores under a load of 11 to 20 (other sessions' valgrind
runs and test suites: a busy machine, to be re-measured on a quiet one), ``--trials 5``, three
alternating rounds of main's code (fc84ed4) and of this change, this script for both:

| code | text path / TextArena default | int path / TextArena ``-raw`` |
|---|---|---|
| main fc84ed4 | 0.68, 0.72, 0.59 | 0.18, 0.18, 0.20 |
| after | 1.06, 1.00, 1.00 | 0.21, 0.21, 0.24 |

Best microseconds per action in those runs: main text 37.4-43.2, int 44.9-48.1; after text
28.3-30.9, int 33.2-35.7; TextArena default 25.6-32.8, ``-raw`` 6.9-8.9. The load moves
times, not instructions. Counted by ``valgrind --tool=callgrind`` (the difference between 60 and
10 episodes of one of this script's episode functions run alone, after a warm-up one, per
action, ``PYTHONHASHSEED=0``): the text path main 106,686 and after 86,127 instructions an
action, the int path main 115,885 and after 94,904, TextArena's default 137,111 and ``-raw``
26,126 (without the fixed hash seed). Run inside this script (``valgrind --tool=callgrind python
experiments/bench/textarena_bench.py --only "prisoners_v0 text path" --actions 2400 --trials
1``, less the same with ``--actions 400``; main's code run by this script) every side counts
more, likely the garbage collector's passes over the heap that importing textarena enlarges:
text path main 114,242 and after 92,190, int path main 121,675 and after 97,641, TextArena's
default 142,897 and ``-raw`` 40,437. TextArena's string work runs at more
instructions per microsecond than our dict-and-call code, so the text path is even in time at
fewer instructions.

Where an action's time goes now (cProfile of 1,000 episodes, shares of the loop; cProfile
inflates many small calls, so read them as proportions):

| part | text path | int path |
|---|---|---|
| AEC ``step``, all of it | 69% | 62% |
| - the env's ``apply`` (once a phase: the core, its messages, infos, the next match) | 45% | 46% |
| -- the core's ``advance`` (payoffs, payloads, records, the next round) | 20% | 22% |
| -- ``bus.publish``, 5 messages a round (the bus's own code) | 11% | 12% |
| -- the infos of both agents | 5% | 4% |
| - checking the action (the env's ``check_action`` and the codec) | 12% | 6% |
| - who decides next (``deciding``) | 4% | 3% |
| ``last()`` (the int path's observation vector and mask) | 2% | 16% |
| ``bus.read``, one a decision | 10% | - |
| ``reset`` (seeding a Generator, the schedule, a new bus, the rules, round 1) | 11% | 9% |
| ``agent_iter`` | 2% | 2% |
| the loop's own agent (drawing choices, building actions) | 6% | 9% |

The int path's remaining gap: the audited messages (12%), the observation (16%) and the seeded
reset (9%), roughly 35,000 of its 94,904 instructions by those shares, already cost more than
TextArena's whole raw action (26,126); closing it would mean dropping the record or the RL view, not shortening
a path.

Quiet machine (load average under 1), 2026-12-01 late evening, main 2547d38, the default
command: TextArena default 31.3 us per action, ours text path 28.7 us, **1.09x** (goal met;
0.83x before on the quiet machine); TextArena ``-raw`` 9.0 us, ours int path 31.4 us, **0.29x**
(0.20x before; not met, for the reasons above).

Quiet machine again, 2026-12-01 22:33, the default command, five runs: one of main, then two
rounds of 20967b7 (``SOCIALSIM_ROOT`` at a detached checkout) and main alternately. Text path
ratio: 0.93x; 20967b7 0.91x, 1.08x; main 0.91x, 0.88x. Our text path is as fast as before or
faster (us per action, 20967b7 28.8, 28.8; main 24.0, 28.0, 24.2), but TextArena's own default
path moved from 21.4 to 30.9 us per action between runs of the same code, so the text path is
about level with TextArena (0.88x-1.08x), not ahead by a margin. Int path 0.19x-0.24x.

**Third pass (issue 12), 2026-12-02.** The bus's streams hold the messages themselves (a read
slices them), a message is made by the tuple's own ``__new__``, the core reads the checked
choices by agent, rewards and infos start from copies of zero tables made once, the rules
payload is made JSON once per env, the codec looks exact names up first, the random schedule
pairs by iterators (the same draws), the observation is one ``concatenate``. Counted by
callgrind over the 50 measured episodes only (``--collect-atstart=no
--toggle-collect=starmap_next``, the episodes run inside ``itertools.starmap``; repeated runs give
the same count, where 60 minus 10 episodes varied by about 4k an action): text path 86,505 ->
69,398 instructions an action (-20%), int path 94,054 -> 81,598 (-13%); about 9k of an action
is this script's own loop. Records, rollouts (``fingerprint.py``) unchanged. Quiet machine (load
average about 1), ``--trials 3``, two rounds alternating this code and a26e1a2 (``SOCIALSIM_ROOT``
at a detached checkout): text path **1.36x, 1.23x** TextArena's default wrappers (18.6 and 25.4
us an action; a26e1a2 1.09x, 1.01x), int path 0.34x, 0.29x its raw env (a26e1a2 0.17x, 0.24x).
The text goal is met with a margin; the int goal is not, for the reasons above.

**The int loop's floor (issue 12, 2026-12-02).** The script now also times the int loop
against ``NoOpAEC``, an AEC env with this game's shapes and no game (``last()`` still hands out
a fresh observation vector and mask, ``step`` only passes the turn): what PettingZoo's API and
this loop cost before any rule, message or record. Default command, quiet machine (load about
0.6, ``--trials 3``): the floor 2.8 us an action, TextArena ``-raw`` 10.8 us, our int path 32.3
us (0.34x), the text path 1.34x TextArena's default wrappers (26.3 against 35.2 us). Earlier
the same morning, with ``-raw`` at 5.5 us (the machine's speed moves by half between minutes),
the floor was 2.5 us: matching ``-raw`` leaves a game 3 to 8 us an action, where ours (its
rules, the audited messages, the observation's contents, the infos) takes 18 to 30. The int
goal is not met.

**The bus's log made untracked (issue 12, 2026-12-02).** The bus now keeps messages as plain
tuples and payloads and makes each ``Message`` when the first of its audience reads it (so that
the garbage collector need not walk an episode's log; see ``envs_vs_rps.py``). A reading agent
now pays for making what it reads, where the env used to pay at publishing: about 0.7 us a
message (a match's nested payload about 0.9 of it, a flat one about 0.25), 1.3 messages an
action here. The default command from ``/tmp``, two rounds of main (9978ac4, through a second
venv pointed at a detached checkout) and this change alternately, a quiet machine (load under
1, TextArena ``-raw`` 2.8-3.1 us an action, a third of the day before's): text path 8.1, 7.3 ->
9.3, 8.9 us an action, **1.32x, 1.33x -> 1.17x, 1.09x** TextArena's default wrappers (10.6,
9.7 -> 10.8, 9.7 us); int path 9.5, 8.3 -> 7.9, 7.7 us, **0.33x, 0.34x -> 0.37x, 0.36x** its
raw env (the env posts cheaper messages, and nobody reads them); the no-op floor 1.3-1.5 us.
The text goal is still met, by less; the int goal is not (a game would have 1.5 us an action
over the floor to match ``-raw``; ours takes 6.4). Then a bus with readers makes each message
as it is posted, and the envs name the read-only views of their fixed-shape payloads (an
inbox read 2.07 -> 0.82 us, base 0.60, by a scratch timer around ``bus.read``); two rounds of
main and this version alternately, from ``/tmp``: text path 1.28x, 1.25x (main) -> **1.10x,
1.11x**; int path 0.33x, 0.33x -> **0.35x, 0.34x**.

2026-12-02 evening, a new machine of this kind (quiet, load under 1), main d3164b7, from
``/tmp``: ``--trials 3`` once, then ``--trials 5`` three times. Text path **1.26x**, then
**1.06x, 1.06x, 1.07x** TextArena's default wrappers (ours 22.6, then 17.0-17.1 us an action;
TextArena's 28.5, then 18.2: its own speed moved by half between the first run and the
others, ours by a quarter); int path **0.29x** in all four (17.0-20.4 against 4.9-5.9 us),
the no-op floor 2.2-2.9 us. The text goal is met in every run, by 6-7% in most; the int goal
is not. For scale, PettingZoo's own ``rps_v2`` in its AEC form takes about 34 us an
agent-step on the same machine (``envs_vs_rps.py``, 29 k agent-steps/s), 0.15-0.17x
TextArena's ``-raw``: no env behind PettingZoo's AEC API with a numeric observation, a mask
and a per-step record comes near a raw text env's string append, which is why the int goal
stays unmet by design rather than by a slow path.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version

import numpy as np
from socialsim.envs import prisoners_v0
from socialsim.envs.gossip.protocol import TONES

TEXTARENA_IPD = "IteratedPrisonersDilemma-v0"
SENTENCE = "I cooperated last round and I will cooperate again if you do."
ROUNDS = 10
RUNS = (
    "textarena default wrappers",
    "prisoners_v0 text path",
    "textarena -raw",
    "prisoners_v0 int path",
    "no-op AEC env, int loop",
)


class NoOpAEC:
    """The int path's floor: an AEC env with this game's shapes (2 agents, 40 decisions, a
    14-float observation and a 7-action mask, fresh at every ``last()``) and no game at all."""

    def __init__(self, rounds: int):
        self.possible_agents = ["agent_0", "agent_1"]
        self.actions = 4 * rounds
        self.vector, self.mask = np.zeros(14, np.float32), np.ones(7, np.int8)
        self.rewards = dict.fromkeys(self.possible_agents, 0.0)
        self.terminations = dict.fromkeys(self.possible_agents, False)
        self.truncations = dict.fromkeys(self.possible_agents, False)
        self.infos = {agent: {} for agent in self.possible_agents}

    def reset(self, seed=None):
        self.taken, self.agent_selection = 0, "agent_0"

    def agent_iter(self):
        while self.taken < self.actions:
            yield self.agent_selection

    def last(self, observe=True):
        agent = self.agent_selection
        observation = None
        if observe:
            observation = {"observation": self.vector.copy(), "action_mask": self.mask.copy()}
        return (
            observation,
            self.rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def step(self, action):
        self.taken += 1
        self.agent_selection = "agent_1" if self.agent_selection == "agent_0" else "agent_0"


@dataclass
class Run:
    seconds: float
    actions: int
    episodes: int


def textarena_episode(ta, env_id: str, rounds: int, rng: np.random.Generator) -> int:
    """One TextArena episode as its README plays it; returns the actions taken."""
    env = ta.make(env_id=env_id, num_rounds=rounds)
    env.reset(num_players=2)
    taken, done = 0, False
    while not done:
        _player, _observation = env.get_observation()
        # each round: both players talk once, then both decide
        if (taken // 2) % 2 == 0:
            action = SENTENCE
        else:
            action = "[Cooperate]" if rng.random() < 0.5 else "[Defect]"
        done, _info = env.step(action=action)
        taken += 1
    env.close()
    return taken


def text_episode(env, rng: np.random.Generator, seed: int) -> int:
    """One episode of ``prisoners_v0`` as a language agent plays it, minus the model."""
    env.reset(seed=seed)
    bus, taken = env.bus, 0
    for agent in env.agent_iter():
        _, _, termination, truncation, info = env.last(observe=False)
        if termination or truncation:
            env.step(None)
            continue
        _messages = bus.read(agent)
        if info["decision"] == "play":
            action = {"action": "C" if rng.random() < 0.5 else "D", "justification": SENTENCE}
        else:
            action = {"tone": TONES[int(rng.random() * len(TONES))], "message": SENTENCE}
        env.step(action)
        taken += 1
    return taken


def int_episode(env, rng: np.random.Generator, seed: int) -> int:
    """One episode of ``prisoners_v0`` on the RL path: observation, mask, int action."""
    env.reset(seed=seed)
    taken = 0
    for _agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = observation["action_mask"].nonzero()[0]
        env.step(int(legal[int(rng.random() * len(legal))]))
        taken += 1
    return taken


def ours(
    play: Callable, rounds: int, per_episode: bool
) -> Callable[[np.random.Generator, int], int]:
    def make():
        return prisoners_v0.env(n_agents=2, schedule="random", rounds=rounds)

    env = make()
    if per_episode:
        return lambda rng, seed: play(make(), rng, seed)
    return lambda rng, seed: play(env, rng, seed)


def timed(episode: Callable[[np.random.Generator, int], int], actions: int, seed: int) -> Run:
    """Play whole episodes until at least ``actions`` actions were taken."""
    rng = np.random.default_rng(seed)
    episode(rng, seed)  # warm up: first-call costs are not what we measure
    taken = episodes = 0
    start = time.thread_time()
    while taken < actions:
        taken += episode(rng, seed + 1 + episodes)
        episodes += 1
    return Run(time.thread_time() - start, taken, episodes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer actions, for a smoke run")
    parser.add_argument("--actions", type=int, help="actions per run [20,000; quick 4,000]")
    parser.add_argument("--trials", type=int, help="alternating trials, best kept [5; quick 2]")
    parser.add_argument(
        "--make-per-episode", action="store_true", help="build our env anew every episode"
    )
    parser.add_argument(
        "--rounds", type=int, default=ROUNDS, help="rounds of both games [TextArena's 10]"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--only", choices=RUNS, action="append", help="run only these sides (repeatable)"
    )
    args = parser.parse_args(argv)
    try:
        import textarena as ta
    except ImportError:
        print("skipped: textarena is not installed (pip install -e '.[bench]')")
        return
    actions = args.actions or (4_000 if args.quick else 20_000)
    trials = args.trials or (2 if args.quick else 5)
    registered = ta.envs.registration.ENV_REGISTRY[TEXTARENA_IPD].kwargs
    print(f"textarena {version('textarena')}, {TEXTARENA_IPD} registered with {registered}")
    print(f"both games: 2 players, {args.rounds} rounds, {4 * args.rounds} actions an episode")
    runs = {
        "textarena default wrappers": lambda rng, seed: textarena_episode(
            ta, TEXTARENA_IPD, args.rounds, rng
        ),
        "prisoners_v0 text path": ours(text_episode, args.rounds, args.make_per_episode),
        "textarena -raw": lambda rng, seed: textarena_episode(
            ta, f"{TEXTARENA_IPD}-raw", args.rounds, rng
        ),
        "prisoners_v0 int path": ours(int_episode, args.rounds, args.make_per_episode),
        "no-op AEC env, int loop": partial(int_episode, NoOpAEC(args.rounds)),
    }
    runs = {name: runs[name] for name in RUNS if not args.only or name in args.only}
    best: dict[str, Run] = {}
    for trial in range(trials):
        for name, episode in runs.items():
            run = timed(episode, actions, args.seed + 1000 * trial)
            if (
                name not in best
                or run.seconds / run.actions < best[name].seconds / best[name].actions
            ):
                best[name] = run
    rates = {}
    print(f"best of {trials} alternating trials of >= {actions:,} actions (thread CPU time)")
    for name, run in best.items():
        rates[name] = run.actions / run.seconds
        print(
            f"  {name:<28} {run.actions:>7,} actions in {run.episodes:>5,} episodes,"
            f" {run.seconds:5.2f} s: {rates[name]:>8,.0f} actions/s,"
            f" {1e6 / rates[name]:5.1f} us per action"
        )
    if {"prisoners_v0 text path", "textarena default wrappers"} <= rates.keys():
        text = rates["prisoners_v0 text path"] / rates["textarena default wrappers"]
        print(f"  ratio text path / textarena default: {text:.2f}x (goal >= 1.0x)")
    if {"prisoners_v0 int path", "textarena -raw"} <= rates.keys():
        raw = rates["prisoners_v0 int path"] / rates["textarena -raw"]
        print(f"  ratio int path / textarena -raw:     {raw:.2f}x (goal >= 1.0x)")
    if {"no-op AEC env, int loop", "textarena -raw"} <= rates.keys():
        floor = 1e6 / rates["no-op AEC env, int loop"]
        budget = 1e6 / rates["textarena -raw"] - floor
        print(
            f"  the int loop's floor (an AEC env with no game): {floor:.1f} us an action, leaving"
            f" {budget:.1f} us for a game to match textarena -raw"
        )


if __name__ == "__main__":
    main()
