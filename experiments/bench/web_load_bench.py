"""Load test of ``socialsim serve`` on loopback: N concurrent sessions, one scripted "person"
each, driven through the HTTP and WebSocket API exactly as a seat page drives it.

Each session is the bundled ``align_quickstart`` donation game (9 players, 24 rounds, scripted
discriminators and an entrant) with ``agent_0`` played over the API: the bot listens on the
seat's socket and answers every request (cooperate; a praising gossip). A *turn latency* is
the time from an answer's POST to the seat's next request arriving on its socket (the server's
work plus the agents' moves in between). The run is bounded in sessions and in wall time; it
prints the error count, the p50/p95/max turn latency and the wall time. It asserts nothing.

Usage::

    python experiments/bench/web_load_bench.py [--sessions 50] [--timeout 180]

Measured on a shared 2-core box (50 sessions, 50 games logged, 1,043 timed turns): 0 errors,
turn latency p50 384 ms, p95 613 ms, max 833 ms, wall 11.2 s (when one event loop played every
session: p50 372 ms, p95 694 ms, max 1.27 s, wall 13.8 s). Each session's game plays in a
thread of its own and the server's loop serves the sockets, but the threads share the
interpreter's lock, so a turn still waits for the moves of the games in flight: the figure is a
ceiling on one process, not a per-game cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path

import aiohttp
import uvicorn

from socialsim.web.app import create_app

HOST_TOKEN = "bench-host-token"


def start_server(results: Path) -> tuple[uvicorn.Server, str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(create_app(results, HOST_TOKEN), log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"127.0.0.1:{sock.getsockname()[1]}"


async def one_session(http: aiohttp.ClientSession, address: str, seed: int, latencies, errors):
    created = await http.post(
        f"http://{address}/api/sessions",
        json={"experiment": "align_quickstart", "humans": ["agent_0"], "seed": seed},
        headers={"Authorization": f"Bearer {HOST_TOKEN}"},
    )
    if created.status != 200:
        errors.append(f"create {created.status}")
        return
    data = await created.json()
    params = dict(p.split("=") for p in data["links"]["agent_0"].split("#")[1].split("&"))
    base = f"{address}/api/sessions/{params['session']}/seats/agent_0"
    auth = {"Authorization": f"Bearer {params['token']}"}
    sent_at = None
    seen = -1
    async with http.ws_connect(f"ws://{base}/live?token={params['token']}") as ws:
        async for message in ws:
            state = json.loads(message.data)
            if state["status"] == "over":
                return
            if state["status"] != "your_turn" or state["version"] == seen:
                continue
            seen = state["version"]
            if sent_at is not None:
                latencies.append(time.perf_counter() - sent_at)
            fields = [f["name"] for f in state["request"]["fields"]]
            answer = (
                {"tone": "praising", "message": "fair dealing"}
                if "tone" in fields
                else {"move": "cooperate"}
            )
            sent_at = time.perf_counter()
            reply = await http.post(f"http://{base}/answer", json={"answer": answer}, headers=auth)
            if reply.status != 200:
                errors.append(f"answer {reply.status}: {await reply.text()}")
                return


async def run(address: str, sessions: int, timeout: float) -> tuple[list[float], list[str]]:
    latencies: list[float] = []
    errors: list[str] = []
    async with aiohttp.ClientSession() as http:
        tasks = [one_session(http, address, seed, latencies, errors) for seed in range(sessions)]
        try:
            await asyncio.wait_for(asyncio.gather(*tasks), timeout)
        except TimeoutError:
            errors.append(f"timeout after {timeout:g} s")
    return latencies, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server, address = start_server(Path(folder))
        started = time.perf_counter()
        latencies, errors = asyncio.run(run(address, args.sessions, args.timeout))
        wall = time.perf_counter() - started
        logged = sum(1 for _ in Path(folder).glob("*/episodes.jsonl"))
        server.should_exit = True
    quantiles = statistics.quantiles(latencies, n=20) if len(latencies) > 1 else [0.0] * 19
    print(f"sessions: {args.sessions}, logged games: {logged}, timed turns: {len(latencies)}")
    print(f"errors: {len(errors)}" + (f" (first: {errors[0]})" if errors else ""))
    if latencies:
        print(
            f"turn latency: p50 {statistics.median(latencies) * 1000:.0f} ms, "
            f"p95 {quantiles[18] * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms"
        )
    print(f"wall: {wall:.1f} s")


if __name__ == "__main__":
    main()
