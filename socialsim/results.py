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
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from socialsim import config as config_module
from socialsim import estimate, records, runner
from socialsim.config import ConfigError, Experiment

PACKAGES = (
    "socialsim",
    "pettingzoo",
    "gymnasium",
    "mesa",
    "litellm",
    "numpy",
    "matplotlib",
    "pandas",
)


def package_versions() -> dict[str, str | None]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = _version(metadata.distribution(name))
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def _version(dist: metadata.Distribution) -> str | None:
    """The distribution's version, read from its metadata's headers: ``dist.version`` parses
    the whole file as an e-mail message (several ms for a long description)."""
    for line in (dist.read_text("METADATA") or dist.read_text("PKG-INFO") or "").splitlines():
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
        if not line:  # the headers end at the first blank line
            break
    return dist.version


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).parent,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def llm_models(experiment: Experiment, out: Path) -> list[dict]:
    """Each distinct LLM model table named by a seat, with where its reply cache lives.
    (An agent spec that carries a ``model`` table is an LLM seat; the key is never recorded,
    only the name of the variable that holds it.)"""
    seen: list[dict] = []
    for _, cell in experiment.cells:
        for spec in cell["seats"].values():
            model = spec.get("model")
            if isinstance(model, str):
                model = {"model": model}
            if isinstance(model, dict) and model not in [m["config"] for m in seen]:
                from socialsim.llm.build import cache_path

                cache = cache_path(model.get("cache", True), out)
                seen.append({"config": model, "cache": str(cache) if cache else None})
    return seen


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run`: the episodes logged so far stay, and a rerun resumes."""

    def __init__(self, name: str, logged: int, total: int, out: Path):
        super().__init__(f"{name}: interrupted; {logged}/{total} episodes logged in {out}")
        self.name, self.logged, self.total, self.out = name, logged, total, out


class RunStopped(RuntimeError):
    """An episode failed for a reason no retry heals (refused credentials): the run stops."""


#: Prefixes of a logged LLM call's error that no retry or rerun of the same config can heal.
UNHEALABLE = ("authentication:",)


def _unhealable(record: records.EpisodeRecord) -> bool:
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
        """One row per (episode, seat) of the done episodes (``records.episodes_frame``)."""
        return records.episodes_frame(self.records())


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
    if records.read_manifest(directory) is None:
        raise ConfigError(f"results_dir: {directory} holds no experiment (no {records.MANIFEST})")
    held = records.read_records(directory, include_failed=include_failed)
    return Frames(
        episodes=records.episode_rows_frame(held),
        agent_episodes=records.episodes_frame(held),
        steps=records.steps_frame(held),
        messages=records.messages_frame(held),
        llm_calls=records.llm_calls_frame(held),
    )


def run(
    experiment: str | Path | Mapping[str, Any] | Experiment,
    out: str | Path | None = None,
    overrides: Iterable[str] = (),
    *,
    cache: str | Path | None = None,
    check_only: bool = False,
    progress: bool = False,
    say: Callable[[str], None] | None = None,
) -> Results:
    """Play every episode of ``experiment`` (a file path, a bundled name, a config dict or a
    loaded :class:`Experiment`) that ``out`` (default ``results/NAME``) does not hold yet.

    ``overrides`` are ``--set`` strings (``"episodes=20"``); ``cache`` is a reply cache file
    shared with other directories (the ``cache`` key: every LLM seat whose ``model`` table
    names no ``cache`` of its own uses it); ``check_only`` checks everything (the check
    episodes included) and says the plan, writing nothing and playing nothing else; ``progress`` shows a bar on a
    terminal; ``say`` receives the status lines the CLI prints. Raises :class:`ConfigError` before writing anything for any mistake,
    :class:`RunStopped` when an episode fails for a reason no retry heals (refused credentials),
    and :class:`RunInterrupted` on Ctrl-C.
    """
    say = say or (lambda line: None)
    if cache is not None:
        overrides = [*overrides, f"cache={json.dumps(str(cache))}"]  # a TOML string
    if not isinstance(experiment, Experiment):
        experiment = config_module.load(experiment, overrides)
    elif overrides:
        raise ConfigError("overrides: give them with the file or dict, not a loaded Experiment")
    for note in experiment.notes:
        say(note)
    out = Path(out) if out is not None else Path("results") / experiment.name
    if out.exists() and not out.is_dir():
        raise ConfigError(
            f"--out {out}: is a file, not a directory; name a new or a results directory"
        )
    held = records.read_manifest(out)
    grown = _grown_from(held, experiment, out)
    specs = experiment.specs()
    todo = runner.pending(specs, out)
    check = runner.check_specs(todo)

    def start() -> records.EventLog:  # once every check episode is done
        if held is None or grown:
            _write_manifest(experiment, out, held, grown, len(specs))
        say(
            f"{experiment.name}: {len(specs)} episodes, {len(specs) - len(todo)} already "
            f"logged, {len(todo)} to run -> {out}"
        )
        return records.EventLog(out)

    try:
        with runner.players(
            todo, experiment.max_concurrent, experiment.workers, experiment.backend, out
        ) as play:
            if experiment.backend == "ray":  # a handful of model-free episodes: not worth tasks

                def here(some, log, on_done=None):
                    runner.play_specs(some, log, experiment.max_concurrent, on_done)

                play = _checks_first(here, play, len(check))
            elif experiment.workers <= 1:  # no worker waits here: the checks first, all of them
                play = _checks_first(play, play, len(check))  # (play_specs puts probes last)
            if check_only:
                _check_episodes(check, play)
                for line in plan_lines(experiment, out, len(specs), len(todo), grown, todo):
                    say(line)
                return Results(experiment, out, len(specs), 0, [])
            checked = {id(s) for s in check}
            ordered = [*check, *(s for s in todo if id(s) not in checked)]  # checks first
            with _AfterChecks(check, out, start) as log:
                failed, done = _play(ordered, log, play, progress)
            logged = len(specs) - len(todo) + done
    except RunStopped as stop:
        raise RunStopped(
            f"{experiment.name}: stopped, as no retry can heal this: {stop}; "
            f"{len(records.done_keys(out))}/{len(specs)} episodes done in {out}; "
            "fix it and rerun the same command to resume"
        ) from None
    except KeyboardInterrupt:
        raise RunInterrupted(
            experiment.name, len(records.done_keys(out)), len(specs), out
        ) from None
    say(f"{experiment.name}: {logged}/{len(specs)} episodes done, {len(failed)} failed this run")
    return Results(experiment, out, len(specs), len(todo), failed)


def _write_manifest(
    experiment: Experiment, out: Path, held: dict | None, grown: dict[str, Any], total: int
) -> None:
    """Write the manifest of a new directory, or of one that grows (the first run's facts stay;
    the growth is recorded)."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = {
        "config": experiment.config,
        "cells": [cell for cell, _ in experiment.cells],
        "episodes_total": total,
        "llm": llm_models(experiment, out),
        "versions": package_versions(),
        "git_commit": git_commit(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": sys.argv,
    }
    if held is not None:
        manifest = {
            **held,
            **{k: manifest[k] for k in ("config", "cells", "episodes_total", "llm")},
            "grown": [*held.get("grown", []), {**grown, "at": manifest["started"]}],
        }
    records.write_manifest(out, manifest)


#: Keys that say how a run is played, not what is played: they may change between the runs of
#: one directory (the manifest records the latest, and what changed).
HOW_KEYS = ("workers", "max_concurrent", "backend", "cache")


def _grown_from(held: dict | None, experiment: Experiment, out: Path) -> dict[str, Any]:
    """``{}`` when ``out`` holds this experiment (or nothing); what grew or changed when only
    ``episodes`` grew, grid values were added (the same axes, every old cell kept) or a
    :data:`HOW_KEYS` setting changed; a config error naming the keys that differ otherwise."""
    if held is None or held.get("config") == experiment.config:
        return {}
    old, new = held.get("config", {}), experiment.config
    differ = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    changed = [k for k in differ if k not in HOW_KEYS]
    growth: dict[str, Any] = {}
    problem = None
    if "episodes" in changed:
        if new.get("episodes", 1) > old.get("episodes", 1):
            growth["episodes"] = [old.get("episodes", 1), new["episodes"]]
        else:
            problem = "episodes can only grow"
    if "grid" in changed:
        cells = [cell for cell, _ in experiment.cells]
        kept = all(cell in cells for cell in held.get("cells", []))
        if kept and set(old.get("grid", {})) == set(new.get("grid", {})):
            growth["cells"] = [len(held.get("cells", [])), len(cells)]
        else:
            problem = "grid values can only be added (the same axes, every old value kept)"
    if any(k not in ("episodes", "grid") for k in changed):
        problem = "only episodes and grid values may grow in place"
    if problem is not None:
        raise ConfigError(
            f"--out {out}: the directory holds a different experiment (keys that differ: "
            f"{', '.join(changed)}); {problem}; choose another directory"
        )
    settings = {k: [old.get(k), new.get(k)] for k in differ if k in HOW_KEYS}
    return {**growth, **({"settings": settings} if settings else {})}


def plan_lines(
    experiment: Experiment,
    out: Path,
    total: int,
    todo: int,
    grown: dict[str, Any],
    todo_specs: Sequence[runner.EpisodeSpec] = (),
) -> list[str]:
    """What a run would do: its cells, its episodes, where they go and how they are played."""
    lines = [
        f"{experiment.name}: checked; nothing written",
        f"  {len(experiment.cells)} cells x {experiment.config.get('episodes', 1)} episodes = "
        f"{total} episodes, {total - todo} already logged in {out}, {todo} to run",
        f"  backend {experiment.backend}, {experiment.workers} workers, "
        f"{experiment.max_concurrent} episodes at once per worker",
    ]
    for cell, config in experiment.cells:
        kinds = sorted({seat["kind"] for seat in config_module.resolve_seats(config).values()})
        lines.append(f"  cell {cell or '(no grid)'}: {config['env']['id']} with {', '.join(kinds)}")
    for model in llm_models(experiment, out):
        lines.append(f"  LLM {model['config'].get('model')}: reply cache {model['cache']}")
    if grown:
        lines.append(f"  the directory grows: {grown}")
    return lines + estimate.lines(estimate.estimate(experiment, todo_specs, out))


def _check_failed(spec: runner.EpisodeSpec, line: str) -> ConfigError:
    where = f"grid cell {dict(spec.cell)}: " if spec.cell else ""
    return ConfigError(
        f"{where}episode {spec.episode} (seed {spec.seed}), played as a check before "
        f"writing anything, failed: {records.EpisodeRecord.from_line(line).error}"
    )


def _check_episodes(specs: list[runner.EpisodeSpec], play: runner.Play) -> None:
    """Play only the check episodes (``check_only``): one of each cell whose seats call no
    model; a seat kind that cannot make one of the env's decisions is a config error. They are
    played by the run's ``play``, which plays them first (in this process on the Ray backend)."""
    if not specs:
        return
    log = runner.RecordList()
    play(specs, log)
    by_key = log.by_key()
    for spec in specs:
        status, line = by_key[runner.key_of(spec)]
        if status != "done":
            raise _check_failed(spec, line)


def _checks_first(play_checks: runner.Play, play: runner.Play, checks: int) -> runner.Play:
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
        checks: list[runner.EpisodeSpec],
        directory: Path,
        start: Callable[[], records.EventLog],
    ):
        self.directory = directory  # the run's, for the agents' RunContext
        self.waiting = {runner.key_of(spec): spec for spec in checks}
        self.start = start
        self.held: list[tuple[str, str, tuple[str, int] | None]] = []
        self.log: records.EventLog | None = None if self.waiting else start()

    @property
    def open(self) -> bool:
        return self.log is not None

    def write(self, line: str, status: str = "", key: tuple[str, int] | None = None) -> None:
        if self.log is not None:
            self.log.write(line, status, key)
            return
        status, key = runner.status_and_key(line, status, key)
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
    specs: list[runner.EpisodeSpec], log: _AfterChecks, play: runner.Play, progress: bool
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
