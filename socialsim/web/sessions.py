"""Games with people in the browser: sessions and seat tokens.

A :class:`Session` is one game of a bundled experiment, an operator's offered file or a host's
upload (checked by :mod:`socialsim.web.uploads`) with some seats played by people. It is
checked off the event loop (:meth:`Sessions.plan`), logged (:meth:`Sessions.open`) and runs
in a thread of its own, with its own event loop (:meth:`Session.start`; the server's loop only
serves the pages, so no game stalls another), through the same runner and log as ``socialsim
play`` (:func:`socialsim.play.session.play_game`), writing its manifest to its own results
directory when it is created and its episode when it ends. Each human seat has an unguessable
token and a :class:`~socialsim.web.console.BrowserConsole` (what that seat may see now). What
the game's pages say (the views, whom a seat waits for, the endings) comes from the game's view
module (:func:`socialsim.agents.human.agent.view_module`): nothing here names a game.

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
import contextlib
import dataclasses
import hmac
import json
import os
import secrets
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from socialsim import records
from socialsim.agents.human.agent import view_module
from socialsim.config import ConfigError
from socialsim.play import session as play_session
from socialsim.web import uploads
from socialsim.web.console import BrowserConsole

#: the bundled experiments a host may start (their first grid cell)
EXPERIMENTS: tuple[str, ...] = (
    "decrypto_quickstart",
    "decrypto_baselines",
    "align_quickstart",
    "align_prisoners",
    "align_trust",
    "align_market",
)


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
            if "answer" in entry:  # not a handover (:func:`read_handovers`)
                given.setdefault(entry["seat"], []).append(entry["answer"])
    return given


def read_handovers(out: Path) -> dict[str, str]:
    """seat -> why its person's seat went to the filler (a study's game), from the journal."""
    path = Path(out) / JOURNAL
    if not path.exists():
        return {}
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    entries = [json.loads(line) for line in lines if line.endswith("\n")]
    return {e["seat"]: e["handover"] for e in entries if "handover" in e}


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
    episode logged, played or abandoned) and those a restarted server resumes (one that can no
    longer be read is neither)."""
    over = unfinished = 0
    for path in Path(results).glob(f"*/{SESSION}"):
        out = path.parent
        try:
            ended = bool(records.done_keys(out)) or abandoned(out)
        except (OSError, ValueError):  # unreadable: named when a server tries to resume it
            continue
        over, unfinished = (over + 1, unfinished) if ended else (over, unfinished + 1)
    return over, unfinished


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(given: str | None, held: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), held.encode())


class Session:
    """One game: its experiment, spec, results directory, seat tokens and the thread playing it.
    With ``handover`` (a study's game, :mod:`socialsim.web.lobby`), a person who idles or leaves
    hands the seat to its filler agent and the game goes on."""

    def __init__(
        self,
        sid: str,
        experiment,
        spec,
        out: Path,
        humans: Sequence[str],
        tokens: Mapping[str, str] | None = None,
        idle_timeout: float | None = None,
        handover: bool = False,
    ):
        self.id = sid
        self.experiment = experiment
        self.spec = spec
        self.out = out
        self.game = play_session.game_of(spec.env_id)
        self.view = view_module(self.game)  # the game's words: views, waits, endings
        self.tokens = dict(tokens) if tokens else {seat: new_token() for seat in humans}
        given, gone = read_journal(out), read_handovers(out)
        self.idle_timeout = idle_timeout or None
        self.consoles = {
            seat: BrowserConsole(
                seat,
                self.view.FIRST_WAIT,
                given.get(seat, ()),
                self.log_answer,
                self.idle_timeout,
                self.waiting_for,
                self.log_handover if handover else self.log_abandoned,
                handover,
                gone.get(seat),
            )
            for seat in humans
        }
        self.deciding: list[str] = []  # the seats deciding now (told by the game's hook)
        self.thread: threading.Thread | None = None  # the game's (:meth:`start`)
        self.loop: asyncio.AbstractEventLoop | None = None  # the game's, while it runs
        self.task: asyncio.Task | None = None
        self.record: records.EpisodeRecord | None = None

    def seat_of(self, seat: str, token: str | None) -> BrowserConsole | None:
        """The seat's console if ``token`` is that seat's, else ``None``."""
        held = self.tokens.get(seat)
        if held is None or not same_token(token, held):
            return None
        return self.consoles[seat]

    def log_answer(self, seat: str, answer: Mapping[str, Any]) -> None:
        self._journal({"seat": seat, "answer": dict(answer)})

    def log_handover(self, seat: str, reason: str) -> None:
        """Journal that ``seat`` went to its filler (a restart hands it over at the same point)."""
        self._journal({"seat": seat, "handover": reason})

    def _journal(self, entry: Mapping[str, Any]) -> None:
        with open(self.out / JOURNAL, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")
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
            who = "a person" if other in self.consoles else self.spec.seats[other]["kind"]
            names.append(self.view.awaiting(other, who))
        if len(names) > 3:  # many decide at once (a round of a large game)
            names = [*names[:2], f"{len(names) - 2} other players"]
        return " and ".join(names)

    def waiting_for(self, seat: str, view: Mapping[str, Any]) -> str:
        """Whom ``seat`` waits for after answering the request of ``view``: the seats deciding
        now if the game said, else what the game's rules have come next."""
        return self.awaited(seat) or self.view.waiting_for(view)

    async def on_deciding(self, seats: list[str]) -> None:
        """The game's hook: ``seats`` are deciding now; each person's page says whom it awaits.
        Called at every step, it also lets the game's loop deliver a :meth:`stop`."""
        self.deciding = seats
        for other, console in self.consoles.items():
            text = self.awaited(other)
            if text is not None:
                console.now_waiting_for(text)
        await asyncio.sleep(0)

    def start(self) -> None:
        """Play the game in a thread of its own, with its own event loop: however long its
        agents compute, the server's loop (every other session and page) keeps answering."""
        self.thread = threading.Thread(target=self._run, name=f"session-{self.id}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            self.task = loop.create_task(self._play())
            self.loop = loop
            loop.run_until_complete(self.task)
        except asyncio.CancelledError:  # stopped: nothing logged, resumed by the next server
            pass
        except Exception as error:  # noqa: BLE001 - the session's thread is the last to know
            print(f"socialsim: session {self.id} stopped: {error}", file=sys.stderr)
        finally:
            self.loop = None
            # as asyncio.run does: the LLM transport's HTTP session closes with its loop
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def stop(self) -> None:
        """Ask the game to stop at its next step (nothing is logged: a restarted server resumes
        it); :meth:`join` waits for it."""
        loop, task = self.loop, self.task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile: it is over
                loop.call_soon_threadsafe(task.cancel)

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the game's thread; whether it has ended."""
        if self.thread is None:
            return True
        self.thread.join(timeout)
        return not self.thread.is_alive()

    async def _play(self) -> None:
        record = await play_session.play_game(
            self.experiment, self.spec, self.out, self.consoles, self.on_deciding
        )
        self.record = record
        idled = next((c.idled for c in self.consoles.values() if c.idled is not None), None)
        for seat, console in self.consoles.items():
            ending = self.view.ending(record.to_json(), seat)
            if record.status != "done" and idled is not None:
                ending["outcome"] = f"The game ended: {idled}."
            elif record.status != "done":
                ending["outcome"] = "The game stopped with an error."
            # the seat's last view stays on its page, beside the ending
            view = console.state.get("view")
            console.publish({"status": "over", "ending": ending, "view": view})


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
        self.experiments: dict[str, tuple[str, str]] = {
            n: (n, _game_of(config_module.load(n))) for n in EXPERIMENTS
        }
        for path in offered:
            experiment = config_module.load(str(path))
            play_session.refuse_generations(experiment.config, f"--offer {path}")
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
        starts it (:meth:`Session.start`)."""
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
            try:
                if records.done_keys(out) or abandoned(out):
                    continue
                session = self._resumed(out, json.loads(path.read_text(encoding="utf-8")))
            except (ConfigError, ValueError, KeyError, TypeError, OSError) as error:
                print(f"socialsim: not resuming {out}: {error}", file=sys.stderr)
                continue
            self.by_id[session.id] = session
            session.start()
            resumed.append(session)
        return resumed

    def stop(self, timeout: float = 5.0) -> list[Session]:
        """Stop every game still playing (each at its next step; nothing of it is logged, so a
        restarted server resumes it) and wait up to ``timeout`` seconds in all; the sessions
        whose thread had not ended by then (an agent deep in one decision; the threads are
        daemons, so they end with the process)."""
        playing = [s for s in list(self.by_id.values()) if s.thread is not None]
        for session in playing:
            session.stop()
        deadline = time.monotonic() + timeout
        return [s for s in playing if not s.join(max(deadline - time.monotonic(), 0.0))]

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
        """The experiments a host may start, with their game, seats and the seat the host page
        offers a person first (read once)."""
        from socialsim import config as config_module
        from socialsim import registry

        if self._listing is not None:
            return self._listing
        out = []
        for name, (source, game) in self.experiments.items():
            _, cell = config_module.load(source).cells[0]
            env = registry.env_module(cell["env"]["id"]).raw_env(**cell["env"].get("kwargs", {}))
            seats = list(env.possible_agents)
            offered = view_module(game).offered_seat(seats)
            out.append({"name": name, "game": game, "seats": seats, "offered_seat": offered})
        self._listing = out
        return out


__all__ = [
    "EXPERIMENTS",
    "IDLE_TIMEOUT",
    "Plan",
    "Session",
    "Sessions",
    "abandoned",
    "census",
    "read_upload",
]
