"""Episode records and the experiment's event log.

An experiment writes to one directory:

* ``manifest.json`` — the resolved config, package versions, git commit (if any) and start time;
* ``episodes.jsonl`` — one complete :class:`EpisodeRecord` per line (:meth:`EpisodeRecord.line`),
  written to the file as each episode ends and committed to the disk in groups (see
  :class:`EventLog` for what survives a kill and a crash). A torn last line left by a crash
  mid-write is ignored by the reader and cut off by the next writer.

An episode is identified by its key ``(cell, episode)``. Rerunning the same experiment on the
same directory runs only the keys that have no ``done`` record; a ``failed`` record is retried.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from socialsim.plain_json import canonical_json

MANIFEST = "manifest.json"
EPISODES = "episodes.jsonl"


def cell_id(cell: dict[str, Any]) -> str:
    return canonical_json(cell)


@dataclass
class EpisodeRecord:
    experiment: str
    cell: dict[str, Any]
    episode: int
    seed: int
    env_id: str
    env_kwargs: dict[str, Any]
    form: str
    seats: dict[str, dict[str, Any]]
    status: str = "done"  # "done" | "failed"
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    returns: dict[str, float] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    counters: dict[str, dict[str, float]] = field(default_factory=dict)
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    probes: list[dict[str, Any]] = field(default_factory=list)
    # Wall-clock facts: the only part of a record that is not a function of the seed.
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        return (cell_id(self.cell), self.episode)

    def to_json(self) -> dict[str, Any]:
        # Shallow: the fields already hold plain JSON values (asdict would deep-copy every
        # message and LLM reply of the episode).
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def content(self) -> str:
        """Canonical JSON of everything but ``timing``: equal for equal seeds and configs."""
        data = self.to_json()
        del data["timing"]  # a shallow copy: deleting a key leaves the record whole
        return canonical_json(data)

    def line(self) -> str:
        """The record as its line of ``episodes.jsonl`` (canonical JSON, no newline), made once,
        where the episode was played; :meth:`Episode.line <socialsim.episode.Episode.line>`
        makes the same text without this plain copy of the record."""
        return canonical_json(self.to_json())

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EpisodeRecord:
        return cls(**data)

    @classmethod
    def from_line(cls, line: str) -> EpisodeRecord:
        return cls(**json.loads(line))


class EventLog:
    """Append-only writer of ``episodes.jsonl`` in an experiment directory, committing in groups.

    The guarantee: each record reaches the operating system (one ``write``) when it is appended,
    so a killed run (Ctrl-C, SIGKILL, an exception) loses no appended record. It reaches the disk
    (``fsync``) at the latest ``commit_every`` records or ``commit_seconds`` seconds after it was
    appended, and at :meth:`close`; so a crash of the machine loses at most that uncommitted
    tail. A tail lost, or torn mid-line, is safe: a torn line is ignored by the reader and cut off
    by the next writer, and the episodes of the lost tail have no ``done`` record, so the next
    run plays them again (the same seeds give the same records). No record is ever half kept.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        commit_every: int = 64,
        commit_seconds: float = 1.0,
    ):
        self.directory = Path(directory)
        self.path = self.directory / EPISODES
        self.directory.mkdir(parents=True, exist_ok=True)
        _cut_torn_tail(self.path)
        self.commit_every = commit_every
        self.commit_seconds = commit_seconds
        self._uncommitted = 0
        self._committed_at = time.monotonic()
        # Unbuffered: each write() is one system call, so a record is at the OS when appended.
        self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 - closed in close()

    def append(self, record: EpisodeRecord) -> None:
        self.write(record.line())

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        """Append one record's :meth:`~EpisodeRecord.line` (encoded where it was played);
        ``status`` and ``key`` are the record's, for logs that keep them."""
        self._file.write(line.encode() + b"\n")
        self._uncommitted += 1
        if (
            self._uncommitted >= self.commit_every
            or time.monotonic() - self._committed_at >= self.commit_seconds
        ):
            self.commit()

    def commit(self) -> None:
        """fsync what was appended."""
        if self._uncommitted:
            os.fsync(self._file.fileno())
            self._uncommitted = 0
        self._committed_at = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            self.commit()
            self._file.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cut_torn_tail(path: Path) -> None:
    """Remove a last line that a killed writer left without its newline."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        data = f.read()
        if data.endswith(b"\n"):
            return
        f.truncate(data.rfind(b"\n") + 1)


def iter_lines(directory: str | os.PathLike) -> Iterator[dict[str, Any]]:
    path = Path(directory) / EPISODES
    if not path.exists():
        return
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.endswith("\n"):
                return  # torn tail of a killed run
            yield json.loads(line)


def read_records(directory: str | os.PathLike, include_failed: bool = False) -> list[EpisodeRecord]:
    """The experiment's records, one per key: the ``done`` one if any, else the last ``failed``
    one (only with ``include_failed``). Sorted by cell, then episode."""
    best: dict[tuple[str, int], EpisodeRecord] = {}
    for data in iter_lines(directory):
        record = EpisodeRecord.from_json(data)
        held = best.get(record.key)
        if held is None or held.status != "done":
            best[record.key] = record
    records = [r for r in best.values() if include_failed or r.status == "done"]
    return sorted(records, key=lambda r: r.key)


def read_failures(directory: str | os.PathLike) -> list[EpisodeRecord]:
    """The last ``failed`` record of each key that has no ``done`` one."""
    return [r for r in read_records(directory, include_failed=True) if r.status != "done"]


def failure_reasons(failed: Iterable[EpisodeRecord]) -> list[tuple[str, int, EpisodeRecord]]:
    """``(reason, count, first record)`` for each distinct error, the most frequent first."""
    groups: dict[str, list[EpisodeRecord]] = {}
    for record in failed:
        groups.setdefault(record.error or "(no reason recorded)", []).append(record)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [(reason, len(group), group[0]) for reason, group in ordered]


def done_keys(directory: str | os.PathLike) -> set[tuple[str, int]]:
    return {
        (cell_id(d["cell"]), d["episode"]) for d in iter_lines(directory) if d["status"] == "done"
    }


def read_manifest(directory: str | os.PathLike) -> dict[str, Any] | None:
    path = Path(directory) / MANIFEST
    if not path.exists():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(directory: str | os.PathLike, manifest: dict[str, Any]) -> None:
    path = Path(directory) / MANIFEST
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def episode_rows_frame(records: Iterable[EpisodeRecord]):
    """One row per episode: cell values, seed, status, error, and the env's summary
    (``summary.KEY`` columns for its plain values)."""
    import pandas as pd

    rows = []
    for record in records:
        row = {f"cell.{k}": v for k, v in record.cell.items()}
        row.update(
            episode=record.episode,
            seed=record.seed,
            env_id=record.env_id,
            status=record.status,
            error=record.error,
            wall_s=record.timing.get("wall_s"),
        )
        row.update(
            {
                f"summary.{k}": v
                for k, v in record.summary.items()
                if isinstance(v, (str, int, float, bool)) or v is None
            }
        )
        rows.append(row)
    return pd.DataFrame(rows)


def llm_calls_frame(records: Iterable[EpisodeRecord]):
    """One row per logged LLM call (an ``llm_call`` event): episode, seat and the call's fields
    (model, tokens, cost, latency, cached, error...)."""
    import pandas as pd

    rows = []
    for record in records:
        for seat, events in record.events.items():
            for index, event in enumerate(events):
                if event.get("type") != "llm_call":
                    continue
                row = {f"cell.{k}": v for k, v in record.cell.items()}
                row.update(episode=record.episode, seed=record.seed, seat=seat, event=index)
                row.update({k: v for k, v in event.items() if k != "type"})
                rows.append(row)
    return pd.DataFrame(rows)


def episodes_frame(records: Iterable[EpisodeRecord]):
    """One row per (episode, seat): cell values, seed, seat, agent kind, return, counters."""
    import pandas as pd

    rows = []
    for record in records:
        for seat, spec in record.seats.items():
            row = {f"cell.{k}": v for k, v in record.cell.items()}
            row.update(
                episode=record.episode,
                seed=record.seed,
                env_id=record.env_id,
                status=record.status,
                seat=seat,
                kind=spec.get("kind"),
                ret=record.returns.get(seat, 0.0),
            )
            row.update({f"counter.{k}": v for k, v in record.counters.get(seat, {}).items()})
            rows.append(row)
    return pd.DataFrame(rows)


def messages_frame(records: Iterable[EpisodeRecord]):
    """One row per bus message: episode, seed, cell values and the message fields."""
    import pandas as pd

    rows = []
    for record in records:
        for message in record.messages:
            row = {f"cell.{k}": v for k, v in record.cell.items()}
            row.update(
                episode=record.episode,
                seed=record.seed,
                **{k: message[k] for k in ("id", "turn", "sender", "to", "channel", "kind")},
            )
            row["payload"] = message["payload"]
            rows.append(row)
    return pd.DataFrame(rows)


def steps_frame(records: Iterable[EpisodeRecord]):
    """One row per (step, acting agent): its action, reward and whether it was invalid."""
    import pandas as pd

    rows = []
    for record in records:
        for index, step in enumerate(record.steps):
            for agent, action in step["actions"].items():
                row = {f"cell.{k}": v for k, v in record.cell.items()}
                row.update(
                    episode=record.episode,
                    seed=record.seed,
                    step=index,
                    turn=step["turn"],
                    agent=agent,
                    action=action,
                    reward=step["rewards"].get(agent, 0.0),
                    invalid=agent in step.get("invalid", {}),
                )
                rows.append(row)
    return pd.DataFrame(rows)
