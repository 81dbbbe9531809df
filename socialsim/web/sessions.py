"""Games with people in the browser: sessions, seat tokens and the browser console.

A :class:`Session` is one game of a bundled experiment, an operator's offered file or a host's
upload (checked by :mod:`socialsim.web.uploads`) with some seats played by people. It is
checked off the event loop (:meth:`Sessions.plan`), logged (:meth:`Sessions.open`) and runs
as a task in the server's event loop through the same runner and log as ``socialsim
play`` (:func:`socialsim.play.session.play_game`), writing its manifest to its own results
directory when it is created and its episode when it ends. Each human seat has an unguessable
token; its :class:`BrowserConsole` keeps what that seat may see now (the view the human agent
built from the seat's inbox and info, the request, the last refusal, or the ending) and wakes
the seat's live connections whenever it changes.

A session logs as it goes: ``session.json`` (the experiment, seats, seed and seat tokens,
readable by its owner only) when it is created, then every accepted answer, appended and
fsynced to ``answers.jsonl``; a seat that idles writes ``abandoned.json`` (which seat, after how
many seconds) before its game ends, and a session holding one is over. A restarted server
resumes each session without a logged episode and not abandoned by playing it again from its
seed, the people's answers replayed from the journal (the agents are seeded, and an LLM's
replies come from the directory's cache), so a crash loses at most the move being typed, and
the links keep working.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import json
import os
import secrets
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from socialsim import records
from socialsim.agents.human import decrypto, gossip
from socialsim.agents.human.request import Request
from socialsim.config import ConfigError
from socialsim.envs.decrypto.protocol import HINTS
from socialsim.play import session as play_session
from socialsim.web import uploads

#: the bundled experiments a host may start (their first grid cell), per game
EXPERIMENTS: Mapping[str, str] = {
    "decrypto_quickstart": "decrypto",
    "decrypto_baselines": "decrypto",
    "align_quickstart": "donation",
    "align_prisoners": "prisoners",
    "align_trust": "trust",
    "align_market": "market",
}


#: env id -> the game of its seat pages
GAMES: Mapping[str, str] = {e: g for g, e in play_session.GAME_ENVS.items()}
SESSION = "session.json"
JOURNAL = "answers.jsonl"
ABANDONED = "abandoned.json"
#: seconds a person may take over one move before the session ends (``serve --idle-timeout``)
IDLE_TIMEOUT = 900.0


def abandoned(out: Path) -> bool:
    """Whether the session in ``out`` ended because a person stopped answering (such a session
    is over: its ``abandoned.json`` names the seat, its episode is logged as failed, and it is
    never resumed)."""
    return (Path(out) / ABANDONED).exists()


def read_journal(out: Path) -> dict[str, list[dict[str, Any]]]:
    """seat -> its answers so far, from ``answers.jsonl`` (a torn last line is dropped)."""
    given: dict[str, list[dict[str, Any]]] = {}
    path = Path(out) / JOURNAL
    if not path.exists():
        return given
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.endswith("\n"):
            entry = json.loads(line)
            given.setdefault(entry["seat"], []).append(entry["answer"])
    return given


def read_upload(text: Any):
    """``(experiment, game)`` of an uploaded experiment file (:func:`socialsim.web.uploads.read`)."""
    return uploads.read(text, GAMES)


def _game_of(experiment) -> str:
    env_id = experiment.cells[0][1]["env"]["id"]
    if env_id not in GAMES:
        raise ConfigError(
            f"{experiment.name}: env {env_id!r} has no seat page; allowed: {', '.join(GAMES)}"
        )
    return GAMES[env_id]


def census(results: Path) -> tuple[int, int]:
    """``(over, unfinished)``: the sessions logged under ``results`` whose game is over (an
    episode logged, played or abandoned) and those a restarted server resumes."""
    over = unfinished = 0
    for path in Path(results).glob(f"*/{SESSION}"):
        out = path.parent
        if records.done_keys(out) or abandoned(out):
            over += 1
        else:
            unfinished += 1
    return over, unfinished


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(given: str | None, held: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), held.encode())


class IdleTimeout(Exception):
    """A person gave no answer within the session's idle timeout: the session ends."""


class BrowserConsole:
    """One human seat's console: the state its page shows, and the answer it waits for.

    With ``idle_timeout`` (seconds), a seat asked for a move that sends nothing for that long
    (a refused answer counts as activity and restarts the clock) tells ``abandon`` (seat, why)
    and raises :class:`IdleTimeout` in its agent, which ends the game (see :class:`Session`)."""

    def __init__(
        self,
        seat: str,
        waiting_text: str,
        replay: Sequence[Mapping[str, Any]] = (),
        journal: Callable[[str, Mapping[str, Any]], None] | None = None,
        idle_timeout: float | None = None,
        waiting: Callable[[str], str | None] | None = None,
        abandon: Callable[[str, str], None] | None = None,
    ):
        self.seat = seat
        self.replay = list(replay)  # answers given before a restart, in the order asked
        self.journal = journal
        self.idle_timeout = idle_timeout or None
        self.waiting = waiting or (lambda seat: None)  # whom this seat waits for now, if known
        self.abandon = abandon or (lambda seat, reason: None)
        self.request: Request | None = None
        self.answer: asyncio.Future | None = None
        self.active = 0.0  # when the seat last sent an answer or was asked (loop time)
        self.version = 0
        self.changed = asyncio.Condition()
        self.state: dict[str, Any] = {"status": "waiting", "waiting_for": waiting_text}
        self.invalid = 0
        self.idled: IdleTimeout | None = None  # why the seat ended its game, if it idled

    async def publish(self, state: dict[str, Any]) -> None:
        self.state = state
        self.version += 1
        async with self.changed:
            self.changed.notify_all()

    async def ask(
        self, seat: str, view: Mapping[str, Any], request: Request, error: str | None
    ) -> Mapping[str, Any]:
        if self.replay and error is None:
            return self.replay.pop(0)
        self.replay.clear()  # a refused replayed answer: the journal no longer fits the game
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
        loop = asyncio.get_running_loop()
        self.active = loop.time()
        try:
            while True:
                left = None
                if self.idle_timeout is not None:
                    left = self.active + self.idle_timeout - loop.time()
                    if left <= 0:
                        reason = f"the {self.seat} gave no answer in {self.idle_timeout:g} s"
                        self.abandon(self.seat, reason)  # on disk before the game ends
                        self.idled = IdleTimeout(reason)
                        raise self.idled
                done, _ = await asyncio.wait({self.answer}, timeout=left)
                if done:
                    return self.answer.result()
        finally:
            self.request = None

    async def give(self, answer: Mapping[str, Any]) -> None:
        """Pass a checked answer to the waiting agent (``ValueError`` with the reason if the
        game's rules refuse it; ``LookupError`` if nothing is asked of this seat now)."""
        if self.request is None or self.answer is None or self.answer.done():
            raise LookupError(f"{self.seat}: nothing is asked of this seat now")
        self.active = asyncio.get_running_loop().time()  # the person is there
        try:
            self.request.read(answer)  # the rules the agent applies, checked before it sees it
        except ValueError:
            self.invalid += 1
            raise
        view = self.state.get("view", {})
        if self.journal is not None:
            self.journal(self.seat, answer)
        self.answer.set_result(dict(answer))
        text = self.waiting(self.seat) or waiting_for(view, self.seat)
        await self.publish({"status": "waiting", "view": view, "waiting_for": text})

    async def now_waiting_for(self, text: str) -> None:
        """Say whom the seat waits for, if it is waiting and that changed."""
        if self.state.get("status") == "waiting" and self.state.get("waiting_for") != text:
            await self.publish({**self.state, "waiting_for": text})

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

    def __init__(
        self,
        sid: str,
        experiment,
        spec,
        out: Path,
        humans: Sequence[str],
        tokens: Mapping[str, str] | None = None,
        idle_timeout: float | None = None,
    ):
        self.id = sid
        self.experiment = experiment
        self.spec = spec
        self.out = out
        self.game = next(g for g, e in play_session.GAME_ENVS.items() if e == spec.env_id)
        self.tokens = dict(tokens) if tokens else {seat: new_token() for seat in humans}
        first = "the encoder's first hints" if self.game == "decrypto" else "the first round"
        given = read_journal(out)
        self.idle_timeout = idle_timeout or None
        self.consoles = {
            seat: BrowserConsole(
                seat,
                first,
                given.get(seat, ()),
                self.log_answer,
                self.idle_timeout,
                self.awaited,
                self.log_abandoned,
            )
            for seat in humans
        }
        self.deciding: list[str] = []  # the seats deciding now (told by the game's hook)
        self.task: asyncio.Task | None = None
        self.record: records.EpisodeRecord | None = None

    def seat_of(self, seat: str, token: str | None) -> BrowserConsole | None:
        """The seat's console if ``token`` is that seat's, else ``None``."""
        held = self.tokens.get(seat)
        if held is None or not same_token(token, held):
            return None
        return self.consoles[seat]

    def log_answer(self, seat: str, answer: Mapping[str, Any]) -> None:
        with open(self.out / JOURNAL, "a", encoding="utf-8") as f:
            f.write(json.dumps({"seat": seat, "answer": dict(answer)}) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def log_abandoned(self, seat: str, reason: str) -> None:
        """Write ``abandoned.json``: ``seat`` idled, so the session is over (see
        :func:`abandoned`); written whole (a temporary file renamed) and fsynced."""
        facts = {"seat": seat, "idle_timeout": self.idle_timeout, "reason": reason}
        temporary = self.out / f".{ABANDONED}.tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(facts, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, self.out / ABANDONED)

    def awaited(self, seat: str) -> str | None:
        """Whom ``seat`` waits for now: the other seats deciding, each with who plays it."""
        others = [s for s in self.deciding if s != seat]
        if not others:
            return None
        names = []
        for other in others:
            kind = self.spec.seats[other]["kind"]
            who = "a person" if other in self.consoles else kind
            verb = "to guess" if self.game == "decrypto" else "to decide"
            if self.game == "decrypto" and other == "encoder":
                verb = "to give the hints"
            names.append(f"{'the ' if self.game == 'decrypto' else ''}{other} ({who}) {verb}")
        if len(names) > 3:  # a gossip round: many decide at once
            names = [*names[:2], f"{len(names) - 2} other players"]
        return " and ".join(names)

    async def on_deciding(self, seats: list[str]) -> None:
        """The game's hook: ``seats`` are deciding now; each person's page says whom it awaits."""
        self.deciding = seats
        for other, console in self.consoles.items():
            text = self.awaited(other)
            if text is not None:
                await console.now_waiting_for(text)

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._play())

    async def _play(self) -> None:
        record = await play_session.play_game(
            self.experiment, self.spec, self.out, self.consoles, self.on_deciding
        )
        self.record = record
        module = decrypto if self.game == "decrypto" else gossip
        idled = next((c.idled for c in self.consoles.values() if c.idled is not None), None)
        for seat, console in self.consoles.items():
            ending = module.ending(record.to_json(), seat)
            if record.status != "done" and idled is not None:
                ending["outcome"] = f"The game ended: {idled}."
            elif record.status != "done":
                ending["outcome"] = "The game stopped with an error."
            # the seat's last view stays on its page, beside the ending
            view = console.state.get("view")
            await console.publish({"status": "over", "ending": ending, "view": view})


@dataclasses.dataclass(frozen=True)
class Plan:
    """A session checked and ready to log (:meth:`Sessions.plan`), nothing written yet."""

    sid: str
    name: str
    experiment: Any
    spec: Any
    out: Path
    humans: list[str]
    upload: str


class Sessions:
    """Every session of a server, by id; sessions log under ``results``. A host starts the
    bundled :data:`EXPERIMENTS`, the operator's ``offered`` experiment files (which, unlike an
    upload, may name models, servers and key variables) or an upload."""

    def __init__(
        self,
        results: Path,
        max_sessions: int = 200,
        idle_timeout: float | None = IDLE_TIMEOUT,
        offered: Sequence[str | os.PathLike] = (),
    ):
        from socialsim import config as config_module

        self.results = Path(results)
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self.by_id: dict[str, Session] = {}
        self._listing: list[dict[str, Any]] | None = None
        #: name -> (what human_experiment reads: a bundled name or a file, game)
        self.experiments: dict[str, tuple[str, str]] = {n: (n, g) for n, g in EXPERIMENTS.items()}
        for path in offered:
            experiment = config_module.load(str(path))
            self.experiments[experiment.name] = (str(path), _game_of(experiment))

    def plan(self, name: Any, humans: Any, seed: Any = None, upload: Any = "") -> Plan:
        """Check a new session (a :class:`ConfigError` naming what is wrong); writes nothing,
        so it may run off the event loop and be abandoned."""
        self._room()
        if upload:
            base, game = read_upload(upload)
            name, others = base.name, []
        elif isinstance(name, str) and name in self.experiments:
            base, (source, game) = None, self.experiments[name]
            others = [source]
        else:
            raise ConfigError(
                f"experiment: {uploads.shown(name)} is not offered; allowed: "
                f"{', '.join(self.experiments)}"
            )
        if not isinstance(humans, list) or not all(isinstance(h, str) for h in humans):
            raise ConfigError("humans: a list of seat names")
        if len(set(humans)) != len(humans):
            raise ConfigError("humans: a seat is named twice")
        if seed is not None:
            uploads.check_seed("seed", seed)
        experiment = play_session.human_experiment(game, humans, others, seed=seed, base=base)
        sid = secrets.token_hex(8)
        out = self.results / f"{experiment.name}_{sid}"
        if out.parent != self.results or out.name in ("", ".", ".."):  # names are plain
            raise ConfigError(f"name: {experiment.name!r} is not a plain name")
        spec = play_session.prepare(experiment, out)
        humans = play_session.human_seats(experiment)
        return Plan(
            sid, name, experiment, spec, out, humans, upload if isinstance(upload, str) else ""
        )

    def open(self, plan: Plan) -> Session:
        """Log a planned session (its manifest and ``session.json``) and hold it; the caller
        starts it in the event loop (:meth:`Session.start`)."""
        self._room()
        sid = plan.sid
        play_session.write_manifest(plan.experiment, plan.out, 1)
        session = Session(
            sid, plan.experiment, plan.spec, plan.out, plan.humans, idle_timeout=self.idle_timeout
        )
        facts = {
            "id": sid,
            "experiment": plan.name,
            "humans": list(session.tokens),
            "seed": plan.experiment.config["seed"],
            "tokens": session.tokens,
            "upload": plan.upload,
        }
        path = plan.out / SESSION
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # holds the keys
        with os.fdopen(descriptor, "w", encoding="utf-8") as f:
            json.dump(facts, f)
        self.by_id[sid] = session
        return session

    def _room(self) -> None:
        # a copy: sessions open in threads (see socialsim.web.app) while this one counts
        if sum(s.record is None for s in list(self.by_id.values())) >= self.max_sessions:
            raise ConfigError(f"sessions: at most {self.max_sessions} games at once")

    def resume(self) -> list[Session]:
        """Start again every session under ``results`` that has no logged episode yet (one
        that can no longer be read or checked is named on stderr and left alone)."""
        resumed = []
        for path in sorted(self.results.glob(f"*/{SESSION}")):
            out = path.parent
            if records.done_keys(out) or abandoned(out):
                continue
            try:
                session = self._resumed(out, json.loads(path.read_text(encoding="utf-8")))
            except (ConfigError, ValueError, KeyError, TypeError, OSError) as error:
                print(f"socialsim: not resuming {out}: {error}", file=sys.stderr)
                continue
            self.by_id[session.id] = session
            session.start()
            resumed.append(session)
        return resumed

    def _resumed(self, out: Path, facts: dict[str, Any]) -> Session:
        if facts.get("upload"):
            base, game = read_upload(facts["upload"])
            others = []
        elif facts["experiment"] in self.experiments:
            base, (source, game) = None, self.experiments[facts["experiment"]]
            others = [source]
        else:
            raise ConfigError(f"experiment {facts['experiment']!r} is no longer offered")
        experiment = play_session.human_experiment(
            game, facts["humans"], others, seed=facts["seed"], base=base
        )
        spec = play_session.prepare(experiment, out)
        return Session(
            facts["id"],
            experiment,
            spec,
            out,
            facts["humans"],
            tokens=facts["tokens"],
            idle_timeout=self.idle_timeout,
        )

    def offered(self) -> list[dict[str, Any]]:
        """The experiments a host may start, with their game and seats (read once)."""
        from socialsim import config as config_module
        from socialsim import registry

        if self._listing is not None:
            return self._listing
        out = []
        for name, (source, game) in self.experiments.items():
            _, cell = config_module.load(source).cells[0]
            env = registry.env_module(cell["env"]["id"]).raw_env(**cell["env"].get("kwargs", {}))
            out.append({"name": name, "game": game, "seats": list(env.possible_agents)})
        self._listing = out
        return out


__all__ = [
    "EXPERIMENTS",
    "IDLE_TIMEOUT",
    "BrowserConsole",
    "IdleTimeout",
    "Plan",
    "Session",
    "Sessions",
    "abandoned",
    "census",
    "read_upload",
]
