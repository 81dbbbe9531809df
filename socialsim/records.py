"""Episode records and the experiment's event log.

An experiment writes to one directory:

* ``manifest.json`` — the resolved config, package versions, git commit (if any) and start time;
* ``episodes.jsonl`` — one complete :class:`EpisodeRecord` per line (:meth:`EpisodeRecord.line`),
  written to the file as each episode ends and committed to the disk in groups (see
  :class:`EventLog` for what survives a kill, a crash and a full disk). A line that is not a
  record (a torn line, garbage) is skipped by the reader, named in one warning, and set aside
  by the next writer into ``episodes.rejected.jsonl`` (with its line number); its episode has
  no record, so it is played again.

An episode is identified by its key ``(cell, episode)``. Rerunning the same experiment on the
same directory runs only the keys that have no ``done`` record; a ``failed`` record is retried.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol

import orjson

from socialsim import record_checks
from socialsim.plain_json import canonical_json
from socialsim.whole_file import write_whole

MANIFEST = "manifest.json"
EPISODES = "episodes.jsonl"
REJECTED = "episodes.rejected.jsonl"  # lines set aside: not records


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
    #: what the engine's interventions changed on the bus (absent from lines without any)
    interventions: list[dict[str, Any]] = field(default_factory=list)
    # Wall-clock facts: the only part of a record that is not a function of the seed.
    timing: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, int]:
        return (cell_id(self.cell), self.episode)

    def to_json(self) -> dict[str, Any]:
        # Shallow: the fields already hold plain JSON values (asdict would deep-copy every
        # message and LLM reply of the episode).
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        if not data["interventions"]:  # the lines of episodes without any stay as they were
            del data["interventions"]
        return data

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


class LogWriteError(OSError):
    """The log (or the manifest) could not be written: a full, read-only or vanished disk. Every
    record written before it is whole in the file; the one being written is not."""


class BadLinesWarning(UserWarning):
    """``episodes.jsonl`` holds lines that are not records (named in one warning per read)."""


class LineLog(Protocol):
    """What episodes are played into: the results directory's :class:`EventLog`, and the logs
    that carry lines to it (a worker's pipe, a Ray task's list) or keep them (the check
    episodes'). ``status`` and ``key`` are the record's, given where the writer knows them."""

    directory: Any  # where the run's agents keep their files (None: nowhere)

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None: ...


class RecordList:
    """A log that keeps its records' lines in memory (the check episodes, written later)."""

    directory = None

    def __init__(self) -> None:
        self.lines: list[str] = []
        #: ``(status, key)`` of each line, as its writer gave them (``key`` ``None`` if not)
        self.entries: list[tuple[str, tuple[str, int] | None]] = []

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        self.lines.append(line)
        self.entries.append((status, key))

    def append(self, record: EpisodeRecord) -> None:
        self.write(record.line(), record.status, record.key)

    @property
    def records(self) -> list[EpisodeRecord]:
        return [EpisodeRecord.from_line(line) for line in self.lines]

    def by_key(self) -> dict[tuple[str, int], tuple[str, str]]:
        """``key -> (status, line)``; only a line written without its key is decoded."""
        held = {}
        for line, (status, key) in zip(self.lines, self.entries, strict=True):
            status, key = status_and_key(line, status, key)
            held[key] = (status, line)
        return held


def status_and_key(
    line: str, status: str, key: tuple[str, int] | None
) -> tuple[str, tuple[str, int]]:
    """The ``status`` and ``key`` of a logged ``line``, as its writer gave them, or read from the
    line where the writer did not say (Ray's)."""
    if key is None or not status:
        record = EpisodeRecord.from_line(line)
        return record.status, record.key
    return status, key


class EventLog:
    """Append-only writer of ``episodes.jsonl`` in an experiment directory, committing in groups.

    The guarantee: a record is in the file whole or not at all, and an episode counts as done
    (in the run's tally) only once its whole line is on the disk. :meth:`write` hands the OS the
    whole line (a short write is continued until every byte is written); a write that fails
    (``ENOSPC``, ``EIO``, ``EROFS``...) has its partial bytes cut off again and raises
    :class:`LogWriteError`, so the run stops with every record before it whole. Lines reach the
    disk (``fsync``) at the latest ``commit_every`` records or ``commit_seconds`` seconds after
    they were written, and at :meth:`close`, which ends every run before it reports its episodes
    done; a failed ``fsync`` raises :class:`LogWriteError` too. So a killed run (Ctrl-C,
    SIGKILL) loses no written record, and a crash of the machine at most the uncommitted tail,
    whose episodes have no ``done`` record and are played again by the next run (the same seeds
    give the same records). Opening the log sets aside what a crash or a bad disk left (a torn
    last line, lines that are not records: :func:`set_aside_bad_lines`), so no record is ever
    glued onto a partial one.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        commit_every: int = 64,
        commit_seconds: float = 1.0,
        scan: LogScan | None = None,
    ):
        """``scan``: the log as its writer read it already (then not read again)."""
        self.directory = Path(directory)
        self.path = self.directory / EPISODES
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            set_aside_bad_lines(self.path, scan)
            # Unbuffered: each write() is one system call, so a record is at the OS when written.
            self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 - closed in close()
            self._size = os.fstat(self._file.fileno()).st_size  # the end of the last whole line
        except OSError as error:
            raise _write_error(error, self.path) from None
        self._scan = scan  # kept up to date with what is written (its size, lines and digest)
        if scan is not None and scan.size != self._size:
            scan.digest = None  # the log changed since it was read
        self.commit_every = commit_every
        self.commit_seconds = commit_seconds
        self._uncommitted = 0
        self._committed_at = time.monotonic()

    def append(self, record: EpisodeRecord) -> None:
        self.write(record.line())

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        """Append one record's :meth:`~EpisodeRecord.line` (encoded where it was played), whole
        or not at all; ``status`` and ``key`` are the record's, for logs that keep them."""
        data = memoryview(line.encode() + b"\n")
        written = 0
        try:
            while written < len(data):
                count = self._file.write(data[written:])
                if not count:  # a regular file that takes no byte and says no error: full
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                written += count
        except OSError as error:
            self._cut_partial()
            raise _write_error(error, self.path) from None
        self._size += written
        if self._scan is not None:
            self._scan.lines, self._scan.size = self._scan.lines + 1, self._size
            if self._scan.digest is not None:
                self._scan.digest.update(data)
        self._uncommitted += 1
        if (
            self._uncommitted >= self.commit_every
            or time.monotonic() - self._committed_at >= self.commit_seconds
        ):
            self.commit()

    def _cut_partial(self) -> None:
        """Cut off the bytes of a record whose write failed (if the disk lets us; else the next
        open sets them aside)."""
        try:
            os.ftruncate(self._file.fileno(), self._size)
        except OSError:
            pass

    def commit(self) -> None:
        """fsync what was written (a :class:`LogWriteError` if the disk fails, or if the file
        was removed meanwhile: what was written to it is gone with it)."""
        if self._uncommitted:
            try:
                os.fsync(self._file.fileno())
                if os.fstat(self._file.fileno()).st_nlink == 0:
                    raise OSError(errno.ENOENT, "removed while the run wrote to it")
            except OSError as error:
                raise _write_error(error, self.path) from None
            self._uncommitted = 0
        self._committed_at = time.monotonic()

    def close(self) -> None:
        if not self._file.closed:
            try:
                self.commit()
            finally:
                self._file.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _write_error(error: OSError, path: Path) -> LogWriteError:
    return LogWriteError(error.errno, error.strerror or str(error), str(path))


@dataclass
class LogScan:
    """``episodes.jsonl`` read line by line: the records (when kept), the keys of the ``done``
    ones, and what is not a record (or not the record of its spec)."""

    records: list[dict[str, Any]]
    done: set[tuple[str, int]]
    bad: list[tuple[int, bytes, str]]  # (line number from 1, the line without its newline, why)
    torn: bytes  # a last line without its newline (a write cut short), or b""
    lines: int  # whole lines read (and written by this process's EventLog)
    size: int = 0  # their bytes
    #: SHA-256 of those bytes while each of their lines is a record, kept (as a head) in
    #: ``records``; else ``None``. What the log's index vouches for (:mod:`socialsim.log_index`).
    digest: Any = None
    indexed: int = 0  # the bytes the log's index on disk covers (0: none)

    @property
    def clean(self) -> bool:
        return not self.bad and not self.torn


def scan_log(
    path: Path,
    keep: bool = True,
    expected: Mapping[tuple[str, int], Any] = {},
    head: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    known: LogScan | None = None,
) -> LogScan:
    """Every line of the log at ``path`` (its records kept with ``keep``): a line is a record
    when it is a JSON object that passes the records' schema (:func:`record_checks.problem`);
    anything else (blank, garbage, NUL bytes, a torn line, an array, a field of the wrong type)
    is bad. So is a record whose key has a spec in ``expected`` (key -> spec) that it is not the
    record of (:func:`record_checks.identity_of`). A last line without its newline is
    ``torn``, not bad. With ``head``, each record is kept as ``head(record)`` and the lines are
    hashed (``digest``); ``known``: the scan of the log's first ``known.size`` bytes (from its
    index), read on from there."""
    scan = known or LogScan([], set(), [], b"", 0, digest=hashlib.sha256() if head else None)
    if not path.exists():
        return scan
    identities = record_checks.Identities()
    with open(path, "rb") as f:
        f.seek(scan.size)
        for number, line in enumerate(f, start=scan.lines + 1):
            if not line.endswith(b"\n"):
                scan.torn = line
                break
            scan.lines, scan.size = number, scan.size + len(line)
            if scan.digest is not None:
                scan.digest.update(line)
            try:
                data = orjson.loads(line)
            except ValueError:  # not JSON, or not UTF-8
                data, why = None, "not JSON"
            else:
                why = record_checks.problem(data)
            if why is None:
                key = (cell_id(data["cell"]), data["episode"])
                spec = expected.get(key)
                if spec is not None and not identities.match(data, spec):
                    why = (
                        f"not the record of its spec: {record_checks.differs(data, expected[key])}"
                    )
            if why is not None:
                scan.bad.append((number, line[:-1], why))
                scan.digest = None  # the index vouches only for logs of records
                continue
            if data["status"] == "done":
                scan.done.add(key)
            if keep:
                scan.records.append(data if head is None else head(data))
    return scan


def warn_bad_lines(path: Path, bad: list[tuple[int, bytes, str]]) -> None:
    """One :class:`BadLinesWarning` naming the lines ``bad`` of the log at ``path`` (a
    :class:`LogScan`'s) and why each is not a record."""
    named = "; ".join(f"line {n}: {why}" for n, _, why in bad[:5]) + (
        "; ..." if len(bad) > 5 else ""
    )
    one = len(bad) == 1
    warnings.warn(
        f"{path}: {len(bad)} {'line' if one else 'lines'} that {'is' if one else 'are'} not a "
        f"record skipped ({named}); `socialsim run` on this directory sets "
        f"{'it' if one else 'them'} aside in {REJECTED} and plays any episode left with no record",
        BadLinesWarning,
        stacklevel=4,
    )


def set_aside_bad_lines(path: Path, scan: LogScan | None = None) -> None:
    """Before writing to the log at ``path``: move its bad lines and a torn last line into
    ``episodes.rejected.jsonl`` beside it (``{"line": N, "text": ..., "reason": ...}``, one per
    line, kept before the log is changed), so that the log holds only whole records and ends
    with a newline. Their episodes have no record left, so the run plays them again. ``scan``:
    the log as read already (by the process that holds the directory).

    Each file is written whole or not at all (a temporary file renamed over it), and a line
    already set aside is not written again: a set-aside cut short (a full disk) leaves no
    temporary file and, done again by the next run, no line twice."""
    scan = scan_log(path, keep=False) if scan is None else scan
    if scan.clean:
        return
    if scan.bad:  # the log is written anew: its bytes are no longer those hashed
        scan.digest = None
    aside = [*scan.bad]
    if scan.torn:
        aside.append((scan.lines + 1, scan.torn, "torn: a last line without its newline"))
    rejected = path.with_name(REJECTED)
    held = rejected.read_bytes() if rejected.exists() else b""
    known = set(held.splitlines())
    new = []
    for number, text, why in aside:
        kept = {"line": number, "text": text.decode("utf-8", "backslashreplace"), "reason": why}
        entry = json.dumps(kept).encode()
        if entry not in known:
            known.add(entry)
            new.append(entry + b"\n")
    if new:
        write_whole(rejected, [held, *new])
    if not scan.bad:  # only a torn tail: cut it off
        with open(path, "rb+") as f:
            f.truncate(path.stat().st_size - len(scan.torn))
            os.fsync(f.fileno())
        return
    bad = {number for number, _, _ in scan.bad}
    with open(path, "rb") as source:
        kept_lines = [
            line
            for number, line in enumerate(source, start=1)
            if number not in bad and line.endswith(b"\n")
        ]
    write_whole(path, kept_lines)


def read_log(
    directory: str | os.PathLike,
    keep: bool = True,
    expected: Mapping[tuple[str, int], Any] = {},
    head: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    known: LogScan | None = None,
) -> LogScan:
    """``directory``'s log read (:func:`scan_log`, its records checked against the specs of
    ``expected``); its lines that are not records are named in one :class:`BadLinesWarning`, a
    torn last line (a killed run) is passed over silently."""
    path = Path(directory) / EPISODES
    scan = scan_log(path, keep, expected, head, known)
    if scan.bad:
        warn_bad_lines(path, scan.bad)
    return scan


def iter_lines(directory: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """The records of ``directory``'s log, as plain dicts (:func:`read_log`)."""
    return iter(read_log(directory).records)


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
    """The keys with a ``done`` record in ``directory``'s log."""
    return read_log(directory, keep=False).done


class ManifestError(ValueError):
    """``manifest.json`` cannot be read as a manifest (the CLI exits with status 2)."""


def read_manifest(directory: str | os.PathLike) -> dict[str, Any] | None:
    """The directory's manifest, ``None`` when it has none; a :class:`ManifestError` naming the
    file and how to recover when it is not a JSON object."""
    path = Path(directory) / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_bytes())
        problem = None if isinstance(manifest, dict) else f"a JSON {type(manifest).__name__}"
        if problem is None and not isinstance(manifest.get("config", {}), dict):
            problem = f"its config is a JSON {type(manifest['config']).__name__}, not an object"
        if problem is None and not isinstance(manifest.get("cells", []), list):
            problem = f"its cells are a JSON {type(manifest['cells']).__name__}, not a list"
    except ValueError as error:
        problem = f"not valid JSON: {error}"
    if problem is not None:
        raise ManifestError(
            f"{path}: is not a manifest ({problem}); the logged episodes are safe in "
            f"{EPISODES}: move the file away and rerun the same `socialsim run` command that made "
            "this directory (it writes the manifest again and plays only what is missing)"
        )
    return manifest


def write_manifest(directory: str | os.PathLike, manifest: dict[str, Any]) -> None:
    """Write the manifest whole (:func:`write_whole`: two processes writing at once each replace
    it whole), readable as the log beside it is; a :class:`LogWriteError` if the disk refuses."""
    path = Path(directory) / MANIFEST
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, [(json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode()])
    except OSError as error:
        raise _write_error(error, path) from None
