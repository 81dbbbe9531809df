"""The frozen reference pool: who an entrant is rated against, and their frozen ratings.

A pool is a versioned TOML file shipped in ``socialsim/rating/pools/`` (``v1.toml``), written by
``experiments/make_rating_pool.py`` from the project's own agents: it names every member (its
agent spec, its Decrypto role or gossip label) and the rating the script fitted from the pool's
own cross-play. A pool never changes once shipped; a new one is a new version, so two ratings
against one version are comparable.

``[decrypto]``: ``env``, ``seed`` and ``episodes`` (the pool's seeds: every matchup is played on
the seeds ``seed .. seed + episodes - 1``) and ``[[decrypto.members]]`` (``name``, ``role``:
encoder, decoder or interceptor, ``spec``, ``rating``).

``[gossip]``: ``seed``, ``episodes``, ``seat`` (the entrant's seat), ``[gossip.games.GAME]``
(``env`` and its ``kwargs``), ``[[gossip.societies]]`` (``name`` and ``seats``, a list of
``{label, spec, count}`` that fill the other seats in order), ``[gossip.dispositions]`` (label ->
``cooperator``, ``discriminator``, ``defector`` or ``random``: who counts as a cooperator or a
defector when the entrant's moves are scored) and ``[gossip.ratings.GAME]`` (label -> rating).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any

from socialsim.config import ConfigError

DECRYPTO_ROLES = ("encoder", "decoder", "interceptor")
DISPOSITIONS = ("cooperator", "discriminator", "defector", "random")
DEFAULT_VERSION = "v1"


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

    # -- the gossip games ------------------------------------------------------------------------

    @property
    def gossip(self) -> dict[str, Any]:
        return self.data["gossip"]

    @property
    def gossip_games(self) -> list[str]:
        return list(self.gossip["games"])

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
