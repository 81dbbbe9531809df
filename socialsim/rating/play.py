"""The cross-play a rating plays: the entrant against the pool, as one ordinary experiment.

A rating run is a results directory like any other (``socialsim report`` reads it; rerunning the
same command resumes it): one experiment whose single grid axis, ``seats``, lists every matchup
as a whole seat table. Every matchup is played on the pool's seeds (``seed .. seed + episodes -
1``), so each game of the entrant meets the same keywords, codes and schedules as every other
entrant's; the seed index is the bootstrap's unit.

* Decrypto: the entrant in each role it can take — as encoder with every pool decoder against
  every pool interceptor, as decoder with every pool encoder, as interceptor against every pool
  team — or, a team, against every pool interceptor.
* Gossip games: the entrant in the pool's entrant seat of every pool society.
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
from socialsim.rating.pool import DECRYPTO_ROLES, Pool

#: the role a team is rated in
TEAM = "team"


@dataclass(frozen=True)
class Matchup:
    """One cell of the cross-play: the role the entrant played, and who sat where (pool names;
    the entrant's seats are named by its own name)."""

    role: str
    names: dict[str, str]  # seat -> player name
    seats: dict[str, dict[str, Any]]  # seat -> agent spec

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
    if entrant.team:
        raise ConfigError(f"SPEC: a team ({entrant.name}) is rated in Decrypto only, not {game}")
    problem = registry.fit_problem(_agent_class(entrant.spec), "gossip", pool.gossip["seat"])
    if problem is not None:
        raise ConfigError(f"SPEC: {entrant.name} cannot play {game}: {problem}")
    seat = pool.gossip["seat"]
    n_agents = int(pool.gossip["games"][game]["kwargs"]["n_agents"])
    others = [f"agent_{i}" for i in range(n_agents) if f"agent_{i}" != seat]
    out = []
    for society in pool.societies():
        if len(society.seats) != len(others):
            raise ConfigError(
                f"pool {pool.version}: society {society.name} fills {len(society.seats)} seats; "
                f"{game} has {len(others)} beside the entrant's"
            )
        names = {
            seat: entrant.name,
            **{s: label for s, (label, _) in zip(others, society.seats, strict=True)},
        }
        seats = {
            seat: dict(entrant.spec),
            **{s: dict(spec) for s, (_, spec) in zip(others, society.seats, strict=True)},
        }
        out.append(Matchup(society.name, names, seats))
    return out


# -- playing --------------------------------------------------------------------------------------


def experiment(
    entrant: Entrant, game: str, section: dict[str, Any], episodes: int, seed: int, matchups
) -> dict[str, Any]:
    return _experiment(f"rate_{game}_{slug(entrant.name)}", section, episodes, seed, matchups, game)


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


def play(config: dict[str, Any], out: Path, say: Callable[[str], None], progress: bool):
    """Play (or resume) the rating's experiment into ``out``; the done records."""
    results = socialsim.run(config, out, progress=progress, say=say)
    if results.failed:
        say(f"{len(results.failed)} episodes failed (rerun the same command to retry them)")
    return results.records()


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
