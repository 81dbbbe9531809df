"""A human study on the server (``socialsim serve --study FILE``): participants and the lobby.

Each arrival at the study's one link becomes a :class:`Participant` with an id (``P0001``...),
the panel's id from the link, a treatment (:func:`socialsim.study.assign`) and a private token
(the page keeps it, so a reload resumes). A participant goes through the stages
``consent -> instructions -> quiz -> lobby -> playing -> (lobby ...) -> done``, or ends
``dropped`` (declined, failed the quiz, left, or stopped answering). The :class:`Lobby` forms
games per treatment as people wait: as soon as the study's ``people`` seats can be filled, or,
once the longest waiting person has waited ``wait_seconds``, with those waiting and the
study's filler agent in the empty seats (the game's seat specs say so). Every game is an
ordinary web :class:`~socialsim.web.sessions.Session` in ``handover`` mode, played by the one
runner and logged in a results directory of its own under ``RESULTS/STUDY/games/``, so
``socialsim report`` reads it, and its record is copied into the study's folder as it ends
(:func:`socialsim.study.export.pool`: the folder reads as one results directory, the treatment
its cell); a person who leaves or idles at a move hands the seat to the
filler from that turn on (the seat's events say which).

Payment (:meth:`socialsim.study.Payment.amount`): a participant who consented is paid the
show-up fee plus the points (the seat's return) of every game they played to its end, times the
rate, at most the cap; a game they left counts no points. The export (:meth:`Lobby.rows`,
``participants.csv`` in the study's folder, rewritten within a quarter second of a change) holds one
row per participant and no personal data beyond the panel's id. The export and the state a
restarted server takes up (``study_state.json``) are :mod:`socialsim.web.study_record`'s.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import time
from pathlib import Path
from typing import Any

import numpy as np

from socialsim import config as config_module
from socialsim import study as study_module
from socialsim.config import ConfigError
from socialsim.play import session as play_session
from socialsim.seeding import episode_seed
from socialsim.web import study_record
from socialsim.web.sessions import GAMES, Session, Sessions, new_token
from socialsim.web.study_record import Game, Participant

#: the stages before a first game: a participant dropped there saw no treatment
PRE_GAME = ("consent", "instructions", "quiz", "lobby")

MAX_PARTICIPANTS = 10_000


def _key(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Lobby:
    """The study's participants and games (see the module docstring); ``sessions`` is the
    server's, so each game's seat pages and API are the ordinary ones."""

    def __init__(self, study: study_module.Study, sessions: Sessions):
        self.study = study
        self.sessions = sessions
        self.folder = sessions.results / study.name
        self.participants: list[Participant] = []
        self.by_key: dict[str, Participant] = {}
        self.by_panel: dict[str, Participant] = {}
        self.running: list[Game] = []
        self.games_started = 0
        self.paused = False
        self.ended = False
        self.dirty = False  # a change not yet written (:meth:`flush`)
        self.pooled: set | None = None  # the records pooled in the folder (study_record.pool)
        self._draws = np.random.default_rng(study.seed)
        #: treatment index -> (its experiment's game, the experiment file, its --set keys)
        self.games = [self._game_of(t) for t in study.treatments]

    def _game_of(self, treatment: study_module.Treatment) -> str:
        where = f"treatments.{treatment.name}"
        try:
            experiment = config_module.load(treatment.experiment, treatment.overrides)
        except ConfigError as error:
            raise ConfigError(f"{where}: {error}") from None
        env_id = experiment.cells[0][1]["env"]["id"]
        if env_id not in GAMES:
            raise ConfigError(
                f"{where}: env {env_id!r} has no seat page; allowed: {', '.join(GAMES)}"
            )
        game = GAMES[env_id]
        try:  # the people's seats and the filler, checked as a game of it would be
            play_session.human_experiment(
                game,
                list(self.study.people),
                [treatment.experiment],
                treatment.overrides,
                seed=0,
                specs={self.study.people[-1]: self.study.filler},
                filler=self.study.filler,
            )
        except ConfigError as error:
            raise ConfigError(f"{where}: {error}") from None
        return game

    # -- participants ---------------------------------------------------------------------

    def arrive(self, panel_id: Any) -> Participant:
        """A new participant (a :class:`ConfigError` if the panel's id is malformed, already
        taken part, or the study is closed or full)."""
        if self.ended:
            raise ConfigError("the study has ended; thank you")
        if len(self.participants) >= MAX_PARTICIPANTS:
            raise ConfigError(f"the study is full ({MAX_PARTICIPANTS} participants)")
        panel_id = panel_id if isinstance(panel_id, str) else ""
        if panel_id and not study_module.PANEL_ID.fullmatch(panel_id):
            raise ConfigError(
                f"{self.study.id_parameter}: letters, digits and '_.:-', at most 64 characters"
            )
        if panel_id and panel_id in self.by_panel:
            raise ConfigError(
                f"{self.study.id_parameter}: this id has already taken part; continue in the "
                "browser you started in"
            )
        index = len(self.participants)
        counts = [0] * len(self.study.treatments)
        for p in self.participants:  # those who left before their first game are replaced
            if not (p.stage == "dropped" and p.left_stage in PRE_GAME and not p.games):
                counts[p.treatment] += 1
        draw = self.draw()
        treatment = study_module.assign(self.study, index, counts, draw)
        person = Participant(
            id=f"P{index + 1:04d}",
            panel_id=panel_id,
            treatment=treatment,
            token=new_token(),
            arrived=time.time(),
        )
        self.participants.append(person)
        self.by_key[_key(person.token)] = person
        if panel_id:
            self.by_panel[panel_id] = person
        self.save()
        return person

    def draw(self) -> float:
        """The next number of the study's seeded generator: one drawn at every arrival, so the
        "random" assignment is the same for the same arrivals."""
        return float(self._draws.random())

    @staticmethod
    def key_of(token: str) -> str:
        return _key(token)

    def find(self, token: str | None) -> Participant | None:
        """The participant holding ``token`` (looked up by its hash), else ``None``."""
        return self.by_key.get(_key(token)) if isinstance(token, str) else None

    def consent(self, person: Participant, agree: bool) -> None:
        self._at(person, "consent")
        if not agree:
            self._drop(person, "declined consent")
            return
        person.consented = time.time()
        person.stage = "instructions"
        self.save()

    def read_instructions(self, person: Participant) -> None:
        self._at(person, "instructions")
        person.stage = "quiz" if self.study.quiz else "lobby"
        self._to_lobby(person)

    def answer_quiz(self, person: Participant, answers: Any) -> list[int]:
        """Check the quiz; the questions answered wrong (their indices), none when passed."""
        self._at(person, "quiz")
        quiz = self.study.quiz
        if not isinstance(answers, list) or len(answers) != len(quiz):
            raise ConfigError(f"answers: a list of {len(quiz)} choices, one per question")
        person.quiz_attempts += 1
        wrong = [i for i, (q, a) in enumerate(zip(quiz, answers, strict=True)) if a != q.answer]
        person.quiz_wrong = wrong
        limit = self.study.max_quiz_attempts
        if not wrong:
            person.stage = "lobby"
            self._to_lobby(person)
        elif limit and person.quiz_attempts >= limit:
            self._drop(person, f"did not pass the quiz in {limit} attempts")
        else:
            self.save()
        return wrong

    def leave(self, person: Participant) -> None:
        """The person leaves the study: a game they play goes on with the filler in their seat."""
        if person.stage in ("done", "dropped"):
            return
        if person.game is not None:
            session, seat = person.game
            session.consoles[seat].leave(f"the person in {seat} left the study")
        self._drop(person, "left the study")

    def _at(self, person: Participant, stage: str) -> None:
        if person.stage != stage:
            raise LookupError(f"this participant is at the {person.stage} stage, not {stage}")

    def _to_lobby(self, person: Participant) -> None:
        if person.stage == "lobby":
            person.waiting_since = time.monotonic()
        self.save()

    def _drop(self, person: Participant, reason: str) -> None:
        person.left_stage, person.left = person.stage, reason
        person.stage = "dropped"
        self._pay(person)
        self.save()

    def _pay(self, person: Participant) -> None:
        person.payment = self.study.payment.amount(person.points) if person.consented else 0.0

    # -- games ----------------------------------------------------------------------------

    async def run(self, every: float = 0.25) -> None:
        """Form games and collect finished ones until cancelled."""
        while True:
            await self.tick()
            self.flush()
            await asyncio.sleep(every)

    async def tick(self) -> None:
        self._collect()
        if self.paused or self.ended:
            return
        k = len(self.study.people)
        for index in range(len(self.study.treatments)):
            while True:
                waiting = sorted(
                    (p for p in self.participants if p.stage == "lobby" and p.treatment == index),
                    key=lambda p: p.waiting_since or 0.0,
                )
                if not waiting:
                    break
                overdue = time.monotonic() - (waiting[0].waiting_since or 0.0)
                if len(waiting) < k and overdue < self.study.wait_seconds:
                    break
                members = waiting[:k]
                for p in members:
                    p.stage = "playing"  # held while the game is opened off the loop
                try:
                    game = await asyncio.to_thread(self._open, index, members)
                except (ConfigError, OSError) as error:
                    for p in members:
                        self._drop(p, f"the game could not start: {error}")
                    continue
                self.seat(game)

    def _open(self, index: int, members: list[Participant]) -> Game:
        treatment = self.study.treatments[index]
        people = list(self.study.people[: len(members)])
        empty = sorted(set(self.study.people) - set(people))
        number = self.games_started
        self.games_started += 1
        game = Game(secrets.token_hex(8), number, index, members)
        out = self.out_of(game)
        experiment = self.experiment_of(game)
        play_session.prepare(experiment, out)  # a directory holding another game: refused
        play_session.write_manifest(experiment, out, 1)
        study_facts = {
            "study": self.study.name,
            "game": number,
            "treatment": treatment.name,
            "factors": dict(treatment.factors),  # a crossed treatment's values: its cell
            "participants": {seat: p.id for seat, p in zip(people, members, strict=True)},
            "filled_by_filler": empty,
        }
        (out / "study_game.json").write_text(json.dumps(study_facts, indent=1), encoding="utf-8")
        game.session = self.session_of(game, experiment)
        return game

    def out_of(self, game: Game) -> Path:
        name = self.study.treatments[game.treatment].name
        return self.folder / "games" / f"g{game.number + 1:04d}_{name}"

    def experiment_of(self, game: Game):
        """The experiment of ``game``: the same every time it is built (a restart rebuilds it)."""
        treatment = self.study.treatments[game.treatment]
        people = list(self.study.people[: len(game.members)])
        return play_session.human_experiment(
            self.games[game.treatment],
            people,
            [treatment.experiment],
            treatment.overrides,
            seed=episode_seed(self.study.seed, game.number),
            specs={seat: self.study.filler for seat in self.study.people[len(people) :]},
            filler=self.study.filler,
        )

    def session_of(self, game: Game, experiment, tokens=None) -> Session:
        out = self.out_of(game)
        return Session(
            game.sid,
            experiment,
            play_session.prepare(experiment, out),
            out,
            list(self.study.people[: len(game.members)]),
            tokens=tokens,
            idle_timeout=self.study.idle_seconds,
            handover=True,
        )

    def seat(self, game: Game) -> None:
        session = game.session
        self.sessions.by_id[session.id] = session
        for seat, p in zip(self.study.people, game.members, strict=False):
            p.game = (session, seat)
            if p.stage == "dropped":  # left while the game was being opened
                session.consoles[seat].leave(f"the person in {seat} left the study")
        self.running.append(game)
        self.save()
        self.flush()  # on disk before its first answer is journaled: a restart resumes it
        session.start()

    def _collect(self) -> None:
        still = []
        for game in self.running:
            session = game.session
            if session.record is None and (session.thread is None or session.thread.is_alive()):
                still.append(game)
                continue
            self.finished(game, session.record)
        if len(still) != len(self.running):
            self.running = still
            self.save()

    def finished(self, game: Game, record) -> None:
        for seat, person in zip(self.study.people, game.members, strict=False):
            self._played(person, self.out_of(game).name, seat, record)
        study_record.pool(self, [self.out_of(game)])

    def _played(self, person: Participant, name: str, seat: str, record) -> None:
        handover = next(
            (e for e in (record.events.get(seat, []) if record else []) if "handover" in e), None
        )
        points = float(record.returns.get(seat, 0.0)) if record and record.status == "done" else 0
        person.games.append(
            {
                "game": name,
                "seat": seat,
                "status": record.status if record else "stopped",
                "points": points,
                "handover_turn": handover["turn"] if handover else None,
            }
        )
        person.game = None
        if person.stage == "dropped":
            return
        if handover is not None:
            self._drop(person, handover["reason"])
            return
        person.points += points
        if len(person.games) >= self.study.games:
            person.stage = "done"
            person.completed = time.time()
            self._pay(person)
        else:
            person.stage = "lobby"
            person.waiting_since = time.monotonic()

    # -- what is kept on disk, and the monitor --------------------------------------------

    def save(self) -> None:
        """Note a change; :meth:`flush` writes it (the lobby's loop, every ``every`` seconds:
        the files are rewritten whole, so not at every click of hundreds of people)."""
        self.dirty = True

    def flush(self) -> None:
        """Rewrite the export and the state a restarted server takes up, if anything changed."""
        if self.dirty:
            self.dirty = False
            study_record.save(self)

    def rows(self) -> list[dict[str, Any]]:
        return study_record.rows(self)

    def csv_text(self) -> str:
        return study_record.csv_text(self)

    def monitor(self) -> dict[str, Any]:
        """What the experimenter's page shows: participants by stage, games, handovers, pay."""
        stages = dict.fromkeys(study_record.STAGES, 0)
        by_treatment = {t.name: 0 for t in self.study.treatments}
        for p in self.participants:
            stages[p.stage] += 1
            by_treatment[self.study.treatments[p.treatment].name] += 1
        return {
            "study": self.study.name,
            "paused": self.paused,
            "ended": self.ended,
            "participants": len(self.participants),
            "stages": stages,
            "treatments": by_treatment,
            "games_started": self.games_started,
            "games_running": len(self.running),
            "handovers": sum(len(p.handovers) for p in self.participants),
            "paid": round(sum(p.payment or 0.0 for p in self.participants), 2),
            "currency": self.study.payment.currency,
        }

    def resume(self) -> None:
        """Take up the study where a stopped (or killed) server left it
        (:func:`socialsim.web.study_record.resume`)."""
        study_record.resume(self)


__all__ = ["Game", "Lobby", "Participant"]
