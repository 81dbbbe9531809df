"""The ``socialsim`` command: run experiments, list what is installed, report on results.

    socialsim run FILE [--out DIR] [--set path.to.key=value ...] [--cache PATH] [--check]
                  [--offline]
    socialsim list
    socialsim report DIR
    socialsim play GAME --as SEAT [--with SEAT=KIND|FILE ...]
    socialsim serve [--host 127.0.0.1] [--port 8000] [--public]
    socialsim replay GAMES [--as decoder|interceptor ...] [--with SEAT=KIND|FILE ...]
    socialsim rate SPEC --game GAME [--episodes N] [--pool VERSION] [--seed S] [--out DIR]
    socialsim leaderboard [FILE] [--out DIR]
    socialsim distill RUN [--seats SEATS] [--by kind|model|seat] --out POLICY

A bad experiment file or override exits with status 2 and writes nothing.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from pathlib import Path

from socialsim import config as config_module
from socialsim import records, registry
from socialsim.results import RunInterrupted, RunStopped, failure_lines, read_manifest
from socialsim.results import run as run_experiment


def cmd_run(args: argparse.Namespace) -> int:
    def say(line: str) -> None:
        print(f"socialsim: {line}" if line.startswith("--set") else line, file=sys.stderr)

    overrides = list(args.set or [])
    if args.ray_address:
        # the backend reads the cluster's address from RAY_ADDRESS, as Ray's own tools do
        os.environ["RAY_ADDRESS"] = args.ray_address
    if (os.environ.get("RAY_ADDRESS") or "").strip():  # the flag, or the variable alone
        overrides.append("backend=ray")
    ended_by: list[int] = []

    def stop(signum: int, frame) -> None:  # SIGTERM ends a run as Ctrl-C does: summed up
        ended_by.append(signum)
        raise KeyboardInterrupt

    previous = {signum: signal.signal(signum, stop) for signum in ending_signals()}
    try:
        results = run_experiment(
            args.file,
            args.out,
            overrides,
            cache=args.cache,
            check_only=args.check,
            progress=not args.quiet,
            say=say,
            offline=args.offline,
        )
    except RunInterrupted as stopped:
        try:
            print(f"\n{stopped}; rerun the same command to resume", file=sys.stderr, flush=True)
        except OSError:  # SIGHUP: the terminal is gone, and the line with it
            pass
        return 128 + (ended_by[0] if ended_by else signal.SIGINT)
    except RunStopped as stopped:
        print(str(stopped), file=sys.stderr)
        return 1
    except OSError as error:  # the disk fails as the run reads (or sets aside) what it holds
        verb = "write" if isinstance(error, records.LogWriteError) else "read"
        where = error.filename or args.out
        print(
            f"socialsim: error: cannot {verb} {where}: {error.strerror or error}", file=sys.stderr
        )
        return 1
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if results.failed:
        print(
            failure_lines(results.failed, "rerun the same command to retry them"), file=sys.stderr
        )
    return 1 if results.failed else 0


def ending_signals() -> list[int]:
    """The signals that end ``socialsim run`` as Ctrl-C does (the episodes logged so far kept,
    the summary printed, the directory's lock released, exit 128 + the signal's number): SIGTERM
    (a service manager, ``kill``) and SIGHUP (a closed terminal) unless it is ignored, as
    ``nohup`` has it, so that a run started so goes on."""
    return [signal.SIGTERM] + [
        signum
        for signum in (getattr(signal, "SIGHUP", None),)
        if signum is not None and signal.getsignal(signum) is signal.SIG_DFL
    ]


def cmd_list(args: argparse.Namespace) -> int:
    print("envs (and the agent kinds that declare they fit):")
    for env_id in registry.env_ids():
        print(f"  {env_id:28s} {', '.join(registry.kinds_that_fit(env_id)) or '-'}")
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
        print(f"  {name:28s} {config_module.bundled_description(name)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from socialsim.analysis.report import report

    for directory in map(Path, args.dir):
        if read_manifest(directory) is None:
            raise config_module.ConfigError(
                f"DIR: {directory} holds no experiment (no {records.MANIFEST})"
            )
    try:
        if len(args.dir) > 1:
            from socialsim.analysis.compare import MixedFamilies, compare

            out = None if args.no_files else Path(args.out or Path(args.dir[0]) / "comparison")
            try:
                print(compare(args.dir, out).text())
            except MixedFamilies as error:
                raise config_module.ConfigError(str(error)) from None
            return 0
        directory = Path(args.dir[0])
        text = report(directory, write_files=not args.no_files)
    except OSError as error:  # a full or read-only disk under the report's files
        where = error.filename or args.out or args.dir[0]
        print(
            f"socialsim: cannot write {where}: {error.strerror or error}; the report needs room "
            "for its files there (or --no-files prints it only)",
            file=sys.stderr,
        )
        return 1
    print(text)
    failed = records.read_failures(directory)
    if failed:
        print(failure_lines(failed, f"rerun socialsim run on {directory} to retry them"))
    return 0


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning of ours as one line (``socialsim: warning: ...``), others as Python shows them."""
    if issubclass(category, records.BadLinesWarning):
        if str(message) not in _shown:  # one warning, however many times the log is read
            _shown.add(str(message))
            print(f"socialsim: warning: {message}", file=sys.stderr)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning
_shown: set[str] = set()


def main(argv: list[str] | None = None) -> int:
    warnings.showwarning = _show_warning
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
        "grid.PATH=[...] sets an axis; seats.*.KEY sets the default seat, and "
        "seats.*.TABLE.KEY also merges into a TABLE (e.g. model) a named seat has of its own",
    )
    run.add_argument(
        "--cache",
        metavar="PATH",
        help="a reply cache file shared by several results directories (for every LLM seat "
        "whose model table names no cache of its own); recorded as the cache key",
    )
    run.add_argument(
        "--check",
        action="store_true",
        help="check everything (one episode of each model-free cell included), print the plan, "
        "write nothing",
    )
    run.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="play on the Ray cluster at ADDRESS (HOST:6379 as `ray start --head` prints, or "
        "ray://HOST:10001; sets RAY_ADDRESS). A set RAY_ADDRESS does the same; either implies "
        "backend=ray. Without both, backend=ray starts a local Ray of its own",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument(
        "--offline",
        action="store_true",
        help="no model request: every reply from the log's reply cache; the first one missing "
        "stops the run, naming the seat, its decision and the call",
    )
    run.set_defaults(func=cmd_run)
    lst = sub.add_parser("list", help="envs, agent kinds, probes and bundled experiment files")
    lst.set_defaults(func=cmd_list)
    rep = sub.add_parser("report", help="tables and figures from a results directory")
    rep.add_argument("dir", nargs="+", help="a results directory; several are compared")
    rep.add_argument(
        "--no-files", action="store_true", help="print only; write no CSV or figure files"
    )
    rep.add_argument(
        "--out",
        help="with several DIRs: where the comparison's files go (default: DIR1/comparison)",
    )
    rep.set_defaults(func=cmd_report)
    from socialsim.play.command import add_play_command

    add_play_command(sub)
    from socialsim.web.command import add_serve_command

    add_serve_command(sub)
    from socialsim.web.study_test import add_study_test_command

    add_study_test_command(sub)
    from socialsim.replay import add_replay_command

    add_replay_command(sub)
    from socialsim.fork import add_fork_command

    add_fork_command(sub)
    from socialsim.rating.command import add_leaderboard_command, add_rate_command

    add_rate_command(sub)
    add_leaderboard_command(sub)
    from socialsim.distill.command import add_distill_command

    add_distill_command(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except config_module.ConfigError as error:
        print(f"socialsim: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError as error:
        if _stdout_open():  # a pipe of our own: a failure, never a silent success
            print(f"socialsim: error: {error.strerror or error}", file=sys.stderr)
            return 1
        # `socialsim list | head -1`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that the exit's flush does not raise again
        return 0
    except KeyboardInterrupt:
        print("\nsocialsim: interrupted", file=sys.stderr)
        return 130


def _stdout_open() -> bool:
    """Whether standard output can still be written (a pipe whose reader has gone polls as an
    error)."""
    import select

    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        events = poll.poll(0)
    except (OSError, ValueError, AttributeError):  # not a file: nothing says it has gone
        return True
    return not any(event & (select.POLLERR | select.POLLHUP) for _, event in events)


if __name__ == "__main__":
    sys.exit(main())
