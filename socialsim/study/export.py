"""A study's results read like a run's: its games pooled into the study's folder, and its
participants as a frame.

Each game a study plays is a results directory of its own (``STUDY/games/g0001_llm/``: its
manifest, its one record, ``study_game.json``). :func:`pool` copies every game's record into the
study's folder, which so becomes an ordinary results directory (``manifest.json`` and
``episodes.jsonl`` beside ``participants.csv``), the treatment its grid factor: a game of a
listed treatment is the cell ``{"treatment": NAME}``, a game of a crossed one the cell of its
crossed keys (``{"experiment": "game_llm.toml", "env.kwargs.rounds": 4}``), and its episode
number is its game number (from 0). So ``socialsim report STUDY``, ``socialsim.load(STUDY)`` and
``socialsim report STUDY RUN`` (the people's games beside a run of models) read a study as any
run: the tables per cell are per treatment, and "per agent kind" sets the people's seats
(``human``) beside the models' and scripted seats in each.

The lobby pools each game as it ends (:mod:`socialsim.web.study_record`) and every game again
as the server starts; :func:`pool` on a study's folder does the same by hand (a study run before
its games were pooled). A record is copied once: pooling twice writes nothing new. The copy is
the game's record as logged but for its ``cell`` and ``episode``; the game's own directory
stays as it was.

:func:`participants` reads the export (``participants.csv``) as a pandas frame, its columns
typed (times as UTC timestamps, counts as integers, points and payments as numbers).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from socialsim import records

GAMES = "games"
FACTS = "study_game.json"
EXPORT = "participants.csv"


def cell_of(facts: dict[str, Any]) -> dict[str, Any]:
    """The pooled cell of a game, from its ``study_game.json``: its crossed keys' values, else
    its treatment's name."""
    factors = facts.get("factors")
    return dict(factors) if factors else {"treatment": facts["treatment"]}


def _number(game: Path, facts: dict[str, Any]) -> int:
    if isinstance(facts.get("game"), int):
        return facts["game"]
    digits = game.name[1:5]
    return int(digits) - 1 if digits.isdigit() else 0


def game_lines(game: Path) -> list[tuple[str, str, tuple[str, int]]]:
    """``(line, status, key)`` of each of a game's records, as pooled."""
    facts_path = game / FACTS
    if not facts_path.is_file() or not (game / records.EPISODES).is_file():
        return []
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    out = []
    for record in records.read_records(game, include_failed=True):
        record.cell = cell_of(facts)
        record.episode = _number(game, facts)
        out.append((record.line(), record.status, record.key))
    return out


def pooled(folder: str | Path) -> set[tuple[str, int, str]]:
    """``(cell id, episode, status)`` of every record the study's folder holds."""
    folder = Path(folder)
    if not (folder / records.EPISODES).exists():
        return set()
    return {
        (records.cell_id(data["cell"]), data["episode"], data["status"])
        for data in records.iter_lines(folder)
    }


def pool(
    folder: str | Path,
    games: list[Path] | None = None,
    held: set[tuple[str, int, str]] | None = None,
) -> int:
    """Copy the records of ``games`` (default: every game under ``folder/games``) that the
    study's folder does not hold yet into its log, and (re)write its manifest; the number of
    records copied. ``held``: what the folder holds (:func:`pooled`), kept by a caller that
    pools game after game (updated here), else read. A folder without a game is left as it is."""
    folder = Path(folder)
    every = sorted(p for p in (folder / GAMES).glob("g*") if p.is_dir())
    if not every:
        return 0
    held = pooled(folder) if held is None else held
    todo = [
        (line, status, key)
        for game in (every if games is None else games)
        for line, status, key in game_lines(game)
        if (*key, status) not in held
    ]
    _write_manifest(folder, every)
    if todo:
        log = records.EventLog(folder)
        try:
            for line, status, key in todo:
                log.write(line, status, key)
                held.add((*key, status))
        finally:
            log.close()
    return len(todo)


def _write_manifest(folder: Path, games: list[Path]) -> None:
    """The study's manifest: its name, the first game's env, its treatments (cells)
    and how many games it has started."""
    first = records.read_manifest(games[0]) or {}
    cells, treatments = [], {}
    for game in games:
        facts_path = game / FACTS
        if not facts_path.is_file():
            continue
        facts = json.loads(facts_path.read_text(encoding="utf-8"))
        cell = cell_of(facts)
        if cell not in cells:
            cells.append(cell)
        treatments.setdefault(facts["treatment"], cell)
    name = json.loads((games[0] / FACTS).read_text(encoding="utf-8")).get("study", folder.name)
    config = first.get("config", {})
    manifest = {
        "config": {
            "name": name,
            "description": f"the games of the study {name}, pooled (one cell per treatment)",
            "env": config.get("env", {}),
        },
        "cells": cells,
        "episodes_total": len(games),
        "study": {"name": name, "games": GAMES, "treatments": treatments},
        "humans": first.get("humans", []),
    }
    records.write_manifest(folder, manifest)


def participants(folder: str | Path):
    """The export of the study in ``folder`` (``participants.csv``), one row per participant,
    as a pandas frame with typed columns (see the module docstring)."""
    import pandas as pd

    path = Path(folder) / EXPORT
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no export; is {folder} a study's results folder?")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in ("arrived", "consented", "completed"):
        frame[column] = pd.to_datetime(frame[column].replace("", None), utc=True)
    for column in ("quiz_attempts", "games_played"):
        frame[column] = frame[column].astype(int)
    for column in ("points", "payment"):
        frame[column] = pd.to_numeric(frame[column].replace("", None))
    return frame


__all__ = ["cell_of", "game_lines", "participants", "pool", "pooled"]
