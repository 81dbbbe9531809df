"""Games already played, rated against the pool: a person's browser or terminal games, or any
results directory, where the other seats were pool members.

``socialsim rate DIR --seat SEAT --game GAME`` reads the done records of the results directory
``DIR`` (a ``socialsim serve`` session, a ``socialsim play`` game, a run), keeps the games in
which every other seat's agent spec is a pool member's (a Decrypto member of that seat's role; a
gossip society's label), and scores ``SEAT`` in them as a rating run scores its cross-play. Each
game is its own bootstrap group. The pool's seeds are not enforced: the games are what was
played, so such a rating is comparable with the pool's, not game for game.
"""

from __future__ import annotations

from pathlib import Path

from socialsim import records as records_module
from socialsim.config import ConfigError
from socialsim.rating.play import Matchup, cell_key
from socialsim.rating.pool import DECRYPTO_ROLES, Pool
from socialsim.rating.scores import Played


def read(directory: Path, seat: str | None, game: str, pool: Pool) -> tuple[dict, Played, int, int]:
    """(the seat's agent spec, its games under their matchups, the number of groups, the games
    skipped because a partner is not a pool member)."""
    if records_module.read_manifest(directory) is None:
        raise ConfigError(f"SPEC: {directory} holds no results (no {records_module.MANIFEST})")
    held = records_module.read_records(directory)
    if seat is None:
        raise ConfigError(f"--seat: say which seat of {directory} to rate")
    if not held or seat not in held[0].seats:
        seats = ", ".join(sorted(held[0].seats)) if held else "(no games)"
        raise ConfigError(f"--seat: {seat!r} is not a seat of {directory}; its seats: {seats}")
    by_key: dict[str, tuple[Matchup, list]] = {}
    skipped = 0
    for record in held:
        names = _pool_names(record, seat, game, pool)
        if names is None:
            skipped += 1
            continue
        role, rated_seat = (seat, None) if game == "decrypto" else ("recorded", seat)
        seats = {s: dict(spec) for s, spec in record.seats.items()}
        matchup = Matchup(role, names, seats, rated_seat)
        by_key.setdefault(matchup.key, (matchup, []))[1].append(record)
    group = 0
    played: Played = []
    for matchup, games in by_key.values():
        played.append((matchup, [(group + i, record) for i, record in enumerate(games)]))
        group += len(games)
    if not group:
        raise ConfigError(
            f"SPEC: none of the {len(held)} games in {directory} had pool {pool.version} "
            f"members in every seat but {seat} ({game}); nothing to rate"
        )
    return dict(held[0].seats[seat]), played, group, skipped


def _pool_names(record, seat: str, game: str, pool: Pool) -> dict[str, str] | None:
    """seat -> pool name of every seat of the record but ``seat`` (``None``: one is not a pool
    member, or the record is of another game)."""
    if game == "decrypto":
        if not record.env_id.startswith("decrypto") or seat not in DECRYPTO_ROLES:
            return None
        members = {role: pool.members(role) for role in DECRYPTO_ROLES}
    elif record.summary.get("game") != game:
        return None
    labels = {cell_key(spec): label for s in pool.societies() for label, spec in s.seats}
    names = {seat: f"{record.seats[seat].get('kind', '?')} ({seat})"}
    for other, spec in record.seats.items():
        if other == seat:
            continue
        if game == "decrypto":
            found = [m.name for m in members.get(other, []) if m.spec == spec]
            name = found[0] if found else None
        else:
            name = labels.get(cell_key(spec))
        if name is None:
            return None
        names[other] = name
    return names
