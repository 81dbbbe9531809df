"""``socialsim distill RUN ... --out POLICY``: strategies distilled from the decisions of a
donation-game run, with their fidelity on held-out episodes (see :mod:`socialsim.distill`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from socialsim import records
from socialsim.config import ConfigError
from socialsim.distill.decisions import decisions
from socialsim.distill.fidelity import SPARSE, cross_validate, cue_table_text, table_text
from socialsim.distill.strategy import Strategy, check_smoothing, save
from socialsim.envs.gossip.cues import EXTRA_LABELS, check_cues

GROUPINGS = ("kind", "model", "seat")


def group_of(seat: str, spec: dict[str, Any], by: str) -> str:
    if by == "seat":
        return seat
    if by == "model":
        model = spec.get("model")
        if isinstance(model, dict) and model.get("model"):
            return str(model["model"])
    return str(spec.get("kind", "?"))


def distill(
    runs: Sequence[str | Path],
    *,
    seats: Sequence[str] | None = None,
    by: str = "kind",
    folds: int = 5,
    smoothing: float = 0.5,
    cues: Any = ("base",),
) -> tuple[dict[str, Strategy], dict[str, Any]]:
    """The strategies of ``runs``' decisions (one per group of seats, over the base cues and
    the extra ones ``cues`` names: ``"base,round"``, ``("base", "stock")``, ``"all"``) with
    their fidelity, and the file's ``source`` entry. A ``ValueError`` names what cannot be
    distilled."""
    if by not in GROUPINGS:
        raise ValueError(f"--by: {by!r}; allowed: {', '.join(GROUPINGS)}")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ValueError(f"--folds: must be an integer >= 2, got {folds!r}")
    check_smoothing(smoothing)
    extras = check_cues(cues, "--cues")
    read = []
    for run in runs:
        if not (Path(run) / records.MANIFEST).is_file():
            raise ValueError(f"RUN: {run} holds no experiment (no {records.MANIFEST})")
        found = records.read_records(run)
        if not found:
            raise ValueError(f"RUN: {run} holds no finished episode")
        read.extend(found)
    every = decisions(read)
    wanted = set(seats or ())
    if wanted:
        known = {seat for r in read for seat in r.seats}
        unknown = sorted(wanted - known)
        if unknown:
            raise ValueError(
                f"--seats: {', '.join(unknown)} not in the run; seats: {', '.join(sorted(known))}"
            )
    groups: dict[str, list] = {}
    for d in every:
        if wanted and d.seat not in wanted:
            continue
        groups.setdefault(group_of(d.seat, read[d.episode].seats[d.seat], by), []).append(d)
    if not groups:
        raise ValueError("RUN: no decision of the chosen seats to distill")
    strategies = {}
    for name, chosen in sorted(groups.items()):
        strategy = Strategy.fit(name, chosen, smoothing, extras)
        strategy.fidelity = cross_validate(chosen, len(read), folds, smoothing, extras)
        strategies[name] = strategy
    source = {
        "runs": [str(run) for run in runs],
        "experiments": sorted({r.experiment for r in read}),
        "episodes": len(read),
        "seats": sorted(wanted) if wanted else "all",
        "by": by,
    }
    return strategies, source


def cells_text(strategy: Strategy) -> str:
    """Each cell's count and probabilities, so that sparse cells show; a strategy over extra
    cues shows its base cells (summed over them) and how many of its cells are sparse."""
    lines = []
    if strategy.extras:
        extras = ", ".join(EXTRA_LABELS[e] for e in strategy.extras)
        parts = []
        for label, table in (("donate", strategy.donate), ("gossip", strategy.gossip)):
            seen = table.sum(axis=-1)
            parts.append(
                f"{label} {seen.size} cells ({int((seen == 0).sum())} never seen, "
                f"{int((seen < SPARSE).sum())} with fewer than {SPARSE} decisions)"
            )
        lines.append(f"  over the base cues and {extras}: {', '.join(parts)}")
        lines.append(f"  the cells below are summed over {extras} (the file holds them all)")
        strategy = strategy.marginal()
    good_bad = ("good", "bad")
    lines.append("  donate: recipient's image, standing -> decisions, P(help)")
    p_help = strategy.help_probability()
    for image, standing in ((0, 0), (0, 1), (1, 0), (1, 1)):
        n = int(strategy.donate[image, standing].sum())
        lines.append(
            f"    image {good_bad[image]:4s} standing {good_bad[standing]:4s} {n:>7d}  "
            f"{p_help[image, standing]:.3f}"
        )
    lines.append("  gossip: helped, own standing -> decisions, P(good, neutral, bad tone)")
    p_tone = strategy.valence_probability()
    for helped, own in ((1, 0), (1, 1), (0, 0), (0, 1)):
        n = int(strategy.gossip[helped, own].sum())
        shares = ", ".join(f"{p:.3f}" for p in p_tone[helped, own])
        lines.append(
            f"    {'helped' if helped else 'refused':7s} own {good_bad[own]:4s} {n:>10d}  {shares}"
        )
    return "\n".join(lines)


def cmd_distill(args: argparse.Namespace) -> int:
    seats = [s for part in args.seats or () for s in part.split(",") if s]
    try:
        strategies, source = distill(
            args.run,
            seats=seats,
            by=args.by,
            folds=args.folds,
            smoothing=args.smoothing,
            cues=args.cues,
        )
        save(args.out, strategies, source)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    except OSError as error:
        raise ConfigError(f"--out: cannot write {args.out}: {error.strerror or error}") from None
    for name, strategy in strategies.items():
        print(table_text(name, strategy.fidelity))
        print(cue_table_text(name, strategy.fidelity))
        print(cells_text(strategy))
    names = ", ".join(strategies)
    print(f"wrote {args.out}: {len(strategies)} strategies ({names})", file=sys.stderr)
    return 0


def add_distill_command(sub: Any) -> None:
    parser = sub.add_parser(
        "distill",
        help="fit strategies to a donation-game run's decisions, with held-out fidelity",
    )
    parser.add_argument("run", nargs="+", help="a results directory (several are pooled)")
    parser.add_argument("--out", required=True, help="the policy file to write (JSON)")
    parser.add_argument(
        "--seats", action="append", metavar="SEAT[,SEAT...]", help="only these seats' decisions"
    )
    parser.add_argument(
        "--by",
        default="kind",
        help="one strategy per seat kind (default), per model, or per seat",
    )
    parser.add_argument("--folds", type=int, default=5, help="cross-validation folds (episodes)")
    parser.add_argument(
        "--smoothing", type=float, default=0.5, help="add-alpha smoothing of the tables (0.5)"
    )
    parser.add_argument(
        "--cues",
        default="base",
        metavar="CUE[,CUE...]",
        help="the cues the strategy conditions on: base (the recipient's image and standing; "
        "for gossip, helped and own standing: what the numpy society plays) plus any of stock, "
        "round, last, or all (default base; the env's distilled seat plays them all)",
    )
    parser.set_defaults(func=cmd_distill)
