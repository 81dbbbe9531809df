"""A results directory: run an experiment into it, and read it back.

:func:`run` is what ``socialsim run`` does, as a function for notebooks and scripts::

    from socialsim.results import run

    results = run("align_quickstart", out="results/aq", overrides=["episodes=2"])
    results.failed                  # the records of episodes that failed in this call
    frame = results.frame()         # one row per (episode, seat): cell, seed, kind, return...

The experiment is checked in full before anything is written (a :class:`ConfigError` names the
field, the value and what is allowed), one episode of each model-free cell is played as a check,
then the manifest is written and the missing episodes are played; a directory that holds the
same experiment with fewer ``episodes`` grows in place.

The check episodes are sent to the run's workers first and the rest right after them: the
workers do not wait while the last checks end and the manifest is written; the records that end
meanwhile are held (:class:`_AfterChecks`) and written once every check is done, and a failed
check is a config error with nothing written.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socialsim import backends, directory_lock, frames, manifest, plan, records, runner
from socialsim import config as config_module
from socialsim.config import ConfigError, Experiment
from socialsim.config.overrides import assignments
from socialsim.episode import EpisodeSpec
from socialsim.llm import offline as no_requests


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run`: the episodes logged so far stay, and a rerun resumes."""

    def __init__(self, name: str, logged: int, total: int, out: Path):
        super().__init__(f"{name}: interrupted; {logged}/{total} episodes logged in {out}")
        self.name, self.logged, self.total, self.out = name, logged, total, out


class RunStopped(RuntimeError):
    """An episode failed for a reason no retry heals (refused credentials): the run stops."""


#: Prefixes of a logged LLM call's error that no retry or rerun of the same config can heal.
UNHEALABLE = ("authentication:", "structured_refused:")


def _unhealable(record: records.EpisodeRecord) -> bool:
    if no_requests.MISS in (
        record.error or ""
    ):  # an offline run lacks a reply: no rerun offline has it
        return True
    return any(
        str(event.get("error") or "").startswith(UNHEALABLE)
        for events in record.events.values()
        for event in events
    )


@dataclass
class Results:
    """What :func:`run` did, and the directory to read the records from."""

    experiment: Experiment
    directory: Path
    total: int  # episodes of the experiment
    ran: int  # episodes played by this call (the others were logged already)
    failed: list[records.EpisodeRecord]  # this call's failed episodes

    def records(self, include_failed: bool = False) -> list[records.EpisodeRecord]:
        return records.read_records(self.directory, include_failed=include_failed)

    def frame(self):
        """One row per (episode, seat) of the done episodes (``frames.episodes_frame``)."""
        return frames.episodes_frame(self.records())


@dataclass
class Frames:
    """The tidy frames of a results directory (pandas; the done episodes unless
    ``load(..., include_failed=True)``). Every frame carries ``cell.*``, ``episode`` and
    ``seed`` columns to join on."""

    episodes: Any  # one row per episode: status, error, the env's summary values
    agent_episodes: Any  # one row per (episode, seat): kind, return, counters
    steps: Any  # one row per (step, acting agent): action, reward, invalid
    messages: Any  # one row per bus message
    llm_calls: Any  # one row per logged LLM call


def load(directory: str | Path, include_failed: bool = False) -> Frames:
    """The :class:`Frames` of the results directory ``directory`` (a :class:`ConfigError` if it
    holds no experiment)."""
    directory = Path(directory)
    if read_manifest(directory) is None:
        raise ConfigError(f"results_dir: {directory} holds no experiment (no {records.MANIFEST})")
    held = records.read_records(directory, include_failed=include_failed)
    return Frames(
        episodes=frames.episode_rows_frame(held),
        agent_episodes=frames.episodes_frame(held),
        steps=frames.steps_frame(held),
        messages=frames.messages_frame(held),
        llm_calls=frames.llm_calls_frame(held),
    )


def run(
    experiment: str | Path | Mapping[str, Any] | Experiment,
    out: str | Path | None = None,
    overrides: Iterable[str] | Mapping[str, Any] = (),
    *,
    cache: str | Path | None = None,
    check_only: bool = False,
    progress: bool = False,
    say: Callable[[str], None] | None = None,
    offline: bool = False,
) -> Results:
    """Play every episode of ``experiment`` (a file path, a bundled name, a config dict or a
    loaded :class:`Experiment`) that ``out`` (default ``results/NAME``) does not hold yet.

    ``overrides`` are ``--set`` strings (``"episodes=20"``) or a dict (``{"episodes": 20}``);
    ``cache`` is a reply cache file shared with other directories (the ``cache`` key: every LLM seat whose ``model`` table
    names no ``cache`` of its own uses it); ``check_only`` checks everything (the check
    episodes included) and says the plan, writing nothing and playing nothing else; ``progress`` shows a bar on a
    terminal; ``say`` receives the status lines the CLI prints. Raises :class:`ConfigError` before writing anything for any mistake,
    :class:`RunStopped` when an episode fails for a reason no retry heals (refused credentials),
    and :class:`RunInterrupted` on Ctrl-C. ``offline``: no model request at all (no server is
    asked what it is either); a reply that neither the log nor the reply cache holds stops the
    run with :class:`RunStopped`, naming the seat, its decision and the call.
    """
    say = say or (lambda line: None)
    overrides = assignments(overrides)  # a dict of them too
    if cache is not None:
        overrides = [*overrides, f"cache={json.dumps(str(cache))}"]  # a TOML string
    if not isinstance(experiment, Experiment):
        experiment = config_module.load(experiment, overrides)
    elif overrides:
        raise ConfigError("overrides: give them with the file or dict, not a loaded Experiment")
    for note in experiment.notes:
        say(note)
    out = Path(out) if out is not None else Path("results") / experiment.name
    if out.is_symlink() and not out.exists():
        raise ConfigError(
            f"--out {out}: a symbolic link to {os.readlink(out)}, which does not exist; make the "
            "directory it names, or name another directory"
        )
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"--out {out}: is a file, not a directory; name a new or a results directory"
        )
    with no_requests.offline(offline):
        if check_only:  # writes nothing, the lock file included
            return _run(experiment, out, True, progress, say)
        with directory_lock.hold(out):  # before reading what is logged: one writer at a time
            return _run(experiment, out, False, progress, say)


def _run(
    experiment: Experiment,
    out: Path,
    check_only: bool,
    progress: bool,
    say: Callable[[str], None],
    scan: records.LogScan | None = None,
    written: list[str] | None = None,
) -> Results:
    """:func:`run` once the experiment is loaded and ``out`` is this process's to write.
    ``scan``: the log as read already (an evolution run reads it once for all generations);
    ``written`` receives every line this call logs."""
    if "evolution" in experiment.config and not hasattr(experiment, "generation"):
        return _run_generations(experiment, out, check_only, progress, say)
    held = read_manifest(out)
    grown = manifest.grown_from(held, experiment, out)
    specs = experiment.specs()
    if (
        scan is None
    ):  # unchanged until this run writes (it holds `out`); a record not its spec's is bad
        scan = records.read_log(out, keep=False, expected={spec.key: spec for spec in specs})
    todo = pending(specs, scan.done)
    if todo:  # what each LLM seat's server is, once per run: as recorded, else asked and probed
        if not no_requests.is_offline():  # a finished run needs no key, nor an offline one
            _check_credentials(experiment)
        cells = config_module.resolve_models(experiment.cells, held, out)
        if cells is not None:
            experiment = experiment.with_cells(cells)
            specs = experiment.specs()
            todo = pending(specs, scan.done)
    check = check_specs(todo)
    if not todo and not check_only and held is not None:  # nothing opened for writing
        if not scan.clean:
            try:
                records.set_aside_bad_lines(out / records.EPISODES, scan)
            except OSError:  # a read-only disk: the bad lines stay, skipped by every reader
                pass
        say(f"{experiment.name}: {len(specs)} episodes, {len(specs)} already logged, 0 to run")
        say(f"{experiment.name}: {len(specs)}/{len(specs)} episodes done, 0 failed this run")
        return Results(experiment, out, len(specs), 0, [])

    def start() -> records.EventLog:  # once every check episode is done
        if held is None or grown:
            total = getattr(experiment, "episodes_total", len(specs))  # every generation's
            manifest.write(experiment, out, held, grown, total)
        say(
            f"{experiment.name}: {len(specs)} episodes, {len(specs) - len(todo)} already "
            f"logged, {len(todo)} to run -> {out}"
        )
        return records.EventLog(out, scan=scan)

    try:
        with backends.open_backend(
            todo, experiment.max_concurrent, experiment.workers, experiment.backend, out, say
        ) as play:
            if experiment.backend == "ray":  # a handful of model-free episodes: not worth tasks

                def here(some, log, on_done=None):
                    runner.play_specs(some, log, experiment.max_concurrent, on_done)

                play = _checks_first(here, play, len(check))
            elif experiment.workers <= 1:  # no worker waits here: the checks first, all of them
                play = _checks_first(play, play, len(check))  # (play_specs puts probes last)
            if check_only:
                _check_episodes(check, play)
                for line in plan.plan_lines(
                    experiment, out, len(specs), len(todo), grown, todo, scan.done
                ):
                    say(line)
                return Results(experiment, out, len(specs), 0, [])
            checked = {id(s) for s in check}
            ordered = [*check, *(s for s in todo if id(s) not in checked)]  # checks first
            with _AfterChecks(check, out, start, written) as log:
                failed, done = _play(ordered, log, play, progress)
            logged = len(specs) - len(todo) + done
    except ValueError as error:
        if isinstance(error, ConfigError):
            raise
        # an agent that refuses its seat as its first episode starts (a policy file missing)
        raise ConfigError(_seat_error(str(error), check or todo)) from None
    except RunStopped as stop:
        raise RunStopped(
            f"{experiment.name}: stopped, as no retry can heal this: {stop}; "
            f"{_logged(out, specs, todo)}/{len(specs)} episodes done in {out}; "
            "fix it and rerun the same command to resume"
        ) from None
    except records.LogWriteError as error:
        raise RunStopped(
            f"{experiment.name}: stopped: cannot write {error.filename}: {error.strerror}; "
            f"{_logged(out, specs, todo)}/{len(specs)} episodes logged in {out}; once the disk "
            "has room and can be written, rerun the same command to resume"
        ) from None
    except KeyboardInterrupt:
        raise RunInterrupted(experiment.name, _logged(out, specs, todo), len(specs), out) from None
    say(f"{experiment.name}: {logged}/{len(specs)} episodes done, {len(failed)} failed this run")
    return Results(experiment, out, len(specs), len(todo), failed)


def check_specs(specs: Sequence[EpisodeSpec]) -> list[EpisodeSpec]:
    """The episodes to play before a run writes anything: the first of each cell among
    ``specs`` whose seats call no model (a seat with a ``model`` table would make requests).
    A seat whose agent cannot make a decision of the env fails its check episode."""
    first: dict[str, EpisodeSpec] = {}
    for spec in specs:
        if any("model" in seat for seat in spec.seats.values()):
            continue
        first.setdefault(records.cell_id(dict(spec.cell)), spec)
    return list(first.values())


def pending(specs: Sequence[EpisodeSpec], done: set[tuple[str, int]]) -> list[EpisodeSpec]:
    """The specs whose episode has no ``done`` record (``done``: the logged keys,
    :func:`~socialsim.records.done_keys`)."""
    return [s for s in specs if s.key not in done]


def _run_generations(
    experiment: Experiment, out: Path, check_only: bool, progress: bool, say: Callable[[str], None]
) -> Results:
    """An ``[evolution]`` experiment: each generation a run of its own, born from the log's
    records of the one before (:func:`socialsim.society.experiment.play_generations`)."""
    from socialsim.society import experiment as evolving

    def stage(generation: Experiment, scan: records.LogScan, written: list[str]) -> Results:
        return _run(generation, out, check_only, progress, say, scan, written)

    stages = evolving.play_generations(experiment, out, stage, check_only)
    failed = [record for result in stages for record in result.failed]
    if failed:
        say(f"{experiment.name}: generation {len(stages) - 1} has failed episodes; rerun to retry")
    total, ran = sum(r.total for r in stages), sum(r.ran for r in stages)
    return Results(experiment, out, total, ran, failed)


def _seat_error(text: str, specs: list[EpisodeSpec]) -> str:
    """``"path: no policy file..."`` as ``"seats.agent_0.path: no policy file..."`` when one
    seat's spec holds that key, else as it is."""
    key = text.partition(":")[0]
    seats = sorted({seat for spec in specs[:1] for seat, s in spec.seats.items() if key in s})
    return f"seats.{seats[0]}.{text}" if len(seats) == 1 else text


def _logged(out: Path, specs: list[EpisodeSpec], todo: list[EpisodeSpec]) -> int:
    """How many episodes ``out`` holds done, read back (those logged before the run when the
    disk cannot be read: at least that many are there)."""
    try:
        return len(records.done_keys(out))
    except OSError:
        return len(specs) - len(todo)


def read_manifest(directory: Path) -> dict[str, Any] | None:
    """:func:`records.read_manifest`, a broken manifest a :class:`ConfigError`."""
    try:
        return records.read_manifest(directory)
    except records.ManifestError as error:
        raise ConfigError(str(error)) from None


def _check_credentials(experiment: Experiment) -> None:
    """Every LLM seat reached through litellm by model name finds its key in the environment
    (litellm tells which variable): found now, not by the first episodes' failures."""
    for _, cell in experiment.cells:
        for seat, spec in cell["seats"].items():
            model = spec.get("model")
            model = {"model": model} if isinstance(model, str) else model
            if not isinstance(model, Mapping):
                continue
            from socialsim.llm.build import missing_key

            variable = missing_key(model)
            if variable is not None:
                raise ConfigError(
                    f"seats.{seat}.model.model: {model['model']!r} reads its key from the "
                    f"environment variable {variable}, which is not set (or empty); export it, "
                    "or name the variable that holds the key in model.api_key_env"
                )


def _check_failed(spec: EpisodeSpec, line: str) -> ConfigError:
    where = f"grid cell {dict(spec.cell)}: " if spec.cell else ""
    return ConfigError(
        f"{where}episode {spec.episode} (seed {spec.seed}), played as a check before "
        f"writing anything, failed: {records.EpisodeRecord.from_line(line).error}"
    )


def _check_episodes(specs: list[EpisodeSpec], play: backends.Play) -> None:
    """Play only the check episodes (``check_only``): one of each cell whose seats call no
    model; a seat kind that cannot make one of the env's decisions is a config error. They are
    played by the run's ``play``, which plays them first (in this process on the Ray backend)."""
    if not specs:
        return
    log = records.RecordList()
    play(specs, log)
    by_key = log.by_key()
    for spec in specs:
        status, line = by_key[spec.key]
        if status != "done":
            raise _check_failed(spec, line)


def _checks_first(play_checks: backends.Play, play: backends.Play, checks: int) -> backends.Play:
    """A ``play`` that plays the first ``checks`` episodes with ``play_checks``, then the rest
    with ``play``."""

    def play_all(specs, log, on_done=None) -> None:
        if specs[:checks]:
            play_checks(specs[:checks], log, on_done)
        if specs[checks:]:
            play(specs[checks:], log, on_done)

    return play_all


class _AfterChecks:
    """The log of a run until its check episodes are done: every line is held; the last check
    done, ``start`` writes the manifest and opens the :class:`~socialsim.records.EventLog`, and
    the held lines go to it in the order they came. A failed check raises the config error, with
    nothing written. (Episodes sent after the checks may end before them, in another worker.)"""

    def __init__(
        self,
        checks: list[EpisodeSpec],
        directory: Path,
        start: Callable[[], records.EventLog],
        written: list[str] | None = None,
    ):
        self.directory = directory  # the run's, for the agents' RunContext
        self.written = written  # every line logged, for who asked
        self.waiting = {spec.key: spec for spec in checks}
        self.start = start
        self.held: list[tuple[str, str, tuple[str, int] | None]] = []
        self.log: records.EventLog | None = None if self.waiting else start()

    @property
    def open(self) -> bool:
        return self.log is not None

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        if self.written is not None:
            self.written.append(line)
        if self.log is not None:
            self.log.write(line, status, key)
            return
        status, key = records.status_and_key(line, status, key)
        spec = self.waiting.pop(key, None)
        if spec is not None and status != "done":
            raise _check_failed(spec, line)
        self.held.append((line, status, key))
        if not self.waiting:
            self.log = self.start()
            for held in self.held:
                self.log.write(*held)
            self.held = []

    def __enter__(self) -> _AfterChecks:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.log is not None:
            self.log.close()


def failure_lines(failed: list[records.EpisodeRecord], hint: str) -> str:
    """Each distinct reason with its count and one episode it ended."""
    lines = [f"{len(failed)} episodes failed ({hint}):"]
    for reason, count, record in records.failure_reasons(failed):
        example = f"episode {record.episode}" + (f" of cell {record.cell}" if record.cell else "")
        lines.append(f"  {count} x {reason}  (e.g. {example})")
    return "\n".join(lines)


def _play(
    specs: list[EpisodeSpec], log: _AfterChecks, play: backends.Play, progress: bool
) -> tuple[list[records.EpisodeRecord], int]:
    """Play ``specs`` into ``log``; return the failed records and the number done. The
    progress bar (``progress``) starts once the log is open, after the line that says the plan."""
    failed: list[records.EpisodeRecord] = []
    done = 0
    bar = None

    def on_done(status: str, record: records.EpisodeRecord | None) -> None:
        nonlocal done, bar
        if record is None:
            done += 1
        else:
            failed.append(record)
            if _unhealable(record):
                raise RunStopped(record.error)
        if progress and log.open:
            if bar is None:
                from tqdm import tqdm

                bar = tqdm(total=len(specs), unit="ep", disable=None, file=sys.stderr)
                bar.update(done + len(failed) - 1)
            bar.set_postfix(failed=len(failed), refresh=False)
            bar.update(1)

    try:
        if specs:
            play(specs, log, on_done)
    finally:
        if bar is not None:
            bar.close()
    return failed, done
