"""CPU cost per call of the LLM layer (litellm included), against a zero-latency test server.

The test server runs in its own process, so ``time.process_time()`` here counts only this
process: socialsim's wrappers, litellm, the OpenAI SDK / HTTP client and asyncio. The script
makes ``--calls`` sequential calls, then ``--calls`` calls with ``--concurrency`` in flight, each
through a model built by :func:`socialsim.llm.build_model` (no cache, so every call is a
request), and prints CPU milliseconds per call and calls per second. With ``--profile`` it also
prints the top functions of a cProfile run of the sequential calls. It prints; it asserts nothing.

Usage::

    python experiments/bench/litellm_overhead_bench.py [--calls 300] [--concurrency 16]
        [--model openai/test] [--profile] [--sort tottime] [--top 40]
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import contextlib
import cProfile
import io
import os
import pstats
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from socialsim.llm import build_model, forget_models, load_litellm  # noqa: E402

KEY_ENV = "SOCIALSIM_BENCH_KEY"


@contextlib.contextmanager
def server_process(latency: float) -> Iterator[str]:
    """The test server's URL, the server running in a process of its own."""
    script = Path(__file__).resolve().parents[2] / "tests" / "llm_server.py"
    process = subprocess.Popen(
        [sys.executable, str(script), "--latency", str(latency)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def prompt(i: int) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You are a player in a word game. Answer briefly."},
        {"role": "user", "content": f"Round {i}: give a clue for the word number {i % 4 + 1}."},
    ]


async def sequential(model, n: int, offset: int) -> None:
    for i in range(n):
        await model.complete(prompt(offset + i))


async def concurrent(model, n: int, k: int, offset: int) -> None:
    queue = list(range(offset, offset + n))

    async def worker() -> None:
        while queue:
            await model.complete(prompt(queue.pop()))

    await asyncio.gather(*(worker() for _ in range(k)))


def measure(label: str, coroutine) -> tuple[float, float]:
    """Run a coroutine in a fresh loop; return (CPU seconds, wall seconds)."""
    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(coroutine)
    return time.process_time() - cpu, time.perf_counter() - wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per phase")
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight (K)")
    parser.add_argument("--model", default="openai/test", help="litellm model name")
    parser.add_argument("--profile", action="store_true", help="cProfile the sequential phase")
    parser.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumulative)")
    parser.add_argument("--top", type=int, default=40, help="rows of the profile to print")
    parser.add_argument(
        "--pyinstrument", action="store_true", help="pyinstrument the sequential phase instead"
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a litellm module attribute (a Python literal) before the calls, to try settings",
    )
    args = parser.parse_args(argv)

    os.environ[KEY_ENV] = "bench-key"
    litellm = load_litellm()  # import time is not per-call cost
    for assignment in args.set:
        name, _, value = assignment.partition("=")
        setattr(litellm, name, ast.literal_eval(value))
    with server_process(0.0) as url:
        forget_models()
        model = build_model(
            {"model": args.model, "api_base": url, "api_key_env": KEY_ENV, "cache": False}
        )
        # Warm up: first-call imports and lazy setup (litellm loads provider modules lazily).
        measure("warmup", sequential(model, 20, 10**6))
        n = args.calls
        cpu, wall = measure("sequential", sequential(model, n, 0))
        print(
            f"sequential   n={n:<5} cpu {1000 * cpu / n:6.2f} ms/call   "
            f"{n / wall:7.1f} calls/s   wall {wall:6.2f} s"
        )
        cpu, wall = measure("concurrent", concurrent(model, n, args.concurrency, n))
        print(
            f"concurrent   n={n:<5} K={args.concurrency:<3} cpu {1000 * cpu / n:6.2f} ms/call   "
            f"{n / wall:7.1f} calls/s   wall {wall:6.2f} s"
        )
        if args.pyinstrument:
            from pyinstrument import Profiler

            with Profiler(async_mode="disabled") as profiler:
                asyncio.run(sequential(model, n, 2 * n))
            print(profiler.output_text(show_all=True))
        elif args.profile:
            profiler = cProfile.Profile()
            profiler.enable()
            asyncio.run(sequential(model, n, 2 * n))
            profiler.disable()
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
            print(out.getvalue())


if __name__ == "__main__":
    main()
