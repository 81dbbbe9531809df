"""``socialsim study-test STUDY.toml --participants N``: try a study with simulated people.

The study is served as ``socialsim serve --study`` serves it (the same app, on 127.0.0.1 on a
free port, in this process), and N simulated participants go through it over real HTTP and
websockets, as a browser would: they arrive at the public link with a panel id, read and agree
to the consent page (a few decline), read the instructions, answer the quiz (some wrongly at
first), wait in the lobby, play their games from each seat's live socket, answering every
request with a legal move (a few leave the study mid-game, a few stop answering, so the filler
takes their seat), and go back to the lobby until they are done. Then it prints what the study
exports (``participants.csv`` under ``--results``): participants by status and treatment, the
games and their records, handovers and payments. Each participant's choices come from a seeded
generator (``--seed``); the timing of a real server makes the groupings vary.

``--chat-server`` starts the shipped test chat server (:class:`~socialsim.testing.llm_server.
ScriptedChatServer` answering with :class:`~socialsim.testing.playground.PlayPolicy`) and points
``SOCIALSIM_STUDY_API_BASE`` at it, so a study whose LLM seats read that variable runs offline.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import dataclasses
import io
import json
import os
import socket
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from socialsim.config import ConfigError

#: shares of the simulated participants who behave so (the rest play every game to its end)
DECLINE, WRONG_FIRST, LEAVE, SILENT = 0.04, 0.3, 0.08, 0.04


def add_study_test_command(sub) -> None:
    test = sub.add_parser(
        "study-test", help="try a study with simulated participants over HTTP and websockets"
    )
    test.add_argument("study", metavar="STUDY.toml")
    test.add_argument("--participants", type=int, default=12, metavar="N")
    test.add_argument("--seed", type=int, default=0, help="the simulated people's choices")
    test.add_argument(
        "--results", default="results/study-test", help="where the games and the export go"
    )
    test.add_argument(
        "--chat-server",
        action="store_true",
        help="answer the LLM seats with the shipped test chat server (SOCIALSIM_STUDY_API_BASE)",
    )
    test.add_argument(
        "--arrival-seconds",
        type=float,
        default=0.05,
        help="seconds between two arrivals (default 0.05)",
    )
    test.set_defaults(func=cmd_study_test)


def cmd_study_test(args: argparse.Namespace) -> int:
    if args.participants < 1:
        raise ConfigError(f"--participants: at least 1, got {args.participants}")
    if not args.arrival_seconds >= 0:
        raise ConfigError(f"--arrival-seconds: >= 0, got {args.arrival_seconds}")
    from socialsim import study as study_module

    try:
        study_module.load(args.study)
    except ConfigError as error:
        raise ConfigError(f"{args.study}: {error}") from None
    summary = study_test(
        args.study,
        args.participants,
        Path(args.results),
        seed=args.seed,
        chat_server=args.chat_server,
        arrival_seconds=args.arrival_seconds,
    )
    print(summary["text"], flush=True)
    return 0 if summary["ok"] else 1


def study_test(
    path: str | os.PathLike,
    participants: int,
    results: Path,
    seed: int = 0,
    chat_server: bool = False,
    arrival_seconds: float = 0.05,
) -> dict[str, Any]:
    """Serve the study, drive ``participants`` simulated people through it, and return the
    export's rows, the games' records and a printable summary (``text``; ``ok`` when every
    participant ended completed or dropped, one row each, and every game has its record)."""
    import uvicorn

    from socialsim import study as study_module
    from socialsim.web.app import create_app
    from socialsim.web.sessions import new_token

    server = None
    if chat_server:
        from socialsim.testing.llm_server import ScriptedChatServer
        from socialsim.testing.playground import PlayPolicy

        server = ScriptedChatServer(PlayPolicy(), backlog=512).start()
        os.environ["SOCIALSIM_STUDY_API_BASE"] = server.url
    try:
        # every simulated participant comes from 127.0.0.1: the per-address limit is not tried
        study = dataclasses.replace(study_module.load(path), arrivals_per_minute=0)
        monitor = new_token()
        app = create_app(results, new_token(), study=study, monitor_token=monitor)
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        running = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not running.started:
            if not thread.is_alive():
                raise ConfigError("study-test: the server did not start")
            time.sleep(0.02)
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        try:
            started = time.monotonic()
            errors = asyncio.run(_crowd(base, study, participants, seed, arrival_seconds))
            seconds = time.monotonic() - started
            export = _get(base, "/api/study/export", monitor)
        finally:
            running.should_exit = True
            thread.join(timeout=30)
    finally:
        if server is not None:
            server.stop()
    rows = list(csv.DictReader(io.StringIO(export)))
    return _summary(study, results, rows, participants, seconds, errors)


def _get(base: str, path: str, token: str) -> str:
    import httpx

    response = httpx.get(base + path, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    response.raise_for_status()
    return response.text


async def _crowd(base: str, study, n: int, seed: int, arrival_seconds: float) -> list[str]:
    """Drive ``n`` participants; the errors any of them met (one line each)."""
    import httpx

    # an idle pooled connection is dropped before uvicorn's keep-alive (5 s) closes it, so that
    # no request is sent down a connection the server is closing
    limits = httpx.Limits(max_connections=64, keepalive_expiry=2.0)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        people = []
        for i in range(n):
            rng = np.random.default_rng([seed, i])
            people.append(asyncio.ensure_future(_participant(client, base, study, i, rng)))
            await asyncio.sleep(arrival_seconds)
        outcomes = await asyncio.gather(*people, return_exceptions=True)
    return [f"{type(e).__name__}: {e}" for e in outcomes if isinstance(e, BaseException)]


async def _participant(client, base: str, study, i: int, rng: np.random.Generator) -> None:
    """One simulated person, from the link to the end (see the module docstring)."""
    arrived = await client.post("/api/study/arrive", json={"panel_id": f"sim{i:04d}"})
    arrived.raise_for_status()
    token = arrived.json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    draws = rng.random(4)
    leaves, silent = draws[2] < LEAVE, LEAVE <= draws[2] < LEAVE + SILENT

    async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = await client.post(path, json=body, headers=auth)
        response.raise_for_status()
        return response.json()

    state = (await client.get("/api/study/me", headers=auth)).json()
    while state["stage"] not in ("done", "dropped"):
        stage = state["stage"]
        if stage == "consent":
            state = await post("/api/study/consent", {"agree": bool(draws[0] >= DECLINE)})
        elif stage == "instructions":
            state = await post("/api/study/instructions", {})
        elif stage == "quiz":
            wrong_first = draws[1] < WRONG_FIRST and state["attempts"] == 0
            answers = [q.answer for q in study.quiz]
            if wrong_first:
                question = study.quiz[0]
                answers[0] = next(c for c in question.choices if c != question.answer)
            state = await post("/api/study/quiz", {"answers": answers})
        elif stage == "playing" and "seat" in state:
            await _play(client, base, state["seat"], rng, leaves, silent, post)
            state = (await client.get("/api/study/me", headers=auth)).json()
        else:  # the lobby, or a game being opened
            await asyncio.sleep(0.2)
            state = (await client.get("/api/study/me", headers=auth)).json()


async def _play(client, base: str, seat: dict[str, str], rng, leaves: bool, silent: bool, post):
    """Play one game from the seat's live socket until it is over (or leave, or go silent)."""
    import websockets

    path = f"/api/sessions/{seat['session']}/seats/{seat['seat']}"
    auth = {"Authorization": f"Bearer {seat['token']}"}
    live = base.replace("http://", "ws://") + f"{path}/live?token={seat['token']}"
    moves = 0
    async with websockets.connect(live, max_size=2**22) as socket_:
        async for text in socket_:
            state = json.loads(text)
            if state["status"] == "over":
                return
            if state["status"] != "your_turn":
                continue
            if moves == 1 and leaves:
                await post("/api/study/leave", {})
                return
            if moves == 1 and silent:
                while True:  # a closed tab: the socket stays, nothing is sent
                    state = json.loads(await socket_.recv())
                    if state["status"] == "over":
                        return
            answer = _answer(state["request"], rng)
            response = await client.post(f"{path}/answer", json={"answer": answer}, headers=auth)
            if response.status_code == 422:  # e.g. more than the seat may give: give nothing
                answer = {k: ("0" if k == "amount" else v) for k, v in answer.items()}
                await client.post(f"{path}/answer", json={"answer": answer}, headers=auth)
            moves += 1


def _answer(request: dict[str, Any], rng) -> dict[str, str]:
    answer = {}
    for field in request["fields"]:
        if field["choices"]:
            answer[field["name"]] = str(rng.choice(field["choices"]))
        elif field["name"] == "amount":
            answer[field["name"]] = str(int(rng.integers(0, 3)))
        else:
            answer[field["name"]] = field["placeholder"]
    return answer


def _summary(
    study, results: Path, rows, participants: int, seconds: float, errors: list[str]
) -> dict[str, Any]:
    from socialsim import records

    games = sorted((results / study.name / "games").glob("g*"))
    logged = [records.read_records(g, include_failed=True) for g in games]
    complete = sum(len(r) == 1 and r[0].status == "done" for r in logged)
    filled = 0
    for g in games:
        facts = json.loads((g / "study_game.json").read_text(encoding="utf-8"))
        filled += len(facts["filled_by_filler"])
    status = Counter(r["status"] for r in rows)
    by_treatment = Counter((r["treatment"], r["status"]) for r in rows)
    ends = Counter(r["reason"] for r in rows if r["status"] == "dropped")
    paid = [float(r["payment"]) for r in rows if r["payment"]]
    wrong_pay = [
        r["participant"]
        for r in rows
        if r["status"] == "completed"
        and abs(float(r["payment"]) - study.payment.amount(float(r["points"]))) > 0.005
    ]
    ok = (
        len(rows) == participants
        and status.get("in progress", 0) == 0
        and complete == len(games)
        and not wrong_pay
        and not errors
    )
    lines = [
        f"study-test {study.name}: {participants} simulated participants in {seconds:.1f} s",
        f"  export: {len(rows)} rows in {results / study.name / 'participants.csv'}",
        "  status: " + ", ".join(f"{k} {v}" for k, v in sorted(status.items())),
    ]
    for t in study.treatments:
        counts = {s: by_treatment[(t.name, s)] for s in ("completed", "dropped", "in progress")}
        played = sum(r["treatment"] == t.name and r["games_played"] != "0" for r in rows)
        lines.append(
            f"  treatment {t.name}: {sum(counts.values())} participants "
            f"({counts['completed']} completed, {counts['dropped']} dropped; {played} played)"
        )
    lines += [
        "  dropped: " + (", ".join(f"{v} {k}" for k, v in sorted(ends.items())) or "none"),
        f"  games: {len(games)}, {complete} with a complete record, {filled} seats filled "
        "by the filler after the wait cap",
        f"  handovers: {sum(bool(r['handovers']) for r in rows)} participants' seats taken over "
        "mid-game",
        f"  payments: {len(paid)}, total {sum(paid):.2f} {study.payment.currency}, "
        f"{len(wrong_pay)} completed participants paid other than by the rule",
        f"  simulated participants stopped by an error: {len(errors)}"
        + (f" (the first: {errors[0]})" if errors else ""),
        "  every participant completed or dropped, one row each, every game recorded: "
        + ("yes" if ok else "NO"),
    ]
    return {"ok": ok, "rows": rows, "games": games, "text": "\n".join(lines)}


__all__ = ["add_study_test_command", "study_test"]
