"""The ``socialsim`` command: run experiments, list what is installed, report on results.

    socialsim run FILE [--out DIR] [--set path.to.key=value ...]
    socialsim list
    socialsim report DIR
    socialsim play GAME --as SEAT [--with SEAT=KIND|FILE ...]

A bad experiment file or override exits with status 2 and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from socialsim import config as config_module
from socialsim import records, registry, runner

PACKAGES = (
    "socialsim",
    "pettingzoo",
    "gymnasium",
    "mesa",
    "litellm",
    "numpy",
    "matplotlib",
    "pandas",
    "scipy",
)


def package_versions() -> dict[str, str | None]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


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


def llm_models(experiment: config_module.Experiment, out: Path) -> list[dict]:
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


def cmd_run(args: argparse.Namespace) -> int:
    experiment = config_module.load(args.file, args.set or [])
    for note in experiment.notes:
        print(f"socialsim: {note}", file=sys.stderr)
    out = Path(args.out) if args.out else Path("results") / experiment.name
    if out.exists() and not out.is_dir():
        raise config_module.ConfigError(
            f"--out {out}: is a file, not a directory; name a new or a results directory"
        )
    held = records.read_manifest(out)
    grown = _grown_from(held, experiment, out)
    specs = experiment.specs()
    todo = runner.pending(specs, out)
    checks = _check_episodes(runner.check_specs(todo), experiment)
    if held is None or grown:
        out.mkdir(parents=True, exist_ok=True)
        manifest = {
            "config": experiment.config,
            "cells": [cell for cell, _ in experiment.cells],
            "episodes_total": len(specs),
            "llm": llm_models(experiment, out),
            "versions": package_versions(),
            "git_commit": git_commit(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": sys.argv,
        }
        if held is not None:  # the first run's facts stay; the growth is recorded
            manifest = {
                **held,
                **{k: manifest[k] for k in ("config", "cells", "episodes_total", "llm")},
                "grown": [*held.get("grown", []), {**grown, "at": manifest["started"]}],
            }
        records.write_manifest(out, manifest)
    print(
        f"{experiment.name}: {len(specs)} episodes, {len(specs) - len(todo)} already logged, "
        f"{len(todo)} to run -> {out}",
        file=sys.stderr,
    )
    failures: list[records.EpisodeRecord] = []
    try:
        with records.EventLog(out) as log:
            for record in checks.values():
                log.append(record)
        rest = [s for s in todo if id(s) not in checks]
        failures = _play(rest, out, experiment.max_concurrent, experiment.workers, args.quiet)
    except KeyboardInterrupt:
        print(
            f"\n{experiment.name}: interrupted; {len(records.done_keys(out))}/{len(specs)} "
            f"episodes logged in {out}; rerun the same command to resume",
            file=sys.stderr,
        )
        return 130
    done = len(records.done_keys(out))
    print(
        f"{experiment.name}: {done}/{len(specs)} episodes done, {len(failures)} failed this run",
        file=sys.stderr,
    )
    if failures:
        print(_failure_lines(failures, "rerun the same command to retry them"), file=sys.stderr)
    return 1 if failures else 0


def _grown_from(
    held: dict | None, experiment: config_module.Experiment, out: Path
) -> dict[str, list[int]]:
    """``{}`` when ``out`` holds this experiment (or nothing), ``{"episodes": [old, new]}``
    when only ``episodes`` grew; a config error naming the keys that differ otherwise."""
    if held is None or held.get("config") == experiment.config:
        return {}
    old, new = held.get("config", {}), experiment.config
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if changed == ["episodes"] and new.get("episodes", 1) > old.get("episodes", 1):
        return {"episodes": [old.get("episodes", 1), new["episodes"]]}
    hint = (
        "episodes can only grow" if changed == ["episodes"] else "only episodes may grow in place"
    )
    raise config_module.ConfigError(
        f"--out {out}: the directory holds a different experiment (keys that differ: "
        f"{', '.join(changed)}); {hint}; choose another directory"
    )


def _check_episodes(
    specs: list[runner.EpisodeSpec], experiment: config_module.Experiment
) -> dict[int, records.EpisodeRecord]:
    """Play one episode of each cell whose seats call no model, before anything is written: a
    seat kind that cannot make one of the env's decisions is a config error (its record is
    kept and logged once the run starts)."""
    if not specs:
        return {}
    log = runner.RecordList()
    runner.run_specs(specs, log, experiment.max_concurrent, min(experiment.workers, len(specs)))
    by_key = {record.key: record for record in log.records}
    checks = {}
    for spec in specs:
        record = by_key[(records.cell_id(dict(spec.cell)), spec.episode)]
        if record.status != "done":
            where = f"grid cell {dict(spec.cell)}: " if spec.cell else ""
            raise config_module.ConfigError(
                f"{where}episode {spec.episode} (seed {spec.seed}), played as a check before "
                f"writing anything, failed: {record.error}"
            )
        checks[id(spec)] = record
    return checks


def _failure_lines(failed: list[records.EpisodeRecord], hint: str) -> str:
    """Each distinct reason with its count and one episode it ended."""
    lines = [f"{len(failed)} episodes failed ({hint}):"]
    for reason, count, record in records.failure_reasons(failed):
        example = f"episode {record.episode}" + (f" of cell {record.cell}" if record.cell else "")
        lines.append(f"  {count} x {reason}  (e.g. {example})")
    return "\n".join(lines)


def _play(
    specs: list[runner.EpisodeSpec], out: Path, max_concurrent: int, workers: int, quiet: bool
) -> list[records.EpisodeRecord]:
    from tqdm import tqdm

    failed: list[records.EpisodeRecord] = []
    with (
        records.EventLog(out) as log,
        tqdm(total=len(specs), unit="ep", disable=quiet or None, file=sys.stderr) as bar,
    ):

        def on_done(record: records.EpisodeRecord) -> None:
            if record.status != "done":
                failed.append(record)
            bar.set_postfix(failed=len(failed), refresh=False)
            bar.update(1)

        runner.run_specs(specs, log, max_concurrent, workers, on_done)
    return failed


def cmd_list(args: argparse.Namespace) -> int:
    print("envs:")
    for env_id in registry.env_ids():
        print(f"  {env_id}")
    print("agent kinds:")
    for kind, target in sorted(registry.agent_kinds().items()):
        print(f"  {kind:28s} {target}")
    probes = registry.probe_table()
    if probes:
        print("probes:")
        for name, target in sorted(probes.items()):
            print(f"  {name:28s} {target}")
    print("bundled experiments (socialsim run NAME):")
    for name in config_module.bundled_experiments():
        print(f"  {name}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from socialsim.analysis.report import report

    directory = Path(args.dir)
    if records.read_manifest(directory) is None:
        raise config_module.ConfigError(
            f"DIR: {directory} holds no experiment (no {records.MANIFEST})"
        )
    text = report(directory, write_files=not args.no_files)
    print(text)
    failed = records.read_failures(directory)
    if failed:
        print(_failure_lines(failed, f"rerun socialsim run on {directory} to retry them"))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="socialsim", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run", help="play every episode of an experiment file that is not logged yet"
    )
    run.add_argument("file", help="a TOML experiment file, or the name of a bundled one")
    run.add_argument("--out", help="results directory (default: results/NAME)")
    run.add_argument(
        "--set",
        action="append",
        metavar="PATH=VALUE",
        help="override a key of the file (repeatable; VALUE is TOML, else a string). An "
        "override wins: it replaces a grid axis at the same key (a line says so); "
        "grid.PATH=[...] sets an axis; seats.*.PATH reaches every seat, merged into the "
        "tables a named seat has of its own",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(func=cmd_run)
    lst = sub.add_parser("list", help="envs, agent kinds, probes and bundled experiment files")
    lst.set_defaults(func=cmd_list)
    rep = sub.add_parser("report", help="tables and figures from a results directory")
    rep.add_argument("dir")
    rep.add_argument(
        "--no-files", action="store_true", help="print only; write no CSV or PNG files"
    )
    rep.set_defaults(func=cmd_report)
    from socialsim.play.command import add_play_command

    add_play_command(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except config_module.ConfigError as error:
        print(f"socialsim: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `socialsim list | head -1`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the exit's flush does not raise again
        return 0
    except KeyboardInterrupt:
        print("\nsocialsim: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
