"""Games with people in the browser: sessions, seat tokens and the browser console.

A :class:`Session` is one game of a bundled experiment with some seats played by people. It
runs as a task in the server's event loop through the same runner and log as ``socialsim
play`` (:func:`socialsim.play.session.play_game`), writing its manifest to its own results
directory when it is created and its episode when it ends. Each human seat has an unguessable
token; its :class:`BrowserConsole` keeps what that seat may see now (the view the human agent
built from the seat's inbox and info, the request, the last refusal, or the ending) and wakes
the seat's live connections whenever it changes.
"""

from __future__ import annotations

import asyncio
import hmac
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from socialsim import records
from socialsim.agents.human import decrypto, gossip
from socialsim.agents.human.agent import Request
from socialsim.config import ConfigError
from socialsim.envs.decrypto.protocol import HINTS
from socialsim.play import session as play_session

#: the bundled experiments a host may start (their first grid cell), per game
EXPERIMENTS: Mapping[str, str] = {
    "decrypto_quickstart": "decrypto",
    "decrypto_baselines": "decrypto",
    "align_quickstart": "donation",
    "align_prisoners": "prisoners",
    "align_trust": "trust",
    "align_market": "market",
}


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(given: str | None, held: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), held.encode())


class BrowserConsole:
    """One human seat's console: the state its page shows, and the answer it waits for."""

    def __init__(self, seat: str, waiting_text: str):
        self.seat = seat
        self.request: Request | None = None
        self.answer: asyncio.Future | None = None
        self.version = 0
        self.changed = asyncio.Condition()
        self.state: dict[str, Any] = {"status": "waiting", "waiting_for": waiting_text}
        self.invalid = 0

    async def publish(self, state: dict[str, Any]) -> None:
        self.state = state
        self.version += 1
        async with self.changed:
            self.changed.notify_all()

    async def ask(
        self, seat: str, view: Mapping[str, Any], request: Request, error: str | None
    ) -> Mapping[str, Any]:
        self.request = request
        self.answer = asyncio.get_running_loop().create_future()
        await self.publish(
            {
                "status": "your_turn",
                "view": dict(view),
                "request": request.to_json(),
                "error": error,
            }
        )
        try:
            return await self.answer
        finally:
            self.request = None

    async def give(self, answer: Mapping[str, Any]) -> None:
        """Pass a checked answer to the waiting agent (``ValueError`` with the reason if the
        game's rules refuse it; ``LookupError`` if nothing is asked of this seat now)."""
        if self.request is None or self.answer is None or self.answer.done():
            raise LookupError(f"{self.seat}: nothing is asked of this seat now")
        try:
            self.request.read(answer)  # the rules the agent applies, checked before it sees it
        except ValueError:
            self.invalid += 1
            raise
        view = self.state.get("view", {})
        self.answer.set_result(dict(answer))
        await self.publish(
            {"status": "waiting", "view": view, "waiting_for": waiting_for(view, self.seat)}
        )

    async def wait_change(self, version: int, timeout: float) -> None:
        async with self.changed:
            if self.version == version:
                try:
                    await asyncio.wait_for(self.changed.wait(), timeout)
                except TimeoutError:
                    pass


def waiting_for(view: Mapping[str, Any], seat: str) -> str:
    """Who the seat waits for after its move, in the game's words."""
    if view.get("game") == decrypto.GAME:
        if view.get("decision") == HINTS:
            return "the decoder and the interceptor to guess"
        return "the encoder's next hints (after the reveal)"
    return "the other players"


class Session:
    """One game: its experiment, spec, results directory, seat tokens and the task playing it."""

    def __init__(self, sid: str, experiment, spec, out: Path, humans: Sequence[str]):
        self.id = sid
        self.experiment = experiment
        self.spec = spec
        self.out = out
        self.game = next(g for g, e in play_session.GAME_ENVS.items() if e == spec.env_id)
        self.tokens = {seat: new_token() for seat in humans}
        first = "the encoder's first hints" if self.game == "decrypto" else "the first round"
        self.consoles = {seat: BrowserConsole(seat, first) for seat in humans}
        self.task: asyncio.Task | None = None
        self.record: records.EpisodeRecord | None = None

    def seat_of(self, seat: str, token: str | None) -> BrowserConsole | None:
        """The seat's console if ``token`` is that seat's, else ``None``."""
        held = self.tokens.get(seat)
        if held is None or not same_token(token, held):
            return None
        return self.consoles[seat]

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._play())

    async def _play(self) -> None:
        record = await play_session.play_game(self.experiment, self.spec, self.out, self.consoles)
        self.record = record
        module = decrypto if self.game == "decrypto" else gossip
        for seat, console in self.consoles.items():
            ending = module.ending(record.to_json(), seat)
            if record.status != "done":
                ending["outcome"] = "The game stopped with an error."
            # the seat's last view stays on its page, beside the ending
            view = console.state.get("view")
            await console.publish({"status": "over", "ending": ending, "view": view})


class Sessions:
    """Every session of a server, by id; sessions log under ``results``."""

    def __init__(self, results: Path, max_sessions: int = 200):
        self.results = Path(results)
        self.max_sessions = max_sessions
        self.by_id: dict[str, Session] = {}

    def create(self, name: str, humans: Sequence[str], seed: int | None = None) -> Session:
        if name not in EXPERIMENTS:
            raise ConfigError(
                f"experiment: {name!r} is not offered; allowed: {', '.join(EXPERIMENTS)}"
            )
        if len([s for s in self.by_id.values() if s.record is None]) >= self.max_sessions:
            raise ConfigError(f"sessions: at most {self.max_sessions} games at once")
        if not isinstance(humans, list) or not all(isinstance(h, str) for h in humans):
            raise ConfigError("humans: a list of seat names")
        if len(set(humans)) != len(humans):
            raise ConfigError("humans: a seat is named twice")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ConfigError(f"seed: a non-negative integer, got {seed!r}")
        game = EXPERIMENTS[name]
        experiment = play_session.human_experiment(game, humans, [name], seed=seed)
        sid = secrets.token_hex(8)
        out = self.results / f"{experiment.name}_{sid}"
        spec = play_session.prepare(experiment, out)
        play_session.write_manifest(experiment, out, 1)
        session = Session(sid, experiment, spec, out, play_session.human_seats(experiment))
        self.by_id[sid] = session
        session.start()
        return session

    @staticmethod
    def offered() -> list[dict[str, Any]]:
        """The experiments a host may start, with their game and seats."""
        from socialsim import config as config_module
        from socialsim import registry

        out = []
        for name, game in EXPERIMENTS.items():
            _, cell = config_module.load(name).cells[0]
            env = registry.env_module(cell["env"]["id"]).raw_env(**cell["env"].get("kwargs", {}))
            out.append({"name": name, "game": game, "seats": list(env.possible_agents)})
        return out


__all__ = ["EXPERIMENTS", "BrowserConsole", "Session", "Sessions"]
