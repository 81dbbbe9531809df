"""Build a reference pool for ``socialsim rate``: one command per pool version.

    python experiments/make_rating_pool.py --version v2 [--out results/rating_pool_v2]

It plays the pool's own cross-play with ``socialsim.run`` (ordinary results directories under
``--out``), fits the members' Bradley–Terry ratings and writes
``socialsim/rating/pools/VERSION.toml``. A shipped version is never rewritten: a new pool is a
new version (``--force`` only while one is being made).

* Decrypto (v1, v2): every pool encoder x decoder x interceptor on seeds 0-31, one joint fit
  (``socialsim.rating.model.fit``: every rating free, the N(0, 400^2) prior fixing the origin);
  an entrant in a role plays exactly the games a member of that role played, so a member
  re-rated gets its own rating back.
* Gossip games, v2: every pool label in every seat position (``agent_0`` .. ``agent_8``, two
  seeds each: position ``i`` on seeds ``2i``, ``2i + 1``) of every society, the society filling
  the seats after it; each member's rating is fitted from its own games in the rated seat, as an
  entrant's is, against the others' ratings (``model.fit_as_entrants``), not against seats of its
  own label: so ``socialsim rate MEMBER`` on the pool's seeds returns the member's rating.
* Gossip games, v1: every pool label in ``agent_0`` of every society, seeds 0-15, one joint fit
  over every pair of seats of different labels (what an entrant in ``agent_0`` does not play:
  its v1 rating of a member differs from the member's).

v2 also writes the pool's own sampling error: each rating's 95% cluster bootstrap interval over
the pool's seeds (the seed the cluster, 1000 resamples seeded 0, every fit redone per resample,
widened for few clusters as an entrant's is: ``socialsim.rating.model.interval``).

The members (the same in v1 and v2) are below. Future members, not in v2: the RL policies the
project trains (``experiments/train/interceptor.py``, ``donor.py``: no trained file is shipped),
replayed human Decrypto games (the human-data form; none are shipped), and LLM agents replayed
from records.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

import socialsim
from socialsim.rating import model
from socialsim.rating.play import cell_key
from socialsim.rating.pool import around
from socialsim.rating.scores import entrant_matches

POOLS = Path(__file__).resolve().parent.parent / "socialsim" / "rating" / "pools"
BOOTSTRAP_SEED = 0

DECRYPTO = {
    "env": "decrypto_v0",
    "seed": 0,
    "episodes": 32,
    "members": [
        ("random_encoder", "encoder", {"kind": "decrypto_random_encoder"}),
        # k, the candidate pool, sets how plain the hints are: at 16 the GloVe interceptor
        # breaks every GloVe team, at 2048 and 8192 about half and a third of them
        ("glove_encoder", "encoder", {"kind": "glove_encoder"}),
        ("glove_encoder_k2048", "encoder", {"kind": "glove_encoder", "k": 2048}),
        ("glove_encoder_k8192", "encoder", {"kind": "glove_encoder", "k": 8192}),
        ("random_decoder", "decoder", {"kind": "decrypto_random_guesser"}),
        ("glove_decoder", "decoder", {"kind": "glove_decoder"}),
        ("glove_decoder_greedy", "decoder", {"kind": "glove_decoder", "greedy": True}),
        ("random_interceptor", "interceptor", {"kind": "decrypto_random_guesser"}),
        ("glove_interceptor", "interceptor", {"kind": "glove_interceptor"}),
        ("glove_interceptor_greedy", "interceptor", {"kind": "glove_interceptor", "greedy": True}),
    ],
}

SPECS = {
    "simple_standing": {"kind": "simple_standing"},
    "image_scoring": {"kind": "image_scoring"},
    "stern_judging": {"kind": "stern_judging"},
    "always_cooperate": {"kind": "always_cooperate"},
    "always_defect": {"kind": "always_defect"},
    "entrant": {"kind": "entrant"},
    "liar_invert": {"kind": "liar", "mode": "invert", "norm": "simple_standing"},
    "reputation_seeker": {"kind": "reputation_seeker"},
    "random_donor": {"kind": "random_donor"},
}
DISPOSITIONS = {
    "simple_standing": "discriminator",
    "image_scoring": "discriminator",
    "stern_judging": "discriminator",
    "liar_invert": "discriminator",
    "reputation_seeker": "discriminator",
    "always_cooperate": "cooperator",
    "always_defect": "defector",
    "entrant": "defector",
    "random_donor": "random",
}
SOCIETIES = [  # the eight seats beside the entrant's, in order
    ("simple_standing", [("simple_standing", 4), ("always_cooperate", 2), ("always_defect", 2)]),
    ("image_scoring", [("image_scoring", 4), ("always_cooperate", 2), ("always_defect", 2)]),
    ("stern_judging", [("stern_judging", 4), ("always_cooperate", 2), ("always_defect", 2)]),
    (
        "liars_and_entrants",
        [("simple_standing", 3), ("liar_invert", 2), ("always_cooperate", 1), ("entrant", 2)],
    ),
    (
        "reputation_seekers",
        [
            ("reputation_seeker", 3),
            ("simple_standing", 2),
            ("always_cooperate", 1),
            ("always_defect", 1),
            ("random_donor", 1),
        ],
    ),
]
GAMES = {
    "donation": {
        "env": "donation_v0",
        "kwargs": {"n_agents": 9, "rounds": 36, "schedule": "random", "gossip": True},
    },
    "prisoners": {
        "env": "prisoners_v0",
        "kwargs": {"n_agents": 9, "rounds": 36, "schedule": "random", "gossip": True},
    },
    "trust": {
        "env": "trust_v0",
        "kwargs": {"n_agents": 9, "rounds": 36, "schedule": "random", "gossip": True},
    },
}
#: per version: the seed, games per position, the rated player's positions and the fit
GOSSIP = {
    "v1": {"seed": 0, "episodes": 16, "positions": ["agent_0"], "fit": "joint"},
    "v2": {
        "seed": 0,
        "episodes": 2,
        "positions": [f"agent_{i}" for i in range(9)],
        "fit": "as_entrants",
    },
}


@dataclass
class Fitted:
    """One game's (or Decrypto's) frozen ratings, their 95% intervals and the entrant offset."""

    ratings: dict[str, float]
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    offset: float | None = None


def decrypto_ratings(out: Path, with_intervals: bool) -> Fitted:
    members = DECRYPTO["members"]
    by_role = {
        r: [(n, s) for n, rr, s in members if rr == r]
        for r in ("encoder", "decoder", "interceptor")
    }
    cells, names = [], {}
    for e in by_role["encoder"]:
        for d in by_role["decoder"]:
            for i in by_role["interceptor"]:
                seats = {"encoder": e[1], "decoder": d[1], "interceptor": i[1]}
                cells.append(seats)
                names[cell_key(seats)] = (e[0], d[0], i[0])
    config = {
        "name": "rating_pool_decrypto",
        "description": "The reference pool's own Decrypto cross-play.",
        "episodes": DECRYPTO["episodes"],
        "seed": DECRYPTO["seed"],
        "env": {"id": DECRYPTO["env"], "form": "parallel"},
        "seats": cells[0],
        "grid": {"seats": cells},
    }
    matches = []
    for record in socialsim.run(config, out / "decrypto", say=print).records():
        e, d, i = names[cell_key(record.cell["seats"])]
        survived = record.summary["ending"] == "survived"
        matches.append(model.Match((e, d), (i,), float(survived), record.episode))
    ratings = model.fit(matches)
    if not with_intervals:
        return Fitted(ratings)
    counts = model.resample_counts(DECRYPTO["episodes"], BOOTSTRAP_SEED)
    groups = [m.group for m in matches]
    replicates = [model.fit(matches, weights=row[groups]) for row in counts]
    intervals = {
        n: model.interval(np.array([r[n] for r in replicates]), ratings[n], DECRYPTO["episodes"])
        for n in ratings
    }
    return Fitted(ratings, intervals)


def society_seats(society) -> list[tuple[str, dict]]:
    return [(label, SPECS[label]) for label, count in society for _ in range(count)]


def gossip_ratings(out: Path, game: str, version: str) -> Fitted:
    """Every pool label in every position of every society; the fit of ``version``."""
    design = GOSSIP[version]
    section = GAMES[game]
    n = section["kwargs"]["n_agents"]
    matches = []
    for index, seat in enumerate(design["positions"]):
        cells, names = [], {}
        for _, society in SOCIETIES:
            for label, spec in SPECS.items():  # every pool label in the rated seat
                table = {seat: (label, spec), **around(seat, n, society_seats(society))}
                seats = {s: dict(table[s][1]) for s in sorted(table, key=_seat_number)}
                cells.append(seats)
                names[cell_key(seats)] = {s: lbl for s, (lbl, _) in table.items()}
        first = design["seed"] + index * design["episodes"]
        config = {
            "name": f"rating_pool_{game}",
            "description": f"The reference pool's own {game} cross-play, rated seat {seat}.",
            "episodes": design["episodes"],
            "seed": first,
            "env": {"id": section["env"], "form": "parallel", "kwargs": section["kwargs"]},
            "seats": cells[0],
            "grid": {"seats": cells},
        }
        where = out / game if len(design["positions"]) == 1 else out / game / seat
        for record in socialsim.run(config, where, say=print).records():
            labels = names[cell_key(record.cell["seats"])]
            group = record.seed - design["seed"]
            if design["fit"] == "joint":
                matches += _all_pairs(record, labels, group)
            else:
                matches += _rated_seat(record, labels, seat, group)
    if design["fit"] == "joint":
        return Fitted(model.fit(matches))
    players, ratings, offset = model.fit_as_entrants(matches)
    groups = len(design["positions"]) * design["episodes"]
    counts = model.resample_counts(groups, BOOTSTRAP_SEED)
    _, replicates, _ = model.fit_as_entrants(matches, counts[:, [m.group for m in matches]])
    intervals = {
        p: model.interval(replicates[:, i], ratings[0, i], groups) for i, p in enumerate(players)
    }
    fitted = {p: float(r) for p, r in zip(players, ratings[0], strict=True)}
    return Fitted(fitted, intervals, float(offset[0]))


def _seat_number(seat: str) -> int:
    return int(seat.removeprefix("agent_"))


def _all_pairs(record, labels: dict[str, str], group: int) -> list[model.Match]:
    """v1: every pair of seats of different labels."""
    out = []
    seats = sorted(labels)
    for x, a in enumerate(seats):
        for b in seats[x + 1 :]:
            if labels[a] != labels[b]:
                ra, rb = record.returns[a], record.returns[b]
                y = 1.0 if ra > rb else 0.0 if ra < rb else 0.5
                out.append(model.Match((labels[a],), (labels[b],), y, group))
    return out


def _rated_seat(record, labels: dict[str, str], seat: str, group: int) -> list[model.Match]:
    """v2: the rated seat against every seat of another label, as an entrant is scored."""
    return [
        model.Match((labels[seat],), (m.b[0],), m.y, group)
        for m in entrant_matches(record, seat, labels, True, group)
    ]


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(toml_value(v) for v in value) + "]"


def write_pool(version: str, decrypto: Fitted, gossip: dict[str, Fitted]) -> Path:
    design = GOSSIP[version]
    described = model.DESCRIPTION if design["fit"] == "joint" else model.AS_ENTRANTS_DESCRIPTION
    lines = [
        f"# The frozen reference pool {version} of `socialsim rate`, written by",
        "# experiments/make_rating_pool.py; never edit a shipped version, make a new one.",
        f"version = {toml_value(version)}",
        f"built = {toml_value(datetime.now(UTC).strftime('%Y-%m-%d'))}",
        f"model = {toml_value(described)}",
        "future_members = "
        + toml_value(
            [
                "RL policies the project trains (experiments/train/; none shipped)",
                "replayed human Decrypto games (the human-data form; none shipped)",
                "LLM agents replayed from records",
                "the market (its roles are fixed by seat; not scored yet)",
            ]
        ),
        "",
        "[decrypto]",
        f"env = {toml_value(DECRYPTO['env'])}",
        f"seed = {DECRYPTO['seed']}",
        f"episodes = {DECRYPTO['episodes']}",
    ]
    for name, role, spec in DECRYPTO["members"]:
        lines += [
            "",
            "[[decrypto.members]]",
            f"name = {toml_value(name)}",
            f"role = {toml_value(role)}",
            f"spec = {toml_value(spec)}",
            f"rating = {round(decrypto.ratings[name], 1)!r}",
        ]
        if name in decrypto.intervals:
            lines.append(f"interval = {toml_value(_tenths(decrypto.intervals[name]))}")
    lines += ["", "[gossip]", f"seed = {design['seed']}", f"episodes = {design['episodes']}"]
    if design["fit"] == "joint":
        lines += [f"seat = {toml_value(design['positions'][0])}"]
    else:
        lines += [f"positions = {toml_value(design['positions'])}", "skip_own_label = true"]
        lines += [f"fit = {toml_value(design['fit'])}"]
    for game, section in GAMES.items():
        lines += ["", f"[gossip.games.{game}]", f"env = {toml_value(section['env'])}"]
        lines += [f"kwargs = {toml_value(section['kwargs'])}"]
    for name, society in SOCIETIES:
        lines += ["", "[[gossip.societies]]", f"name = {toml_value(name)}", "seats = ["]
        for label, count in society:
            entry = {"label": label, "spec": SPECS[label], "count": count}
            lines.append(f"    {toml_value(entry)},")
        lines.append("]")
    lines += ["", "[gossip.dispositions]"]
    lines += [f"{label} = {toml_value(d)}" for label, d in DISPOSITIONS.items()]
    for game, fitted in gossip.items():
        lines += ["", f"[gossip.ratings.{game}]"]
        lines += [f"{label} = {round(r, 1)!r}" for label, r in sorted(fitted.ratings.items())]
    for game, fitted in gossip.items():
        if fitted.intervals:
            lines += ["", f"[gossip.intervals.{game}]"]
            held = sorted(fitted.intervals.items())
            lines += [f"{label} = {toml_value(_tenths(i))}" for label, i in held]
    offsets = {g: f.offset for g, f in gossip.items() if f.offset is not None}
    if offsets:
        lines += ["", "[gossip.entrant_offset]"]
        lines += [f"{game} = {round(offset, 3)!r}" for game, offset in offsets.items()]
    path = POOLS / f"{version}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _tenths(pair) -> list[float]:
    return [round(float(v), 1) for v in pair]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="v2", choices=sorted(GOSSIP))
    parser.add_argument(
        "--out", help="where the cross-play runs go (default results/rating_pool_VERSION)"
    )
    parser.add_argument("--force", action="store_true", help="rewrite an existing version")
    args = parser.parse_args(argv)
    if (POOLS / f"{args.version}.toml").exists() and not args.force:
        print(f"pool {args.version} exists; a shipped pool is frozen (--force to rewrite)")
        return 2
    out = Path(args.out or f"results/rating_pool_{args.version}")
    decrypto = decrypto_ratings(out, with_intervals=args.version != "v1")
    gossip = {game: gossip_ratings(out, game, args.version) for game in GAMES}
    path = write_pool(args.version, decrypto, gossip)
    print(f"wrote {path}")
    for name, rating in sorted(decrypto.ratings.items(), key=lambda kv: -kv[1]):
        print(f"  decrypto  {name:26s} {rating:8.1f}  {_shown(decrypto.intervals.get(name))}")
    for game, fitted in gossip.items():
        for label, rating in sorted(fitted.ratings.items(), key=lambda kv: -kv[1]):
            print(f"  {game:9s} {label:26s} {rating:8.1f}  {_shown(fitted.intervals.get(label))}")
        if fitted.offset is not None:
            print(f"  {game:9s} entrant offset {fitted.offset:.1f}")
    return 0


def _shown(pair) -> str:
    return "" if pair is None else f"[{pair[0]:.1f}, {pair[1]:.1f}]"


if __name__ == "__main__":
    sys.exit(main())
