"""``socialsim play GAME --as SEAT [--as SEAT ...] [--with SPEC|FILE ...]``: a game in the
terminal with people in the ``--as`` seats (several: hot-seat) and agents in the others.

With an experiment file that has an ``[evolution]`` table, each command plays one generation's
game: the next one the ``--out`` directory lacks (the people keep their seats; the other seats
are born of the generation before), so the same command, rerun, plays the generations in turn."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

EPILOG = """examples:
  socialsim play decrypto --as decoder --with encoder=glove_encoder --with interceptor=glove_interceptor
  socialsim play decrypto --as interceptor --with decrypto_quickstart
  socialsim play donation --as agent_3 --with '*=image_scoring' --set env.kwargs.rounds=6
  socialsim play decrypto --as encoder --as decoder          (hot-seat: two people, one keyboard)
  socialsim play donation --as agent_0 --with align_evolution --set env.kwargs.rounds=6 --out me
                                  (one game a generation: rerun it for the next generation)
  socialsim play culture --as agent_0 --with llm_cultural_evolution --out me
"""


def add_play_command(sub) -> None:
    play = sub.add_parser(
        "play",
        help="play a game in the terminal, beside agents",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    play.add_argument("game", help="decrypto, donation, prisoners, trust, market or culture")
    play.add_argument(
        "--as",
        dest="humans",
        action="append",
        required=True,
        metavar="SEAT",
        help="a seat you play (repeat for hot-seat play)",
    )
    play.add_argument(
        "--with",
        dest="others",
        action="append",
        default=[],
        metavar="SEAT=KIND|FILE",
        help="the agent of another seat ('*' for all the rest), or an experiment file",
    )
    play.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    play.add_argument("--seed", type=int, help="the game's seed (default: a random one)")
    play.add_argument("--out", help="results directory (default: results/play_GAME_TIME)")
    play.set_defaults(func=cmd_play)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def cmd_play(args: argparse.Namespace) -> int:
    from socialsim import directory_lock

    if args.out:
        out = Path(args.out)
    else:
        stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
        out = Path("results") / f"play_{args.game}_{stamp}"
    # one writer per directory, as for `socialsim run`: from before the log is read (the next
    # game's number) until the game is logged
    with directory_lock.hold(out):
        return _play(args, out)


def _play(args: argparse.Namespace, out: Path) -> int:
    from socialsim.play import session
    from socialsim.play.terminal import CLEAR, Terminal, render_ending
    from socialsim.results import read_manifest

    seed = args.seed
    if seed is None and (held := read_manifest(out)):
        seed = held.get("config", {}).get("seed")  # a directory of games keeps its seed
    experiment = session.human_experiment(
        args.game, args.humans, args.others, args.set, seed, terminal=True
    )
    spec = session.prepare(experiment, out)
    humans = session.human_seats(experiment)
    terminal = Terminal(hot_seat=len(humans) > 1)
    others = ", ".join(f"{s}: {v['kind']}" for s, v in spec.seats.items() if s not in humans)
    terminal.say(f"socialsim: {spec.env_id}, seed {spec.seed}; you play {', '.join(humans)}")
    generation = session.generation_of(spec)
    if generation is not None:
        total = experiment.config["evolution"]["generations"]
        terminal.say(f"generation {generation} of {total} (numbered from 0)")
    terminal.say(f"the other seats: {others}")
    # Ctrl-C must interrupt the blocking read at once; asyncio.run's own handler would only
    # cancel the game at the next loop iteration, after the read.
    previous = signal.signal(signal.SIGINT, _interrupt)
    try:
        game = session.play_game(experiment, spec, out, dict.fromkeys(humans, terminal))
        record = asyncio.run(game)
    except (KeyboardInterrupt, EOFError):
        terminal.say("\nGame abandoned; nothing was logged.")
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
    if record.status != "done":
        print(f"socialsim: the game failed: {record.error}", file=sys.stderr)
        return 1
    from socialsim.agents.human.agent import view_module

    module = view_module(session.game_of(record.env_id))
    if terminal.hot_seat:
        terminal.stdout.write(CLEAR)
    for seat in humans:
        terminal.say(render_ending(module.ending(record.to_json(), seat)))
    terminal.say(f"Logged to {out} (socialsim report {out})")
    if generation is not None and generation + 1 < total:
        terminal.say(f"Generation {generation + 1} is next: rerun this command with --out {out}")
    return 0
