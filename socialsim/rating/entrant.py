"""What is rated: the entrant, read from the ``SPEC`` of ``socialsim rate``.

=============================================  ================================================
SPEC                                           entrant
=============================================  ================================================
``glove_decoder``, ``mypkg.agents:Tit``        an agent kind (a name or ``module:Class``)
``'{kind = "glove_encoder", k = 4}'``          a seat spec, as a TOML inline table (or JSON)
``policy.zip``                                 a trained policy: ``{kind = "rl", path = ...}``
``glove_encoder+glove_decoder``                a Decrypto team: encoder + decoder
``'{encoder = {...}, decoder = {...}}'``       a Decrypto team, as a table
``experiment.toml`` with ``--seat S``          the spec of seat ``S`` of an experiment file
                                               (``--seat encoder,decoder``: its team)
=============================================  ================================================

A single agent is rated in every seat of the game it can take; a team only as a team.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from socialsim.config import ConfigError

TEAM_SEATS = ("encoder", "decoder")


@dataclass(frozen=True)
class Entrant:
    name: str
    spec: dict[str, Any] | None = None  # one agent
    team: dict[str, dict[str, Any]] = field(default_factory=dict)  # seat -> spec


def label(spec: dict[str, Any]) -> str:
    """A short name of a spec: its kind, then its parameters (``glove_encoder(k=4)``)."""
    params = {k: v for k, v in spec.items() if k != "kind"}
    if not params:
        return str(spec["kind"])
    inner = ",".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in sorted(params.items()))
    return f"{spec['kind']}({inner})"


def slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", name).strip("_")[:80] or "entrant"


def parse(text: str, seat: str | None = None, name: str | None = None) -> Entrant:
    """The entrant ``text`` names (see the module docstring)."""
    text = text.strip()
    if not text:
        raise ConfigError("SPEC: empty; give an agent kind, a seat spec table or a file")
    if text.startswith("{"):
        return _from_table(_read_table(text), name)
    if text.endswith(".toml") or (seat is not None and Path(text).is_file()):
        return _from_file(Path(text), seat, name)
    if text.endswith(".zip"):
        spec = {"kind": "rl", "path": text}
        return Entrant(name or label(spec), spec=spec)
    if "+" in text:
        parts = [p.strip() for p in text.split("+")]
        if len(parts) != 2 or not all(parts):
            raise ConfigError(
                f"SPEC: {text!r}: a team is ENCODER+DECODER (two kinds), e.g. "
                "glove_encoder+glove_decoder"
            )
        return _team(dict(zip(TEAM_SEATS, ({"kind": p} for p in parts), strict=True)), name)
    return Entrant(name or text, spec={"kind": text})


def _read_table(text: str) -> dict[str, Any]:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return tomllib.loads(f"spec = {text}")["spec"]
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(
            f"SPEC: {text!r} is neither a TOML inline table nor JSON ({error})"
        ) from None


def _from_table(table: dict[str, Any], name: str | None) -> Entrant:
    if "kind" in table:
        return Entrant(name or label(table), spec=table)
    if set(table) == set(TEAM_SEATS):
        return _team(table, name)
    raise ConfigError(
        f"SPEC: a table needs a 'kind' (one agent) or exactly the keys encoder and decoder "
        f"(a Decrypto team), got keys {', '.join(sorted(table)) or '(none)'}"
    )


def _team(seats: dict[str, Any], name: str | None) -> Entrant:
    for seat, spec in seats.items():
        if not isinstance(spec, dict) or "kind" not in spec:
            raise ConfigError(f"SPEC.{seat}: a seat spec is a table with a 'kind', got {spec!r}")
    team = {seat: dict(seats[seat]) for seat in TEAM_SEATS}
    return Entrant(name or "+".join(label(team[s]) for s in TEAM_SEATS), team=team)


def _from_file(path: Path, seat: str | None, name: str | None) -> Entrant:
    try:
        seats = tomllib.loads(path.read_text(encoding="utf-8")).get("seats", {})
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"SPEC: cannot read the experiment file {path}: {error}") from None
    named = sorted(s for s in seats if s != "*")
    if seat is None:
        if len(named) != 1:
            raise ConfigError(
                f"--seat: {path} names seats {', '.join(named) or '(none)'}; say which to rate "
                "(--seat NAME, or --seat encoder,decoder for a Decrypto team)"
            )
        seat = named[0]
    wanted = [s.strip() for s in seat.split(",")]
    for one in wanted:
        if one not in seats:
            raise ConfigError(
                f"--seat: {one!r} is not a seat of {path}; its seats: {', '.join(named)}"
            )
    if len(wanted) == 1:
        return _from_table(dict(seats[wanted[0]]), name)
    if sorted(wanted) != sorted(TEAM_SEATS):
        raise ConfigError(f"--seat: {seat!r}: several seats make a team only as encoder,decoder")
    return _team({s: seats[s] for s in TEAM_SEATS}, name)
