"""The cross-play a rating plays: the entrant against the pool, as ordinary experiments.

A rating run is made of results directories like any other (``socialsim report`` reads each;
rerunning the same command resumes them): one experiment per block of seeds whose single grid
axis, ``seats``, lists every matchup as a whole seat table. Every matchup is played on the
pool's seeds, so each game of the entrant meets the same keywords, codes and schedules as every
other entrant's (and, for a pool member, as its own games in the pool's fit); the seed is the
bootstrap's cluster.

* Decrypto: the entrant in each role it can take — as encoder with every pool decoder against
  every pool interceptor, as decoder with every pool encoder, as interceptor against every pool
  team — or, a team, against every pool interceptor: one experiment on ``seed .. seed + episodes
  - 1``, written to the rating's directory.
* Gossip games: the entrant in every seat position the pool's members played (v2: all nine, v1:
  ``agent_0``), with every pool society filling the seats after it: one experiment per position
  on its own block of seeds (:meth:`.pool.Pool.position_seeds`), written to ``DIR/SEAT`` (v1's
  single position: to ``DIR``).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import socialsim
from socialsim import registry
from socialsim.config import ConfigError
from socialsim.rating.entrant import Entrant, slug
from socialsim.rating.pool import DECRYPTO_ROLES, Pool, around

#: the role a team is rated in
TEAM = "team"


@dataclass(frozen=True)
class Matchup:
    """One cell of the cross-play: the role the entrant played, and who sat where (pool names;
    the entrant's seats are named by its own name)."""

    role: str
    names: dict[str, str]  # seat -> player name
    seats: dict[str, dict[str, Any]]  # seat -> agent spec
    seat: str | None = None  # a gossip game: the entrant's seat

    @property
    def key(self) -> str:
        return cell_key(self.seats)


def cell_key(seats: dict[str, Any]) -> str:
    return json.dumps(seats, sort_keys=True)


# -- Decrypto -------------------------------------------------------------------------------------


def decrypto_roles(entrant: Entrant, pool: Pool, say: Callable[[str], None]) -> list[str]:
    """The roles the entrant is rated in: a team's; else each seat its kind declares it can
    take and whose check episode it passes (one that fails is named, with why, and skipped)."""
    if entrant.team:
        return [TEAM]
    cls = _agent_class(entrant.spec)
    declared = [s for s in DECRYPTO_ROLES if registry.fit_problem(cls, "decrypto", s) is None]
    if not declared:
        problem = registry.fit_problem(cls, "decrypto", DECRYPTO_ROLES[0])
        raise ConfigError(f"SPEC: {entrant.name} cannot play Decrypto: {problem}")
    for role in DECRYPTO_ROLES:
        if role not in declared:
            say(f"not rated as {role}: {registry.fit_problem(cls, 'decrypto', role)}")
    roles = []
    for role in declared:
        trial = decrypto_matchups(entrant, pool, [role])[:1]
        try:
            with tempfile.TemporaryDirectory() as scratch:
                socialsim.run(
                    _experiment("check", pool.decrypto, 1, 0, trial), scratch, check_only=True
                )
        except ConfigError as error:
            # the check names the whole cell; the reason is what follows "failed: "
            say(f"not rated as {role}: its check game failed: {str(error).split('failed: ')[-1]}")
            continue
        roles.append(role)
    if not roles:
        raise ConfigError(f"SPEC: {entrant.name} passed the check of no Decrypto role")
    return roles


def decrypto_matchups(entrant: Entrant, pool: Pool, roles: list[str]) -> list[Matchup]:
    """Every matchup of each role: the entrant's seats fixed, each other seat crossed over the
    pool's members of that role (in the pool's order)."""
    out = []
    for role in roles:
        mine = entrant.team if role == TEAM else {role: entrant.spec}
        fixed = {seat: (entrant.name, spec) for seat, spec in mine.items()}
        others = [pool.members(seat) for seat in DECRYPTO_ROLES if seat not in mine]
        for combo in _cross(others):
            seats = {**fixed, **{m.role: (m.name, m.spec) for m in combo}}
            out.append(
                Matchup(
                    role,
                    {s: seats[s][0] for s in DECRYPTO_ROLES},
                    {s: dict(seats[s][1]) for s in DECRYPTO_ROLES},
                )
            )
    return out


def _cross(lists):
    if not lists:
        return [()]
    return [(head, *rest) for head in lists[0] for rest in _cross(lists[1:])]


# -- the gossip games -----------------------------------------------------------------------------


def gossip_matchups(entrant: Entrant, pool: Pool, game: str) -> list[Matchup]:
    """Every position (in the pool's order) x every society: the entrant at the position, the
    society after it."""
    if entrant.team:
        raise ConfigError(f"SPEC: a team ({entrant.name}) is rated in Decrypto only, not {game}")
    problem = registry.fit_problem(_agent_class(entrant.spec), "gossip", pool.positions[0])
    if problem is not None:
        raise ConfigError(f"SPEC: {entrant.name} cannot play {game}: {problem}")
    n_agents = int(pool.gossip["games"][game]["kwargs"]["n_agents"])
    out = []
    for seat in pool.positions:
        for society in pool.societies():
            if len(society.seats) != n_agents - 1:
                raise ConfigError(
                    f"pool {pool.version}: society {society.name} fills {len(society.seats)} "
                    f"seats; {game} has {n_agents - 1} beside the entrant's"
                )
            table = around(seat, n_agents, list(society.seats))
            names = {seat: entrant.name, **{s: label for s, (label, _) in table.items()}}
            seats = {seat: dict(entrant.spec), **{s: dict(spec) for s, (_, spec) in table.items()}}
            out.append(Matchup(society.name, _ordered(names), _ordered(seats), seat))
    return out


def _ordered(by_seat: dict[str, Any]) -> dict[str, Any]:
    return dict(sorted(by_seat.items(), key=lambda kv: int(kv[0].removeprefix("agent_"))))


# -- playing --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One experiment of a rating run: the matchups it plays, on which seeds, into which
    directory."""

    directory: Path
    config: dict[str, Any]


def blocks(
    entrant: Entrant, game: str, pool: Pool, episodes: int, seed: int, matchups, out: Path
) -> list[Block]:
    """The experiments of a rating run: Decrypto's one; a gossip game's one per position."""
    name = f"rate_{game}_{slug(entrant.name)}"
    if game == "decrypto":
        section = {"env": pool.decrypto["env"]}
        return [Block(out, _experiment(name, section, episodes, seed, matchups, game))]
    section = pool.gossip["games"][game]
    positions = pool.positions
    out_blocks = []
    for index, seat in enumerate(positions):
        seeds = pool.position_seeds(index, seed, episodes)
        mine = [m for m in matchups if m.seat == seat]
        directory = out if len(positions) == 1 else out / seat
        config = _experiment(name, section, episodes, seeds.start, mine, game)
        out_blocks.append(Block(directory, config))
    return out_blocks


def _experiment(name, section, episodes, seed, matchups, game: str = "decrypto") -> dict[str, Any]:
    env = {"id": section["env"], "form": "parallel"}
    if section.get("kwargs"):
        env["kwargs"] = dict(section["kwargs"])
    return {
        "name": name,
        "description": f"A rating: {name} against the reference pool ({game}).",
        "episodes": episodes,
        "seed": seed,
        "env": env,
        "seats": matchups[0].seats,
        "grid": {"seats": [m.seats for m in matchups]},
    }


def play(run_blocks: list[Block], say: Callable[[str], None], progress: bool) -> list:
    """Play (or resume) every block of the rating run; the done records."""
    held = []
    for block in run_blocks:
        results = socialsim.run(block.config, block.directory, progress=progress, say=say)
        if results.failed:
            say(
                f"{block.directory}: {len(results.failed)} episodes failed (rerun the same "
                "command to retry them)"
            )
        held += results.records()
    return held


def _agent_class(spec: dict[str, Any]):
    """The entrant's class, once its spec has built an agent (a bad parameter is named here,
    not as a failure of every seat)."""
    try:
        registry.check_agent_spec("SPEC", spec)
        registry.build_agent(spec)
        return registry.agent_class(spec["kind"])
    except (ValueError, ImportError) as error:
        text = str(error)
        raise ConfigError(text if text.startswith("SPEC") else f"SPEC: {text}") from None
