"""What a study keeps on disk, and how a restarted server takes it up again.

* ``participants.csv`` (:data:`EXPORT`): the export, one row per participant
  (:data:`COLUMNS`: arrival, consent, quiz attempts, games, handovers, points, payment,
  completion), no personal data beyond the panel's id.
* ``manifest.json`` and ``episodes.jsonl``: every ended game's record, pooled
  (:func:`pool`, :mod:`socialsim.study.export`), so the folder reads as a results directory.
* ``study_state.json`` (:data:`STATE`, readable by its owner only: it holds the participants'
  and seats' tokens): every participant's stage and games, the games being played, and the
  lobby's counters.

Both are rewritten whole (a temporary file renamed, the state fsynced) by the lobby's loop
within a quarter second of a change, and before a new game's first move, so a server killed at
any moment leaves the state of at most a quarter second before (a stage a person reached in that
time is asked again; a game and its journaled answers are never lost). :func:`resume` (called by
``serve --study`` as it starts) takes it up: the participants and their tokens as they were
(their links and pages keep working), a game whose record was logged is counted as finished, a
game still under way is played again from its seed with its people's journaled answers and
handovers (as :mod:`socialsim.web.sessions` resumes any game), and a participant whose game was
being opened goes back to the lobby; nothing is played or logged twice, and no game number is
used twice.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from socialsim import records
from socialsim.study import export
from socialsim.web.sessions import Session

STAGES = ("consent", "instructions", "quiz", "lobby", "playing", "done", "dropped")
EXPORT = export.EXPORT
COLUMNS = (
    "participant",
    "panel_id",
    "treatment",
    "status",
    "stage_left",
    "reason",
    "arrived",
    "consented",
    "quiz_attempts",
    "games_played",
    "games",
    "handovers",
    "points",
    "payment",
    "currency",
    "completed",
    "completion_code",
)


def _when(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


@dataclasses.dataclass
class Participant:
    """One person in the study (no personal data but the panel's id)."""

    id: str
    panel_id: str
    treatment: int
    token: str
    arrived: float
    stage: str = "consent"
    consented: float | None = None
    quiz_attempts: int = 0
    quiz_wrong: list[int] = dataclasses.field(default_factory=list)
    waiting_since: float | None = None  # time.monotonic() when they entered the lobby
    game: tuple[Session, str] | None = None  # the game and seat they play now
    games: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    points: float = 0.0
    payment: float | None = None
    completed: float | None = None
    left: str = ""  # why the participant was dropped
    left_stage: str = ""

    @property
    def handovers(self) -> list[dict[str, Any]]:
        return [g for g in self.games if g.get("handover_turn") is not None]


@dataclasses.dataclass
class Game:
    """A game the lobby formed: its session's id, its number (from 0: its seed and folder), its
    treatment (index) and its participants, seat by seat in the study's ``people`` order."""

    sid: str
    number: int
    treatment: int
    members: list[Participant]
    session: Session | None = None


STATE = "study_state.json"
#: the participant's fields kept in the state (the rest is rebuilt)
KEPT = (
    "id",
    "panel_id",
    "treatment",
    "token",
    "arrived",
    "stage",
    "consented",
    "quiz_attempts",
    "quiz_wrong",
    "games",
    "points",
    "payment",
    "completed",
    "left",
    "left_stage",
)


def rows(lobby) -> list[dict[str, Any]]:
    """One row per participant (:data:`COLUMNS`)."""
    study = lobby.study
    out = []
    for p in lobby.participants:
        status = {"done": "completed", "dropped": "dropped"}.get(p.stage, "in progress")
        out.append(
            {
                "participant": p.id,
                "panel_id": p.panel_id,
                "treatment": study.treatments[p.treatment].name,
                "status": status,
                "stage_left": p.left_stage,
                "reason": p.left,
                "arrived": _when(p.arrived),
                "consented": _when(p.consented),
                "quiz_attempts": p.quiz_attempts,
                "games_played": len(p.games),
                "games": ";".join(g["game"] for g in p.games),
                "handovers": ";".join(
                    f"{g['game']}@turn {g['handover_turn']}" for g in p.handovers
                ),
                "points": round(p.points, 4),
                "payment": "" if p.payment is None else f"{p.payment:.2f}",
                "currency": study.payment.currency,
                "completed": _when(p.completed),
                "completion_code": study.code if p.stage == "done" else "",
            }
        )
    return out


def csv_text(lobby) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows(lobby))
    return buffer.getvalue()


def save(lobby) -> None:
    """Rewrite the export and the state (see the module docstring)."""
    folder = lobby.folder
    folder.mkdir(parents=True, exist_ok=True)
    _replace(folder / EXPORT, csv_text(lobby), private=False)
    state = {
        "games_started": lobby.games_started,
        "paused": lobby.paused,
        "ended": lobby.ended,
        "participants": [{k: getattr(p, k) for k in KEPT} for p in lobby.participants],
        "running": [
            {
                "sid": g.sid,
                "number": g.number,
                "treatment": g.treatment,
                "members": [p.id for p in g.members],
                "tokens": g.session.tokens,
            }
            for g in lobby.running
        ],
    }
    _replace(folder / STATE, json.dumps(state), private=True)


def _replace(path: Path, text: str, private: bool) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    descriptor = os.open(
        temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644
    )
    with os.fdopen(descriptor, "w", encoding="utf-8") as f:
        f.write(text)
        if private:
            f.flush()
            os.fsync(f.fileno())
    os.replace(temporary, path)


def resume(lobby) -> None:
    """Take up the state a stopped or killed server left (see the module docstring)."""
    path = lobby.folder / STATE
    if not path.exists():
        return
    state = json.loads(path.read_text(encoding="utf-8"))
    by_id = {}
    for facts in state["participants"]:
        person = Participant(**facts)
        by_id[person.id] = person
        lobby.participants.append(person)
        lobby.by_key[lobby.key_of(person.token)] = person
        if person.panel_id:
            lobby.by_panel[person.panel_id] = person
        lobby.draw()  # the "random" assignment goes on as if the server had not stopped
    lobby.paused, lobby.ended = state["paused"], state["ended"]
    numbered = [p.name[1:5] for p in (lobby.folder / "games").glob("g*")]
    lobby.games_started = max([state["games_started"], *(int(n) for n in numbered if n.isdigit())])
    for facts in state["running"]:
        game = Game(
            facts["sid"], facts["number"], facts["treatment"], [by_id[m] for m in facts["members"]]
        )
        out = lobby.out_of(game)
        logged = records.read_records(out, include_failed=True) if out.exists() else []
        if logged:  # it ended before the server did: counted once, now
            lobby.finished(game, logged[-1])
            continue
        game.session = lobby.session_of(game, lobby.experiment_of(game), facts["tokens"])
        lobby.seat(game)
    now = time.monotonic()
    for person in lobby.participants:
        if person.stage == "playing" and person.game is None:  # its game was being opened
            person.stage = "lobby"
        if person.stage == "lobby":
            person.waiting_since = now
    save(lobby)
    pool(lobby)


def pool(lobby, games: list[Path] | None = None) -> None:
    """Copy the ended games' records into the study's folder, so it reads as one results
    directory (:func:`socialsim.study.export.pool`); a disk that refuses is said on stderr,
    and the next start pools what is missing."""
    try:
        if lobby.pooled is None:  # read once; then kept as games are pooled
            lobby.pooled = export.pooled(lobby.folder)
        export.pool(lobby.folder, games, lobby.pooled)
    except (OSError, ValueError, KeyError) as error:
        print(
            f"socialsim: the study's games not pooled in {lobby.folder}: {error}", file=sys.stderr
        )


__all__ = [
    "COLUMNS",
    "EXPORT",
    "STAGES",
    "STATE",
    "Game",
    "Participant",
    "csv_text",
    "pool",
    "resume",
    "rows",
    "save",
]
