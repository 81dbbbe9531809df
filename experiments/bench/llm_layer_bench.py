"""Benchmark of the LLM layer alone: N concurrent calls through litellm to the test server.

The server adds a fixed latency per request; with a concurrency limit K the best possible wall
time is ``ceil(N / K) * latency``. The script prints the measured wall time against that ideal,
the server's peak of requests in flight, and then re-runs the same calls with a fresh model on
the same reply cache, which should make zero requests. It prints; it asserts nothing.

Usage::

    python experiments/bench/llm_layer_bench.py [--calls 64] [--limit 8] [--latency 0.2] [--in-process]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
from socialsim.llm import Accounting, ConcurrencyLimit, build_model, forget_models, load_litellm  # noqa: E402
from socialsim.testing.llm_server import ScriptedChatServer  # noqa: E402


def prompts(n: int) -> list[list[dict[str, str]]]:
    return [
        [{"role": "user", "content": f"call number {i}: reply with anything"}] for i in range(n)
    ]


async def play(model, calls) -> tuple[float, int]:
    started = time.perf_counter()
    await asyncio.gather(*(model.complete(messages) for messages in calls))
    wall = time.perf_counter() - started
    limit = model.find(ConcurrencyLimit)
    return wall, limit.slots().max_in_flight if limit is not None else -1


@contextlib.contextmanager
def chat_server(
    latency: float, in_process: bool
) -> Iterator[tuple[str, Callable[[], dict], Callable[[], None]]]:
    """``(url, stats(), reset())`` of a test server, in this process or (the default, as a real
    server would be) in its own, so that its threads do not compete for this process's GIL."""
    if in_process:
        with ScriptedChatServer(latency_s=latency) as server:
            yield server.url, server.stats, server.reset_counts
        return
    command = [sys.executable, "-m", "socialsim.testing.llm_server", "--latency", str(latency)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().strip()
        root = url.removesuffix("/v1")

        def stats() -> dict:
            with urllib.request.urlopen(f"{root}/stats") as response:
                return json.load(response)

        def reset() -> None:
            urllib.request.urlopen(
                urllib.request.Request(f"{root}/stats/reset", data=b"{}")
            ).close()

        yield url, stats, reset
    finally:
        process.terminate()
        process.wait(timeout=10)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=64, help="concurrent calls (N)")
    parser.add_argument("--limit", type=int, default=8, help="requests in flight at most (K)")
    parser.add_argument(
        "--latency", type=float, default=0.2, help="seconds the server adds per request"
    )
    parser.add_argument("--in-process", action="store_true", help="run the server in this process")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    load_litellm()
    print(
        f"litellm import: {time.perf_counter() - started:.2f} s (paid once per process, not timed below)"
    )

    calls = prompts(args.calls)
    ideal = math.ceil(args.calls / args.limit) * args.latency
    where = "in this process" if args.in_process else "in its own process"
    with (
        tempfile.TemporaryDirectory() as run_dir,
        chat_server(args.latency, args.in_process) as (url, stats, reset),
    ):
        config = {
            "model": "openai/bench-model",
            "api_base": url,
            "concurrency": args.limit,
            "cache": True,
            "timeout": 30,
        }
        # Warm the HTTP client up on a request outside the timed runs.
        asyncio.run(
            build_model({**config, "cache": False}).complete(
                [{"role": "user", "content": "warm up"}]
            )
        )
        reset()

        model = build_model(config, run_dir=run_dir)
        wall, peak = asyncio.run(play(model, calls))
        totals = model.find(Accounting).snapshot()
        server = stats()
        print(
            f"N={args.calls} calls, K={args.limit}, latency {args.latency * 1000:.0f} ms per request, server {where}"
        )
        print(
            f"first run : wall {wall:.3f} s, ideal ceil(N/K) x latency = {ideal:.3f} s, ratio {wall / ideal:.3f}"
        )
        print(
            f"            server requests {server['requests']}, peak in flight at the server "
            f"{server['max_in_flight']}, at the client {peak}"
        )
        print(
            f"            sequential reference N x latency = {args.calls * args.latency:.3f} s "
            f"({args.calls * args.latency / wall:.1f}x the measured wall time)"
        )
        print(
            f"            accounting: {totals['calls']} calls, {totals['requests']} requests, "
            f"{totals['prompt_tokens']}+{totals['completion_tokens']} tokens, mean request latency "
            f"{totals['latency_s'] / max(1, totals['calls']):.3f} s"
        )

        forget_models()  # a fresh model on the same cache file, as a re-run of the experiment is
        reset()
        again = build_model(config, run_dir=run_dir)
        cached_wall, _ = asyncio.run(play(again, calls))
        hits = again.find(Accounting).cache_hits
        print(
            f"cached re-run: wall {cached_wall:.4f} s ({100 * cached_wall / wall:.2f}% of the first run), "
            f"server requests {stats()['requests']}, cache hits {hits}/{args.calls}"
        )


if __name__ == "__main__":
    main()
