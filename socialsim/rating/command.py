"""``socialsim rate`` and ``socialsim leaderboard``: the commands, added to the CLI's parser.

    socialsim rate SPEC --game GAME [--episodes N] [--pool VERSION] [--seed S] [--out DIR]
                   [--seat SEAT] [--name NAME] [--ratings FILE]
    socialsim rate RESULTS_DIR --seat SEAT --game GAME      (games already played, see .recorded)
    socialsim leaderboard [FILE] [--out DIR]

``rate`` checks everything before it writes: the pool, the game, the entrant (its kind, its
parameters, the seats it can take). Then it plays (or resumes) the cross-play in ``DIR``
(default ``results/rate_POOL_GAME_NAME_sSEED``; a gossip game of pool v2: one results directory
per seat position, ``DIR/agent_0`` .. ``DIR/agent_8``), prints the entrant's scores and ratings
with their intervals, the rating's held-out log-loss beside a coin's, the pool's own sampling
error and, where one number does not fit the entrant, its per-opponent win rates; it writes
``DIR/crossplay.csv`` and ``DIR/rating.json`` and appends the ratings to the ratings file
(``--ratings``; with ``--out`` and no ``--ratings``, ``DIR/ratings.jsonl``, else
``results/ratings.jsonl``, which ``socialsim leaderboard`` reads). ``--offline``: no model
request, as ``socialsim run --offline``.

``--episodes`` counts games per matchup and seed block: in a gossip game of pool v2 every one of
the nine positions plays its own ``--episodes`` seeds, so a rating spans 9 x N seeds.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from socialsim.config import ConfigError
from socialsim.rating import entrant as entrant_module
from socialsim.rating import held_out, leaderboard, model, play, recorded, scores
from socialsim.rating import pool as pool_module

DECRYPTO = "decrypto"
TITLES = {
    "win_rate": "win rate",
    "miscommunication_rate": "MR",
    "interception_rate": "IR",
    "cooperates_with_cooperators": "cooperates w/ cooperators",
    "refuses_defectors": "refuses defectors",
    "exploits": "exploits",
    "truthful_gossip": "truthful gossip",
    "return": "return",
}


def add_rate_command(sub) -> None:
    rate = sub.add_parser(
        "rate",
        help="rate an agent, a team or a policy against the frozen reference pool",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rate.add_argument(
        "spec",
        metavar="SPEC",
        help="an agent kind (glove_decoder), a seat spec as a TOML inline table or JSON "
        "('{kind = \"glove_encoder\", k = 4}'), a team ENCODER+DECODER, a policy .zip, an "
        "experiment file with --seat, or a results directory with --seat (its recorded games: "
        "a person's browser games, say)",
    )
    rate.add_argument("--game", required=True, help="decrypto, or a gossip game of the pool")
    rate.add_argument(
        "--episodes",
        type=int,
        help="games per matchup (default: the pool's; a gossip game: per seat position)",
    )
    rate.add_argument("--pool", default=pool_module.DEFAULT_VERSION, help="pool version")
    rate.add_argument("--seed", type=int, help="base seed (default: the pool's seeds)")
    rate.add_argument("--out", help="the results directory of the rating run")
    rate.add_argument(
        "--seat", help="with an experiment file: the seat to rate (or encoder,decoder)"
    )
    rate.add_argument("--name", help="the entrant's name on the leaderboard")
    rate.add_argument(
        "--ratings",
        help="the ratings file to append to (default: DIR/ratings.jsonl with --out, else "
        f"{leaderboard.DEFAULT_FILE}, the leaderboard's)",
    )
    rate.add_argument("--quiet", action="store_true", help="no progress bar")
    rate.add_argument(
        "--offline",
        action="store_true",
        help="no model request: every reply from the reply cache; the first one missing stops "
        "the rating, naming the seat, its decision and the call",
    )
    rate.set_defaults(func=cmd_rate)


def add_leaderboard_command(sub) -> None:
    board = sub.add_parser("leaderboard", help="a sortable HTML page and a CSV of a ratings file")
    board.add_argument("file", nargs="?", default=str(leaderboard.DEFAULT_FILE), metavar="FILE")
    board.add_argument("--out", help="where leaderboard.html and .csv go (default: FILE's folder)")
    board.set_defaults(func=cmd_leaderboard)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    html_path, csv_path = leaderboard.write(Path(args.file), Path(args.out) if args.out else None)
    print(f"wrote {html_path} and {csv_path}")
    return 0


def cmd_rate(args: argparse.Namespace) -> int:
    pool = pool_module.load(args.pool)
    games = [DECRYPTO, *pool.gossip_games]
    if args.game not in games:
        raise ConfigError(
            f"--game: {args.game!r} is not rated by pool {pool.version}; allowed: {', '.join(games)}"
        )
    section = pool.decrypto if args.game == DECRYPTO else pool.gossip
    episodes = section["episodes"] if args.episodes is None else args.episodes
    seed = section["seed"] if args.seed is None else args.seed
    if episodes < 1:
        raise ConfigError(f"--episodes: must be >= 1, got {episodes}")
    if seed < 0:
        raise ConfigError(f"--seed: must be an integer >= 0, got {seed}")
    if Path(args.spec).is_dir():
        return _rate_recorded(args, pool, seed)
    who = entrant_module.parse(args.spec, args.seat, args.name)
    if args.game == DECRYPTO:
        roles = play.decrypto_roles(who, pool, say)
        matchups = play.decrypto_matchups(who, pool, roles)
        groups = episodes
    else:
        matchups = play.gossip_matchups(who, pool, args.game)
        groups = episodes * len(pool.positions)
    out = Path(
        args.out
        or Path("results")
        / f"rate_{pool.version}_{args.game}_{entrant_module.slug(who.name)}_s{seed}"
    )
    run_blocks = play.blocks(who, args.game, pool, episodes, seed, matchups, out)
    from socialsim.llm.offline import offline
    from socialsim.results import RunStopped

    try:
        with offline(args.offline):
            held = play.play(run_blocks, say, progress=not args.quiet)
    except RunStopped as stop:
        print(str(stop), file=sys.stderr)
        return 1
    played = scores.join(held, matchups, seed)
    if args.game == DECRYPTO:
        rated = scores.rate_decrypto(played, pool, groups, seed)
        where = f"{episodes} games per matchup"
    else:
        rated = scores.rate_gossip(played, pool, args.game, groups, seed)
        where = (
            f"{episodes} games per matchup in each of {len(pool.positions)} seat positions"
            if len(pool.positions) > 1
            else f"{episodes} games per matchup"
        )
    title = (
        f"{who.name} in {args.game}, against reference pool {pool.version} "
        f"({where}, seeds {seed}-{seed + groups - 1})"
    )
    return _finish(args, who, rated, pool, seed, groups, out, title, "seeds")


def say(line: str) -> None:
    print(line, file=sys.stderr)


def _rate_recorded(args: argparse.Namespace, pool, seed: int) -> int:
    """SPEC is a results directory: its games where every other seat was a pool member."""
    directory = Path(args.spec)
    spec, played, groups, skipped = recorded.read(directory, args.seat, args.game, pool)
    who = entrant_module.Entrant(
        args.name or f"{entrant_module.label(spec)} ({directory.name})", spec=spec
    )
    if args.game == DECRYPTO:
        rated = scores.rate_decrypto(played, pool, groups, seed)
    else:
        rated = scores.rate_gossip(played, pool, args.game, groups, seed)
    name = f"rate_{pool.version}_{args.game}_{entrant_module.slug(who.name)}_recorded"
    out = Path(args.out or Path("results") / name)
    out.mkdir(parents=True, exist_ok=True)
    title = (
        f"{who.name}: seat {args.seat} of {groups} recorded games in {directory}, against "
        f"reference pool {pool.version} ({skipped} skipped: a partner not in the pool)"
    )
    return _finish(args, who, rated, pool, seed, groups, out, title, "recorded games")


def _finish(args, who, rated, pool, seed, groups, out: Path, title: str, unit: str) -> int:
    entries = [_entry(who, args.game, r, pool, seed, groups, out) for r in rated]
    print(_text(title, args.game, rated, pool, seed, f"{groups} {unit}"))
    _write_crossplay(out / "crossplay.csv", rated)
    (out / "rating.json").write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n")
    ratings = ratings_file(args, out)
    leaderboard.append(ratings, entries)
    say(f"cross-play matrix: {out / 'crossplay.csv'}; ratings appended to {ratings}")
    return 0


def _rounded(triple: tuple[float, float, float]) -> list[float | None]:
    """An estimate and its interval to 6 places for the ratings file; an undefined one (NaN)
    as ``None``."""
    return [None if math.isnan(v) else round(v, 6) for v in triple]


def ratings_file(args: argparse.Namespace, out: Path) -> Path:
    """Where the ratings go: ``--ratings``; else, with ``--out``, the ratings file in that
    directory (a run told where to write writes nothing elsewhere); else the leaderboard's."""
    if args.ratings:
        return Path(args.ratings)
    return out / "ratings.jsonl" if args.out else leaderboard.DEFAULT_FILE


def _entry(who, game, rated, pool, seed, episodes, out) -> dict[str, Any]:
    return {
        "entrant": who.name,
        "spec": who.spec if who.spec is not None else who.team,
        "game": game,
        "role": rated.role,
        "pool": pool.version,
        "model": pool.model,
        "seed": seed,
        "episodes": episodes,
        "games": rated.games,
        "rating": _rounded(rated.rating),
        "scores": {k: _rounded(v) for k, v in rated.scores.items()},
        **({"fit": rated.fit.to_json()} if rated.fit is not None else {}),
        "results": str(out),
        "rated_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _format(triple, digits: int) -> str:
    value, low, high = triple
    if math.isnan(value):
        return "-"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _text(title: str, game: str, rated, pool, seed: int, groups: str) -> str:
    keys = list(rated[0].scores)
    first = "role" if game == DECRYPTO else "game"
    header = [first, "games", "rating (Elo)", "held-out log-loss", *(TITLES[k] for k in keys)]
    rows = [
        [
            r.role,
            str(r.games),
            _format(r.rating, 0),
            _log_loss(r.fit),
            *(_format(r.scores[k], 3) for k in keys),
        ]
        for r in rated
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [
        title,
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
        *("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows),
        f"rating model: {pool.model} (pool {pool.version}).",
        f"intervals: 95% cluster bootstrap over the {groups}, the seed the cluster "
        f"({model.RESAMPLES} resamples, seeded {seed}).",
        f"held-out log-loss: each seed's games predicted by the rating fitted on the other seeds "
        f"(a coin: {held_out.COIN:.3f}; per-opponent win rates fitted the same way in brackets).",
        _pool_error(pool, game),
        *(line for r in rated for line in _per_opponent(r, game)),
    ]
    return "\n".join(line.rstrip() for line in lines)


def _log_loss(fit) -> str:
    if fit is None or math.isnan(fit.log_loss):
        return "-"
    return f"{fit.log_loss:.3f} ({fit.per_opponent_log_loss:.3f})"


def _pool_error(pool, game: str) -> str:
    intervals = pool.intervals(game)
    if not intervals:
        return f"pool {pool.version} states no sampling error of its own ratings (v2 on do)."
    halves = sorted((high - low) / 2 for low, high in intervals.values())
    middle = halves[len(halves) // 2]
    return (
        f"pool {pool.version}'s own ratings carry sampling error: 95% intervals of "
        f"+-{halves[0]:.0f} to +-{halves[-1]:.0f} Elo (median +-{middle:.0f}; cluster bootstrap "
        "over its seeds); a rating that close to a member's is not told apart from it."
    )


def _per_opponent(rated, game: str) -> list[str]:
    fit = rated.fit
    if fit is None or fit.one_number_fits:
        return []
    where = f"{rated.role}: " if game == DECRYPTO else ""
    rates = ", ".join(
        f"vs {k} {r:.2f}" if not k.startswith("with") else f"{k} {r:.2f}"
        for k, (r, _) in sorted(fit.rates.items(), key=lambda kv: -kv[1][0])
    )
    return [
        f"{where}one number does not fit: its per-opponent win rates predict held-out seeds "
        f"better ({fit.per_opponent_log_loss:.3f} against {fit.log_loss:.3f}): {rates}."
    ]


def _write_crossplay(path: Path, rated) -> None:
    rows = [row for r in rated for row in r.crossplay]
    fields = list(dict.fromkeys(k for row in rows for k in row))
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
