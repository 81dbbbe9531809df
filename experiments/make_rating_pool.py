"""Build a reference pool for ``socialsim rate``: one command per pool version.

    python experiments/make_rating_pool.py --version v1 [--out results/rating_pool_v1]

It plays the pool's own cross-play with ``socialsim.run`` (ordinary results directories under
``--out``: Decrypto, every pool encoder x decoder x interceptor; each gossip game, every pool
label in the entrant's seat of every society), fits the members' Bradley–Terry ratings jointly
(``socialsim.rating.model.fit``: every rating free, the N(0, 400^2) prior fixing the origin) and
writes ``socialsim/rating/pools/VERSION.toml``. A shipped version is never rewritten: a new pool
is a new version (``--force`` only while one is being made).

v1's members are below. Future members, not in v1: the RL policies the project trains
(``experiments/train/interceptor.py``, ``donor.py``: no trained file is shipped), replayed human
Decrypto games (the human-data form; none are shipped), and LLM agents replayed from records.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import socialsim
from socialsim.rating import model
from socialsim.rating.play import cell_key

POOLS = Path(__file__).resolve().parent.parent / "socialsim" / "rating" / "pools"

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
GOSSIP = {
    "seed": 0,
    "episodes": 16,
    "seat": "agent_0",
    "games": {
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
    },
}


def decrypto_ratings(out: Path) -> dict[str, float]:
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
    return model.fit(matches)


def society_seats(society) -> list[tuple[str, dict]]:
    return [(label, SPECS[label]) for label, count in society for _ in range(count)]


def gossip_ratings(out: Path, game: str) -> dict[str, float]:
    section = GOSSIP["games"][game]
    n = section["kwargs"]["n_agents"]
    cells, names = [], {}
    for _, society in SOCIETIES:
        for label, spec in SPECS.items():  # every pool label in the entrant's seat
            row = [(label, spec), *society_seats(society)]
            seats = {f"agent_{i}": dict(s) for i, (_, s) in enumerate(row[:n])}
            cells.append(seats)
            names[cell_key(seats)] = {f"agent_{i}": lbl for i, (lbl, _) in enumerate(row[:n])}
    config = {
        "name": f"rating_pool_{game}",
        "description": f"The reference pool's own {game} cross-play.",
        "episodes": GOSSIP["episodes"],
        "seed": GOSSIP["seed"],
        "env": {"id": section["env"], "form": "parallel", "kwargs": section["kwargs"]},
        "seats": cells[0],
        "grid": {"seats": cells},
    }
    matches = []
    for record in socialsim.run(config, out / game, say=print).records():
        labels = names[cell_key(record.cell["seats"])]
        seats = sorted(labels)
        for x, a in enumerate(seats):
            for b in seats[x + 1 :]:
                if labels[a] != labels[b]:
                    ra, rb = record.returns[a], record.returns[b]
                    y = 1.0 if ra > rb else 0.0 if ra < rb else 0.5
                    matches.append(model.Match((labels[a],), (labels[b],), y, record.episode))
    return model.fit(matches)


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


def write_pool(version: str, decrypto: dict[str, float], gossip: dict[str, dict[str, float]]):
    lines = [
        f"# The frozen reference pool {version} of `socialsim rate`, written by",
        "# experiments/make_rating_pool.py; never edit a shipped version, make a new one.",
        f"version = {toml_value(version)}",
        f"built = {toml_value(datetime.now(UTC).strftime('%Y-%m-%d'))}",
        f"model = {toml_value(model.DESCRIPTION)}",
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
            f"rating = {round(decrypto[name], 1)!r}",
        ]
    lines += ["", "[gossip]", f"seed = {GOSSIP['seed']}", f"episodes = {GOSSIP['episodes']}"]
    lines += [f"seat = {toml_value(GOSSIP['seat'])}"]
    for game, section in GOSSIP["games"].items():
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
    for game, ratings in gossip.items():
        lines += ["", f"[gossip.ratings.{game}]"]
        lines += [f"{label} = {round(r, 1)!r}" for label, r in sorted(ratings.items())]
    path = POOLS / f"{version}.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="v1")
    parser.add_argument(
        "--out", help="where the cross-play runs go (default results/rating_pool_VERSION)"
    )
    parser.add_argument("--force", action="store_true", help="rewrite an existing version")
    args = parser.parse_args(argv)
    if (POOLS / f"{args.version}.toml").exists() and not args.force:
        print(f"pool {args.version} exists; a shipped pool is frozen (--force to rewrite)")
        return 2
    out = Path(args.out or f"results/rating_pool_{args.version}")
    decrypto = decrypto_ratings(out)
    gossip = {game: gossip_ratings(out, game) for game in GOSSIP["games"]}
    path = write_pool(args.version, decrypto, gossip)
    print(f"wrote {path}")
    for name, rating in sorted(decrypto.items(), key=lambda kv: -kv[1]):
        print(f"  decrypto  {name:26s} {rating:8.1f}")
    for game, ratings in gossip.items():
        for label, rating in sorted(ratings.items(), key=lambda kv: -kv[1]):
            print(f"  {game:9s} {label:26s} {rating:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
