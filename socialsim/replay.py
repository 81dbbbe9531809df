"""Recorded Decrypto games replayed against agents (the Decrypto paper's Table 1).

``socialsim replay GAMES --as decoder --as interceptor --with SEAT=KIND|FILE`` plays every
recorded game again: the env plays the recorded keywords and codes (``decrypto_v0``'s
``keywords=`` and ``codes=``), the recorded seats give the recorded hints and guesses
(``decrypto_replay_encoder``, ``decrypto_replay_guesser``) and the agent under test takes one
seat. Each ``--as`` seat is one cell, beside the cell ``replay=recorded`` where every seat is
recorded: the recorded players' own results, under the benchmark's ending rule. The run is an
ordinary results directory (``episodes.jsonl``, ``manifest.json``, resumable), so
``socialsim report`` shows IR% and MR% per cell; ``socialsim replay`` prints the comparison.

``GAMES`` is one of:

* a socialsim results directory (``socialsim play``, ``socialsim serve`` or any run): its done
  ``decrypto_v0`` episodes, with their rules (hint limits, first-round rule);
* a JSON file in the Decrypto reference's human-data form: a list of games (or an object of
  name -> game), each game an object whose ``summarized_history`` (or the game itself) is the
  list of its turns, each turn ``{"keywords": [4 words], "turn": ..., "code": "314" | "3-1-4"
  | [3, 1, 4], "hints": [3 strings], "guess_bob": ..., "guess_eve": ...}`` (the guesses in the
  code's forms). Other keys are ignored; the turns are taken in list order.

What a replay cannot reproduce is stated, not hidden. The reference's human games went on
after the benchmark's ending; a replay stops there, as the benchmark does. A recorded guess that
is not a code (a repeated digit, ``0-0-0``) is played as the first code that is not the turn's
(the same outcome: a miscommunication or no interception) and counted per game
(``manifest.json``'s ``replay.games[i].substituted``). A replay game lasts at most the recorded
turns: one that survives them while the recorded game was longer in its rules is ``cut_short``.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socialsim import config as config_module
from socialsim import records
from socialsim.config import ConfigError, Experiment
from socialsim.envs.decrypto.protocol import (
    CODES,
    MAX_HINT_CHARS,
    MAX_HINT_WORDS,
    MAX_TURNS,
    Rules,
    given_keywords,
    parse_code,
)
from socialsim.episode import EpisodeSpec
from socialsim.seeding import episode_seed

ENV_ID = "decrypto_v0"
#: the seats an agent can take in a replay (the encoder's hints are what is replayed)
SEATS = ("decoder", "interceptor")
RECORDED = "recorded"
DEFAULT_AGENTS = {
    "decoder": {"kind": "glove_decoder"},
    "interceptor": {"kind": "glove_interceptor"},
}


@dataclass
class RecordedGame:
    """One recorded game, turn by turn (guesses ``None`` where no code was recorded)."""

    name: str
    keywords: list[str]
    codes: list[tuple[int, int, int]]
    hints: list[list[str]]
    decoder_guesses: list[tuple[int, int, int] | None]
    interceptor_guesses: list[tuple[int, int, int] | None]
    players: dict[str, str] = field(default_factory=dict)
    max_turns: int = MAX_TURNS  # the length of a won game under the recorded rules
    first_round_interception: bool = True
    skipped_first_guess: bool = False  # the interceptor made no turn-1 guess (first-round rule)

    def playable(self, seat: str) -> tuple[list[list[int] | None], list[int]]:
        """The recorded guesses of ``seat`` as codes to play, and the turns whose recorded
        guess was not a code (played as the first code that is not the turn's)."""
        recorded = self.decoder_guesses if seat == "decoder" else self.interceptor_guesses
        played: list[list[int] | None] = []
        substituted = []
        for turn, (guess, code) in enumerate(zip(recorded, self.codes, strict=True), 1):
            if turn == 1 and seat == "interceptor" and self.skipped_first_guess:
                played.append(None)
            elif guess is None:
                played.append(list(next(c for c in CODES if c != code)))
                substituted.append(turn)
            else:
                played.append(list(guess))
        return played, substituted


def _code(value: Any) -> tuple[int, int, int] | None:
    """A recorded code or guess in any of its forms, ``None`` if it is not a code."""
    if isinstance(value, str) and len(value.strip()) == 3 and value.strip().isdigit():
        value = "-".join(value.strip())
    try:
        return parse_code(value) if not isinstance(value, int) else None
    except ValueError:
        return None


def reference_games(data: Any, where: str) -> list[RecordedGame]:
    """The games of a file in the Decrypto reference's human-data form (module docstring)."""
    items = list(data.items()) if isinstance(data, Mapping) else None
    if isinstance(data, list):
        items = list(enumerate(data))
    if not items:
        raise ConfigError(f"GAMES: {where} holds no games; expected a list of recorded games")
    games = []
    for key, game in items:
        turns = game.get("summarized_history") if isinstance(game, Mapping) else game
        name = f"{Path(where).name}#{key}"
        if not isinstance(turns, list) or not turns:
            raise ConfigError(f"GAMES: {name}: expected a list of turns (summarized_history)")
        keywords, codes, hints, bob, eve = None, [], [], [], []
        for i, turn in enumerate(turns, 1):
            at = f"{name} turn {i}"
            missing = [
                k
                for k in ("keywords", "code", "hints", "guess_bob", "guess_eve")
                if not isinstance(turn, Mapping) or k not in turn
            ]
            if missing:
                raise ConfigError(f"GAMES: {at}: missing {', '.join(missing)}")
            try:
                words = list(given_keywords(turn["keywords"]))
            except ValueError as error:
                raise ConfigError(f"GAMES: {at}: {error}") from None
            if keywords is not None and words != keywords:
                raise ConfigError(f"GAMES: {at}: the keywords {words} differ from turn 1's")
            keywords = words
            code = _code(turn["code"])
            if code is None or code in codes:
                raise ConfigError(
                    f"GAMES: {at}: code {turn['code']!r} is not a code (distinct digits 1-4) "
                    "or repeats an earlier turn's"
                )
            given = turn["hints"]
            if not isinstance(given, list) or len(given) != 3:
                raise ConfigError(f"GAMES: {at}: hints must be 3 strings, got {given!r}")
            codes.append(code)
            hints.append([str(h) for h in given])
            bob.append(_code(turn["guess_bob"]))
            eve.append(_code(turn["guess_eve"]))
        games.append(
            RecordedGame(
                name,
                keywords or [],
                codes,
                hints,
                bob,
                eve,
                {s: RECORDED for s in ("encoder", *SEATS)},
            )
        )
    return games


def results_games(directory: Path) -> list[RecordedGame]:
    """The done Decrypto episodes of a socialsim results directory."""
    games = []
    for record in records.read_records(directory):
        if record.env_id != ENV_ID:
            continue
        turns = record.summary["turn_log"]
        rules = next(
            (Rules.from_payload(m["payload"]) for m in record.messages if m["kind"] == Rules.kind),
            None,
        )
        games.append(
            RecordedGame(
                name=f"{directory.name}#{records.cell_id(record.cell)}#{record.episode}",
                keywords=list(record.summary["keywords"]),
                codes=[tuple(t["code"]) for t in turns],
                hints=[list(t["hints"]) for t in turns],
                decoder_guesses=[tuple(t["decoder_guess"]) for t in turns],
                interceptor_guesses=[
                    None if t["interceptor_guess"] is None else tuple(t["interceptor_guess"])
                    for t in turns
                ],
                players={s: str(spec.get("kind", "?")) for s, spec in record.seats.items()},
                max_turns=rules.max_turns if rules else MAX_TURNS,
                first_round_interception=rules.first_round_interception if rules else True,
                skipped_first_guess=bool(turns) and turns[0]["interceptor_guess"] is None,
            )
        )
    if not games:
        raise ConfigError(f"GAMES: {directory} holds no finished {ENV_ID} episode")
    return games


def read_games(source: str | os.PathLike) -> list[RecordedGame]:
    """The recorded games of a results directory or a reference human-data JSON file."""
    path = Path(source)
    if path.is_dir():
        if records.read_manifest(path) is None and not (path / records.EPISODES).exists():
            raise ConfigError(f"GAMES: {path} is not a results directory (no {records.EPISODES})")
        return results_games(path)
    if not path.is_file():
        raise ConfigError(
            f"GAMES: no file or directory at {os.fspath(source)!r}; give a results directory "
            "or a human-data JSON file"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ConfigError(f"GAMES: {path} is not JSON: {error}") from None
    return reference_games(data, str(path))


def env_kwargs(game: RecordedGame, games: Sequence[RecordedGame]) -> dict[str, Any]:
    """The env of one replay: the recorded keywords, codes and turns; hint limits wide enough
    for every recorded hint of the set (the reference did not limit hints), so each is played."""
    every = [h.strip() for g in games for turn in g.hints for h in turn]
    return {
        "keywords": list(game.keywords),
        "codes": [list(c) for c in game.codes],
        "max_turns": len(game.codes),
        "first_round_interception": game.first_round_interception,
        "max_hint_words": max([MAX_HINT_WORDS, *(len(h.split()) for h in every)]),
        "max_hint_chars": max([MAX_HINT_CHARS, *(len(h) for h in every)]),
    }


class ReplayExperiment(Experiment):
    """An experiment whose episodes are the recorded games, one cell per replaced seat (and
    agent, for a file with a grid) plus the ``recorded`` cell."""

    def __init__(self, config, cells, games: Sequence[RecordedGame], seats: Mapping[str, str]):
        super().__init__(config, cells)
        object.__setattr__(self, "games", list(games))
        object.__setattr__(self, "replaced", dict(seats))  # cell id -> the seat it replaces

    def specs(self) -> list[EpisodeSpec]:
        specs = []
        seed = self.config.get("seed", 0)
        for cell, config in self.cells:
            seat = self.replaced[records.cell_id(cell)]
            for index, game in enumerate(self.games):
                seats: dict[str, dict[str, Any]] = {
                    "encoder": {"kind": "decrypto_replay_encoder", "recorded": game.hints}
                }
                for guesser in SEATS:
                    seats[guesser] = (
                        dict(config["seats"][guesser])
                        if guesser == seat
                        else {
                            "kind": "decrypto_replay_guesser",
                            "recorded": game.playable(guesser)[0],
                        }
                    )
                specs.append(
                    EpisodeSpec(
                        env_id=ENV_ID,
                        env_kwargs=env_kwargs(game, self.games),
                        seed=episode_seed(seed, index),
                        seats=seats,
                        episode=index,
                        cell=cell,
                        experiment=self.name,
                    )
                )
        return specs


def replay_experiment(
    games: Sequence[RecordedGame],
    source: str | os.PathLike,
    seats: Sequence[str],
    others: Sequence[str] = (),
    overrides: Sequence[str] = (),
    seed: int = 0,
) -> ReplayExperiment:
    """The replay of ``games`` with the agents of ``others`` (``SEAT=KIND`` / ``SEAT={...}``
    or one experiment file, whose grid cells are crossed with ``seats``) in ``seats``."""
    unknown = [s for s in seats if s not in SEATS]
    if unknown or not seats:
        raise ConfigError(
            f"--as: {unknown[0] if unknown else 'nothing'!r} cannot be replaced; an agent takes "
            f"the {' or the '.join(SEATS)} seat of a recorded game"
        )
    files = [o for o in others if "=" not in o]
    if len(files) > 1:
        raise ConfigError(f"--with: at most one experiment file, got {', '.join(files)}")
    if files:
        base = config_module.load(files[0], overrides)
        if any(cell["env"]["id"] != ENV_ID for _, cell in base.cells):
            raise ConfigError(f"--with {files[0]}: the file plays another env, not {ENV_ID}")
        name = f"replay_{base.name}"
    else:
        config = {
            "name": "replay",
            "env": {"id": ENV_ID},
            "seats": {
                "encoder": {"kind": "decrypto_random_encoder"},
                **copy.deepcopy(DEFAULT_AGENTS),
            },
        }
        for text in others:
            seat, spec = config_module.seat_assignment(text)
            if seat not in SEATS:
                raise ConfigError(f"--with {seat}: only the {' and '.join(SEATS)} take an agent")
            config["seats"][seat] = spec
        base = config_module.load(config, overrides)
        name = f"replay_{Path(source).stem}"
    cells: list[tuple[dict[str, Any], dict[str, Any]]] = [({"replay": RECORDED}, {"seats": {}})]
    replaced = {records.cell_id({"replay": RECORDED}): RECORDED}
    for seat in dict.fromkeys(seats):
        for assignment, config in base.cells:
            cell = {"replay": seat, **assignment}
            spec = config_module.resolve_seats(config)[seat]
            cells.append((cell, {"seats": {seat: spec}}))
            replaced[records.cell_id(cell)] = seat
    digest = hashlib.sha256(
        json.dumps([g.__dict__ for g in games], sort_keys=True, default=list).encode()
    ).hexdigest()
    resolved = {
        "name": name,
        "description": f"{len(games)} recorded Decrypto games of {os.fspath(source)} replayed "
        f"with an agent as {' and as '.join(dict.fromkeys(seats))}",
        "episodes": len(games),
        "seed": seed,
        "max_concurrent": base.max_concurrent,
        "workers": base.workers,
        "replay": {
            "source": os.fspath(source),
            "sha256": digest,
            "seats": list(dict.fromkeys(seats)),
            "games": [
                {
                    "name": g.name,
                    "players": g.players,
                    "turns": len(g.codes),
                    "max_turns": g.max_turns,
                    "substituted": {s: g.playable(s)[1] for s in SEATS if g.playable(s)[1]},
                }
                for g in games
            ],
        },
        "agents": [{"cell": c, "seats": cfg["seats"]} for c, cfg in cells[1:]],
    }
    return ReplayExperiment(resolved, cells, games, replaced)


def _agent(spec: Mapping[str, Any]) -> str:
    """An agent's label; a model seat by its model's name (its table holds endpoints)."""
    from socialsim.analysis import tom

    model = spec.get("model")
    if isinstance(model, Mapping) and "model" in model:
        return f"{spec['kind']}({model['model']})"
    return tom.agent_label(spec)


def replay_table(recs: Sequence[records.EpisodeRecord], manifest: Mapping[str, Any]):
    """Per cell: who plays the replaced seat, and the outcomes (IR%, MR%, turns, endings) of
    the replayed games, the ``recorded`` cell first (the recorded players' own results)."""
    import pandas as pd

    from socialsim.analysis import tom
    from socialsim.analysis.tables import cell_label

    lengths = [
        g["max_turns"] for g in manifest.get("config", {}).get("replay", {}).get("games", [])
    ]
    by_cell: dict[str, list[records.EpisodeRecord]] = {}
    for record in recs:
        if record.status == "done":
            by_cell.setdefault(records.cell_id(record.cell), []).append(record)
    rows = []
    for group in by_cell.values():
        seat = group[0].cell.get("replay", RECORDED)
        out = tom.outcomes(group)
        rows.append(
            {
                "cell": cell_label(group[0].cell),
                "seat": seat,
                "agent": RECORDED if seat == RECORDED else _agent(group[0].seats[seat]),
                "games": out["games"],
                "IR (%)": out["interception_rate"],
                "MR (%)": out["miscommunication_rate"],
                "avg_turns": out["avg_turns"],
                "avg_interception_turn": out["avg_interception_turn"],
                "avg_miscommunication_turn": out["avg_miscommunication_turn"],
                **{e: out[e] for e in ("intercept", "miscomm", "both", "survived")},
                "cut_short": sum(
                    r.summary["ending"] == "survived"
                    and r.episode < len(lengths)
                    and r.summary["turns"] < lengths[r.episode]
                    for r in group
                ),
            }
        )
    rows.sort(key=lambda row: (row["seat"] != RECORDED, row["cell"]))
    return pd.DataFrame(rows)


# -- the command ----------------------------------------------------------------------------------

EPILOG = """examples:
  socialsim replay results/play_decrypto_20260101_120000 --as decoder --with decoder=glove_decoder
  socialsim replay decrypto_human_data.json --as decoder --as interceptor --with llm_decrypto_human_replay
"""


def add_replay_command(sub) -> None:
    replay = sub.add_parser(
        "replay",
        help="replay recorded Decrypto games (human games) with an agent as decoder or interceptor",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument(
        "games",
        help="a results directory, or a JSON file in the Decrypto reference's human-data form",
    )
    replay.add_argument(
        "--as",
        dest="seats",
        action="append",
        metavar="SEAT",
        help="the seat the agent takes: decoder or interceptor (repeat for both; default both)",
    )
    replay.add_argument(
        "--with",
        dest="others",
        action="append",
        default=[],
        metavar="SEAT=KIND|FILE",
        help="the agent of a replaced seat, or an experiment file whose seats (and grid) give "
        "them (default: decoder=glove_decoder, interceptor=glove_interceptor)",
    )
    replay.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    replay.add_argument("--seed", type=int, default=0, help="the agents' seed (default 0)")
    replay.add_argument("--out", help="results directory (default: results/NAME)")
    replay.add_argument("--quiet", action="store_true", help="no progress bar")
    replay.add_argument(
        "--offline",
        action="store_true",
        help="no model request: every reply from the reply cache; the first one missing stops "
        "the replay, naming the seat, its decision and the call",
    )
    replay.set_defaults(func=cmd_replay)


def cmd_replay(args: argparse.Namespace) -> int:
    from socialsim.analysis.sections import fmt
    from socialsim.results import RunInterrupted, RunStopped, failure_lines, run

    games = read_games(args.games)
    seats = args.seats or list(SEATS)
    experiment = replay_experiment(games, args.games, seats, args.others, args.set, args.seed)
    try:
        results = run(
            experiment,
            args.out,
            progress=not args.quiet,
            say=lambda line: print(line, file=sys.stderr),
            offline=args.offline,
        )
    except RunInterrupted as stop:
        print(f"\n{stop}; rerun the same command to resume", file=sys.stderr)
        return 130
    except RunStopped as stop:
        print(str(stop), file=sys.stderr)
        return 1
    table = replay_table(results.records(), records.read_manifest(results.directory) or {})
    table.to_csv(results.directory / "replay.csv", index=False)
    print(f"{len(games)} recorded games of {args.games}, replayed (replay.csv):")
    print(fmt(table))
    print(f"socialsim report {results.directory}: the full report")
    if results.failed:
        print(
            failure_lines(results.failed, "rerun the same command to retry them"), file=sys.stderr
        )
    return 1 if results.failed else 0
