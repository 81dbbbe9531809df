"""Benchmark: ``socialsim run`` of a scripted grid against a bare env + agents loop playing the
same episodes, in the same process.

The peer is the floor: for each episode of the experiment, build the env and the seats' agents,
reset with the episode seed, and call ``act`` of every deciding agent with its observation, its
inbox and its info, then ``env.step``, until the episode ends; no record, no log. The runner
side is :func:`socialsim.run` into a fresh directory with ``workers = 1``: the config checked,
the check episodes, the manifest, every record built, serialised and committed to
``episodes.jsonl``. Goal: runner <= 1.3x the bare loop. Wall time, interleaved trials, best of
``--trials``.

    python experiments/bench/runner_bench.py [--experiment align_donation_grid] [--trials 3]

Measured on 2026-12-01, 540 episodes of ``align_donation_grid``, main and this version run
alternately by the same script on 2 cores shared with four other engineers' test runs (load
average 9-11); best of 2 trials per run, two runs each. CPU is this process's CPU time (the
fsyncs' waits are in wall only):

| version | CPU: bare / socialsim run / ratio | wall: bare / socialsim run / ratio |
|---|---|---|
| before (an event-loop task per episode and an ``await`` per decision, an fsync per record) | 2.76 / 7.02 s / 2.54x; 3.59 / 7.86 s / 2.19x | 5.78 / 15.78 s / 2.73x; 5.55 / 12.09 s / 2.18x |
| after (sync agents called directly, group commit, one encoding) | 3.59 / 5.22 s / 1.46x; 3.95 / 5.67 s / 1.44x | 6.90 / 8.06 s / 1.17x; 5.95 / 8.80 s / 1.48x |

Later the same day, ``--trials 2``, main (466534a) and this version run alternately, twice
each, by the same loop on 2 cores at load average 7-11 (a full test suite and other benches
beside it), so the wall figures are noise; CPU, best of each pair of runs:

| version | CPU: bare / socialsim run / ratio |
|---|---|
| before (466534a) | 3.22 / 5.48 s / 1.70x; 3.64 / 5.42 s / 1.49x |
| after (the bus's thaw by exact type, one JSON encoder object) | 2.95 / 4.62 s / 1.57x; 3.32 / 4.90 s / 1.47x |

The runner's own CPU fell by about 0.6 s; the bare loop's figure moves as much from run to run,
so the ratio barely shows it here. In-process timing of the same 54 episodes (best of 9,
scaled to 540): building and encoding the records 0.64-0.82 s before, 0.56-0.69 s after.

What is left above the floor (in-process timing, busy machine): the record's one JSON encoding
(0.4-0.65 s for 540 records of 38 KB; the C encoder sorting the keys of every small dict),
building the record's message list (0.15 s with the thaw by type) and the per-step log
(0.15-0.25 s), the config check and manifest about 0.1 s. Encoding each message once at publish
and splicing the texts into the line was tried: one encoder call per message cost as much as
the thaw it saved (0.46 s against 0.35 s for thaw alone), so the records keep plain dicts.

On a quiet machine (load average under 1), 2026-12-01 evening, ``--trials 3``: bare loop 2.71 s,
``socialsim run`` 4.15 s CPU, **1.53x** (goal 1.3x not met). The bare loop itself is faster than
in the rows above (the envs and the bus read got faster), so the runner's fixed cost per
episode, about 2.6 ms of a 5 ms episode, weighs more: a cProfile of the run puts 0.66 s in the
record's JSON encoding, 0.43 s in the message list (``Message.to_json`` and its thaw), 0.32 s
in ``jsonable`` of the actions and the summary and 0.27 s in the per-step log. Meeting the goal
means writing less per episode (the record holds every bus message, about 90 for this grid),
which changes the records, so it is left for a decision on the record format.

Then, records byte-identical (``record_hashes.py`` with 1 and 2 workers, and the raw lines of
``episodes.jsonl`` without ``timing``, equal to main's): a done episode's line is encoded from
the episode as played (:meth:`Episode.line`: the bus's frozen payloads read by the encoder as
the dicts they wrap, no thawed copy of the messages), the check episodes are matched to their
lines by the key their player sends (main decoded all 54 check lines, about 38 KB each, to read
their keys), and the canonical encoder skips its cycle check. Busy machine (load average 10-12,
other helpers' test suites and callgrind runs beside it), ``--trials 2``, main (fc84ed4) and
this version run alternately three times each by the same loop; CPU, bare / ``socialsim run``
/ ratio:

| version | run 1 | run 2 | run 3 |
|---|---|---|---|
| before (fc84ed4) | 3.46 / 4.76 s / 1.38x | 3.89 / 5.47 s / 1.41x | 3.58 / 5.37 s / 1.50x |
| after | 3.54 / 4.59 s / 1.30x | 3.39 / 4.66 s / 1.37x | 3.76 / 4.69 s / 1.25x |

    for root in /work/main /work/wt/runner2; do SOCIALSIM_ROOT=$root \
      python experiments/bench/runner_bench.py --set episodes=10 --trials 2; done

A busy machine flatters both ratios (main's was 1.53x quiet); expect about 1.4x quiet. The
instruction counts (callgrind, the same work, ``--set episodes=4``: 216 episodes) do not depend
on the load: bare loop 3.37 G, ``socialsim run`` 5.79 G before (1.72x), 5.28 G after (1.57x).
Of the 7.7 M instructions the runner adds per episode, 5.2 M are the one ``json`` encoding of
the 38 KB line (sorting keys, escaping about 3,400 strings, joining the chunks); the rest is the
per-step log, the summary's ``jsonable`` and the config check (which builds two envs per cell,
about 0.1 s, in ``socialsim.config``). Measured and not done: encoding without ``sort_keys``
where the dicts are built in key order (the envs' payloads and summaries are not, so it cannot
be guaranteed; on this grid's record a fully presorted record encodes about 15% faster with the
sort, 25% without it), and a plain-check walk in place of the summary's ``jsonable`` copy
(estimated 0.05 ms an episode, and exact only when every key is a string). Meeting 1.3x on a
quiet machine still means encoding less per episode.

Quiet machine (load average under 1), 2026-12-01 late evening, main 2547d38, ``--trials 3``:
bare loop 2.97 s CPU, ``socialsim run`` 4.35 s CPU, **1.47x** (1.53x before this change on the
quiet machine; wall 1.50x). The goal (1.3x) is not met.

Then the line is written by orjson wherever it writes the standard encoder's text, byte for byte
(:func:`socialsim.plain_json.canonical_json`; the other values go to ``json``), a NaN or an
infinity is ``null`` (strict JSON), the env's summary is encoded as it is (no plain copy), and
the config check builds each distinct env once. By instruction count (valgrind callgrind of
``socialsim run`` and of the bare loop at ``--set episodes=3`` minus ``episodes=1``: 108
episodes, so imports and fixed costs cancel), per episode:

| version | bare loop | ``socialsim run`` | ratio |
|---|---|---|---|
| 20967b7 (one ``json`` encoding of the 38 KB line) | 14.15 M | 21.70 M | 1.53x |
| RapidJSON in its place (tried, not kept: it formats numbers through Python) | 14.12 M | 20.04 M | 1.42x |
| orjson | 14.12 M | 17.67 M | 1.25x |
| orjson, the summary as it is, rewards summed in one comprehension | 14.12 M | 17.00 M | 1.20x |
| and the config check's envs built once (main at 38ca50c + the workers3 merge) | 14.33 M | 17.00 M | 1.19x |

Encoding this grid's line alone: ``json`` 6.6 M instructions, RapidJSON 4.3 M, orjson 1.3 M
(0.85 M of a plain copy; each frozen payload costs a call of the encoder's ``default``).

Quiet machine (load average 1.5 falling to 1.0, no other job), 2026-12-01 22:20, ``--trials 3``,
20967b7 and this version run alternately by the same command, twice each (``SOCIALSIM_ROOT``
pointing at a detached checkout of 20967b7):

| version | CPU: bare / ``socialsim run`` / ratio | wall ratio |
|---|---|---|
| 20967b7 | 3.22 / 4.20 s / 1.31x; 3.02 / 4.34 s / 1.43x | 1.29x; 1.46x |
| this version | 2.92 / 3.25 s / **1.11x**; 3.48 / 3.90 s / **1.12x** | 1.14x; 1.13x |

The goal (<= 1.3x) is met.

2026-12-02, a quiet and much faster machine (the bare loop 0.83 s, against 2.9-3.5 s the
evening before), ``--trials 2``, main (9978ac4, through a second venv pointed at a detached
checkout) and the untracked bus log (messages made when first read, records encoded from the
plain payloads: ``MessageBus.fields``) alternately, twice each; CPU, bare / ``socialsim run`` /
ratio: main 0.83 / 1.05 s / 1.26x, 0.83 / 1.06 s / 1.27x (wall 1.28x, 1.29x); after 0.93 / 1.13
s / **1.21x**, 0.95 / 1.17 s / **1.23x** (wall 1.22x, 1.24x). The runner's fixed part (the
config check, the manifest, the commits) weighs more on the faster machine than the 1.11x of
the evening before. Both sides are 8-14% slower in seconds: this grid's scripted agents read
their inboxes, and a reader now makes the messages it reads (about 0.7 us each) where the env
made them at publishing; the runner's share shrinks since its records are encoded from the
bus's plain payloads (no encoder callback per read-only payload). The goal is met. Once a bus
with readers made its messages as they are posted (and the envs named their payloads' views),
``--trials 3``, two rounds alternately: main 0.81 / 1.03 s / 1.28x, 0.83 / 1.06 s / 1.27x; this
version 0.87 / 1.08 s / **1.25x**, 0.90 / 1.15 s / **1.27x** (CPU). The goal is met, by little
on this fast machine.

2026-12-04, the backends moved above the runner (``socialsim.backends``) and the episode played
by its synchronous driver (``Episode.play`` over ``choose``/``advance``), ``--trials 3`` (the
default), loaded machine: before 1.05 / 1.29 s / 1.22x CPU (wall 1.24x, load 7.4); after
1.03 / 1.27 s / **1.23x** CPU (wall 1.25x, load 3.7). The goal is met.

2026-12-05, the bus as plain data: a stream is a list of message ids, an inbox a [stream, read
count] pair per stream followed, the messages a list by id (no per-stream lists of made
messages kept in step with the streams). Instructions (callgrind, ``episodes=3`` less
``episodes=1``: 108 episodes) per episode: before (d416f47) bare loop 15.62 M, ``socialsim
run`` 18.25 M (1.17x); after 15.40 M, 18.14 M (**1.18x**: both sides cheaper, the bare loop a
little more). The bus alone: ``bus_bench.py``. CPU time, ``--trials 3``, before and after
alternately, two rounds, load average 2: before 1.13 / 1.40 s / 1.23x, 1.13 / 1.38 s / 1.23x;
after 1.13 / 1.39 s / **1.23x**, 1.14 / 1.38 s / **1.20x** (wall 1.24x, 1.22x). The goal is
met; the seconds do not tell the two apart.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from socialsim import registry
from socialsim.config import load
from socialsim.episode import build_agents
from socialsim.results import run as socialsim_run


def bare_loop(specs) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    for spec in specs:
        env = registry.make_env(spec.env_id, spec.form, **dict(spec.env_kwargs))
        agents = build_agents(spec, env.possible_agents)
        observations, infos = env.reset(seed=spec.seed)
        bus = env.unwrapped.bus  # each reset starts a new bus
        while env.agents:
            actions = {
                a: agents[a].act(observations[a], bus.read(a), infos[a])
                for a in env.agents
                if infos[a].get("decision")
            }
            observations, _, _, _, infos = env.step(actions)
        env.close()
    return time.perf_counter() - start, time.process_time() - cpu


def runner(name: str, overrides: list[str]) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as out:
        start, cpu = time.perf_counter(), time.process_time()
        results = socialsim_run(name, out=out, overrides=overrides)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        if results.failed:
            raise RuntimeError(f"{len(results.failed)} episodes failed")
        return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="align_donation_grid")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], help="overrides, as in socialsim run")
    args = parser.parse_args()
    overrides = ["workers=1", *args.set]
    specs = load(args.experiment, overrides).specs()
    bare, ran = [], []
    for trial in range(args.trials):
        bare.append(bare_loop(specs))
        ran.append(runner(args.experiment, overrides))
        print(
            f"trial {trial + 1}: bare {bare[-1][0]:.2f} s wall ({bare[-1][1]:.2f} s CPU), "
            f"socialsim run {ran[-1][0]:.2f} s wall ({ran[-1][1]:.2f} s CPU)",
            flush=True,
        )
    for what, i in (("wall", 0), ("CPU", 1)):
        low_bare, low_ran = min(t[i] for t in bare), min(t[i] for t in ran)
        print(
            f"{args.experiment}, {len(specs)} episodes, best of {args.trials}, {what}: bare "
            f"loop {low_bare:.2f} s, socialsim run {low_ran:.2f} s, ratio "
            f"{low_ran / low_bare:.2f}x (goal <= 1.3x)"
        )


if __name__ == "__main__":
    main()
