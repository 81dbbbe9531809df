"""CPU cost per call of the LLM layer (litellm included), against a local test server.

The test server (socialsim.testing.llm_server) runs in its own process, so ``time.process_time()`` here
counts only this process: socialsim's wrappers, litellm (including the worker thread its
``acompletion`` runs ``completion`` in), the OpenAI SDK, the HTTP client and asyncio. Each round
makes ``--calls`` sequential calls, then ``--calls`` calls with ``--concurrency`` in flight,
through a model built by :func:`socialsim.llm.build_model` (no cache, so every call is a
request; concurrency limit = K), and prints CPU milliseconds per call and calls per second;
the machine is shared, so ``--rounds`` repeats and the minimum and median are printed.

The server sends with TCP_NODELAY (it writes headers and body in two sends, and Nagle's
algorithm would hold the body until the client's delayed ACK, ~40 ms, which would dominate the
sequential wall time). ``--profile`` / ``--pyinstrument`` profile one sequential phase (main
thread only). It measures the library as shipped, unpatched; it prints and asserts nothing.

Figures measured with it (2 shared cores): litellm spends 10-15 ms of CPU per call (request
building in a worker thread, the OpenAI SDK, response conversion, pricing, its logging
payload), nearly all of it fixed, which caps one process at about 70 calls a second. Before
:class:`~socialsim.llm.LiteLLMModel` gave an unpriced model (a local server's) an explicit zero
per-call price, litellm's failed cost-map searches for it were about a tenth of a call's Python
work. Its httpx transport (``disable_aiohttp_transport``) measured slower, a shared client or
``shared_session`` no faster, and its module settings (callbacks, logging, telemetry, message
logging, token counter) no different from their defaults.

Usage::

    python experiments/bench/litellm_overhead_bench.py [--calls 200] [--concurrency 16]
        [--rounds 3] [--latency 0] [--model openai/test]
        [--profile [--sort tottime] [--top 40] | --pyinstrument]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import os
import pstats
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from socialsim.llm import build_model, forget_models, load_litellm  # noqa: E402

KEY_ENV = "SOCIALSIM_BENCH_KEY"


@contextlib.contextmanager
def server_process(latency: float) -> Iterator[str]:
    """The test server's URL, the server running in a process of its own."""
    command = [sys.executable, "-m", "socialsim.testing.llm_server", "--latency", str(latency)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
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


def measure(coroutine) -> tuple[float, float, float]:
    """Run a coroutine in a fresh loop; return (CPU seconds of the process, of this thread, wall
    seconds)."""
    cpu, main, wall = time.process_time(), time.thread_time(), time.perf_counter()
    asyncio.run(coroutine)
    return time.process_time() - cpu, time.thread_time() - main, time.perf_counter() - wall


def count_calls(model, n: int, offset: int) -> float:
    """Python function calls per call, in every thread (deterministic, unlike CPU time on a
    shared machine). The loop's executor threads are new, so they inherit the hook."""
    calls = [0]

    def hook(frame, event, arg) -> None:
        if event == "call":
            calls[0] += 1

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        asyncio.run(sequential(model, n, offset))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return calls[0] / n


def report(label: str, n: int, runs: list[tuple[float, float, float]]) -> None:
    cpu = sorted(1000 * c / n for c, _, _ in runs)
    main = sorted(1000 * m / n for _, m, _ in runs)
    rate = sorted(n / w for _, _, w in runs)
    print(
        f"{label:<24} cpu ms/call min {cpu[0]:6.2f} median {statistics.median(cpu):6.2f}"
        f" (main thread {statistics.median(main):5.2f})   calls/s median {statistics.median(rate):7.1f}"
        f" max {rate[-1]:7.1f}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per phase")
    parser.add_argument("--rounds", type=int, default=3, help="repeats of both phases")
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds the server waits per request"
    )
    parser.add_argument("--concurrency", type=int, default=16, help="calls in flight (K)")
    parser.add_argument("--model", default="openai/test", help="litellm model name")
    parser.add_argument("--profile", action="store_true", help="cProfile the sequential phase")
    parser.add_argument("--sort", default="tottime", help="pstats sort key (tottime, cumulative)")
    parser.add_argument("--top", type=int, default=40, help="rows of the profile to print")
    parser.add_argument(
        "--pyinstrument", action="store_true", help="pyinstrument the sequential phase instead"
    )
    args = parser.parse_args(argv)

    os.environ[KEY_ENV] = "bench-key"
    load_litellm()  # import time is not per-call cost
    with server_process(args.latency) as url:
        forget_models()
        model = build_model(
            {
                "model": args.model,
                "api_base": url,
                "api_key_env": KEY_ENV,
                "cache": False,
                "concurrency": args.concurrency,
            }
        )
        # Warm up: first-call imports and lazy setup (litellm loads provider modules lazily).
        measure(sequential(model, 20, 10**6))
        n, k = args.calls, args.concurrency
        runs: dict[str, list[tuple[float, float, float]]] = {}
        offset = 0
        for _ in range(args.rounds):
            measure(sequential(model, 3, 10**7 + offset))  # the model learns it has no price
            runs.setdefault("sequential", []).append(measure(sequential(model, n, offset)))
            runs.setdefault(f"concurrent K={k}", []).append(
                measure(concurrent(model, n, k, offset + n))
            )
            offset += 2 * n
        print(
            f"model {args.model}, server latency {args.latency} s, {n} calls per phase, "
            f"{args.rounds} rounds"
        )
        for label, measured in runs.items():
            report(label, n, measured)
        calls = count_calls(model, 50, 10**8)
        print(f"{'':<24} Python function calls per call (all threads): {calls:8.0f}")
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
