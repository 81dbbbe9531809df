"""The frozen reference pool: who an entrant is rated against, and their frozen ratings.

A pool is a versioned TOML file shipped in ``socialsim/rating/pools/`` (``v1.toml``; ``v2.toml``,
the default), written by ``experiments/make_rating_pool.py`` from the project's own agents: it
names every member (its agent spec, its Decrypto role or gossip label) and the rating the script
fitted from the pool's own cross-play. A pool never changes once shipped; a new one is a new
version, so two ratings against one version are comparable.

``[decrypto]``: ``env``, ``seed`` and ``episodes`` (the pool's seeds: every matchup is played on
the seeds ``seed .. seed + episodes - 1``) and ``[[decrypto.members]]`` (``name``, ``role``:
encoder, decoder or interceptor, ``spec``, ``rating``).

``[gossip]``: ``seed``, ``episodes`` (per position), the rated player's seats: ``positions``
(v2: every seat, ``agent_0`` .. ``agent_8``; position ``i`` is played on the seeds
``seed + i * episodes`` .. ``+ episodes - 1``, so that every seed is one independent game of the
rated player and the seed is the bootstrap's cluster) or ``seat`` (v1: ``agent_0`` only),
``[gossip.games.GAME]`` (``env`` and its ``kwargs``), ``[[gossip.societies]]`` (``name`` and
``seats``, a list of ``{label, spec, count}`` that fill the other seats in turn after the rated
player's, wrapping round), ``[gossip.dispositions]`` (label -> ``cooperator``, ``discriminator``,
``defector`` or ``random``: who counts as a cooperator or a defector when the entrant's moves are
scored), ``[gossip.entrant_offset]`` (v2; game -> the Elo points on every entrant's side: how
much more the members won as entrants than their ratings predict, taken as a whole, which keeps
the ratings' mean at 0), ``skip_own_label`` (v2: a rated player is not compared with seats of its
own spec, as the pool's fit is not) and ``[gossip.ratings.GAME]`` (label -> rating).

The pool's own sampling error (v2): ``[decrypto.members]`` carry ``interval`` and
``[gossip.intervals.GAME]`` maps each label to ``[low, high]``, the 95% cluster bootstrap over
the pool's seeds of its fit (``experiments/make_rating_pool.py``).

How v2's gossip ratings were fitted (``fit = "as_entrants"``): each member's rating is the rating
it gets as an entrant against the others frozen, all at once (:func:`.model.fit_as_entrants`), so
that a member re-rated by ``socialsim rate`` on the pool's seeds gets its own rating back. v1's
(``fit`` absent) were one Bradley–Terry fit over every pair of seats, which an entrant playing one
seat does not reproduce: a v1 rating of a pool member differs from its frozen one.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from socialsim.config import ConfigError

DECRYPTO_ROLES = ("encoder", "decoder", "interceptor")
DISPOSITIONS = ("cooperator", "discriminator", "defector", "random")
DEFAULT_VERSION = "v2"


@dataclass(frozen=True)
class Member:
    name: str
    role: str
    spec: dict[str, Any]
    rating: float


@dataclass(frozen=True)
class Society:
    name: str
    seats: tuple[tuple[str, dict[str, Any]], ...]  # (label, spec) of the seats after the entrant's


@dataclass(frozen=True)
class Pool:
    version: str
    data: dict[str, Any]

    @property
    def model(self) -> str:
        """How the pool's ratings were fitted and an entrant's are (the file's ``model``)."""
        return str(self.data.get("model", ""))

    # -- Decrypto --------------------------------------------------------------------------------

    @property
    def decrypto(self) -> dict[str, Any]:
        return self.data["decrypto"]

    def members(self, role: str) -> list[Member]:
        return [
            Member(m["name"], m["role"], dict(m["spec"]), float(m.get("rating", 0.0)))
            for m in self.decrypto["members"]
            if m["role"] == role
        ]

    def decrypto_ratings(self) -> dict[str, float]:
        return {m["name"]: float(m.get("rating", 0.0)) for m in self.decrypto["members"]}

    def decrypto_intervals(self) -> dict[str, tuple[float, float]]:
        """Member -> the 95% interval of its frozen rating (v2; empty for v1)."""
        return {
            m["name"]: (float(m["interval"][0]), float(m["interval"][1]))
            for m in self.decrypto["members"]
            if "interval" in m
        }

    # -- the gossip games ------------------------------------------------------------------------

    @property
    def gossip(self) -> dict[str, Any]:
        return self.data["gossip"]

    @property
    def gossip_games(self) -> list[str]:
        return list(self.gossip["games"])

    @property
    def positions(self) -> list[str]:
        """The seats the rated player takes in turn, one block of seeds each."""
        return list(self.gossip.get("positions", [self.gossip.get("seat", "agent_0")]))

    @property
    def skips_own_label(self) -> bool:
        return bool(self.gossip.get("skip_own_label", False))

    def position_seeds(self, position: int, seed: int, episodes: int) -> range:
        """The seeds position ``position`` (an index into :attr:`positions`) is played on."""
        first = seed + position * episodes
        return range(first, first + episodes)

    def societies(self) -> list[Society]:
        out = []
        for society in self.gossip["societies"]:
            seats = []
            for entry in society["seats"]:
                seats += [(entry["label"], dict(entry["spec"]))] * int(entry.get("count", 1))
            out.append(Society(society["name"], tuple(seats)))
        return out

    def disposition(self, label: str) -> str:
        return self.gossip["dispositions"][label]

    def gossip_ratings(self, game: str) -> dict[str, float]:
        return {k: float(v) for k, v in self.gossip.get("ratings", {}).get(game, {}).items()}

    def entrant_offset(self, game: str) -> float:
        """The Elo points on every entrant's side in ``game`` (v2; 0 for v1)."""
        return float(self.gossip.get("entrant_offset", {}).get(game, 0.0))

    def gossip_intervals(self, game: str) -> dict[str, tuple[float, float]]:
        """Label -> the 95% interval of its frozen rating in ``game`` (v2; empty for v1)."""
        held = self.gossip.get("intervals", {}).get(game, {})
        return {k: (float(v[0]), float(v[1])) for k, v in held.items()}

    def intervals(self, game: str) -> dict[str, tuple[float, float]]:
        return self.decrypto_intervals() if game == "decrypto" else self.gossip_intervals(game)


def around(seat: str, n_agents: int, others: list) -> dict[str, object]:
    """Seat -> occupant of a table of ``n_agents`` where the rated player sits at ``seat`` and
    ``others`` (a society's seats) fill the seats after it in turn, wrapping round (``agent_0``:
    ``agent_1`` .. ``agent_8`` in order, as in v1)."""
    start = int(seat.removeprefix("agent_"))
    return {f"agent_{(start + 1 + i) % n_agents}": other for i, other in enumerate(others)}


def versions() -> list[str]:
    folder = resources.files("socialsim.rating.pools")
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def load(version: str = DEFAULT_VERSION) -> Pool:
    """The shipped pool ``version`` (a :class:`ConfigError` naming the shipped ones if absent)."""
    path = resources.files("socialsim.rating.pools") / f"{version}.toml"
    if not path.is_file():
        raise ConfigError(
            f"--pool: no reference pool {version!r}; shipped: {', '.join(versions()) or '(none)'}"
        )
    return from_data(tomllib.loads(path.read_text(encoding="utf-8")))


def from_data(data: dict[str, Any]) -> Pool:
    return Pool(str(data["version"]), data)
