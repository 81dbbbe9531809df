"""One game with people in some seats, shared by the terminal and the browser front ends.

:func:`human_experiment` turns "this game, these seats are people, the other seats are these
agents (or this experiment file)" into a checked :class:`~socialsim.config.Experiment` whose
human seats have the ``human`` kind; :func:`play_game` plays one episode of it through the one
runner, with each human seat's console in the run's shared resources, and logs it with the same
:class:`~socialsim.records.EventLog` and manifest as ``socialsim run``, so ``socialsim report``
reads it like any other result.

In the terminal (``terminal=True``), an experiment file with an ``[evolution]`` table is played
one game a generation: :func:`prepare` gives the generation after the last one the results
directory holds (born of its record, :mod:`socialsim.society.experiment`), so rerunning the same
command with the same ``--out`` plays the next one, and an abandoned game is played again. The
human seats keep their places every generation.
"""

from __future__ import annotations

import copy
import dataclasses
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from socialsim import config as config_module
from socialsim import manifest, records, registry, runner
from socialsim.agent import RunContext
from socialsim.agents.human.agent import CONSOLES, view_modules
from socialsim.config import ConfigError
from socialsim.episode import EpisodeSpec, OnDeciding
from socialsim.seeding import episode_seed

#: the game names of ``socialsim play GAME`` and ``socialsim serve`` -> their env ids (from the
#: games' view modules)
GAME_ENVS: Mapping[str, str] = {g: e for m in view_modules(browser=True) for g, e in m.ENVS.items()}
#: the games only the terminal shows (the browser's seat pages do not know them)
TERMINAL_GAMES: Mapping[str, str] = {
    g: e for m in view_modules() for g, e in m.ENVS.items() if g not in GAME_ENVS
}
#: the other seats when ``--with`` names none
DEFAULT_SEATS: Mapping[str, Mapping[str, Any]] = {
    game: module.OTHERS for module in view_modules() for game in module.ENVS
}
HUMAN = "human"


#: seconds a non-person seat may take to decide in a game with people (a file's own
#: ``decision_timeout`` wins); a person is paced by the front end's idle timeout instead
BOT_DECISION_TIMEOUT = 300.0


def _games(terminal: bool) -> Mapping[str, str]:
    return {**GAME_ENVS, **TERMINAL_GAMES} if terminal else GAME_ENVS


def _env_id(game: str, terminal: bool = False) -> str:
    games = _games(terminal)
    if game in games:
        return games[game]
    if game in games.values():
        return game
    raise ConfigError(f"GAME: unknown game {game!r}; allowed: {', '.join(games)}")


def game_of(env_id: str) -> str:
    """The game ``socialsim play`` and ``socialsim serve`` call ``env_id``."""
    return next(g for g, e in _games(terminal=True).items() if e == env_id)


def human_experiment(
    game: str,
    humans: Sequence[str],
    others: Sequence[str] = (),
    overrides: Sequence[str] = (),
    seed: int | None = None,
    names: Mapping[str, str] | None = None,
    base: config_module.Experiment | None = None,
    terminal: bool = False,
    specs: Mapping[str, Mapping[str, Any]] | None = None,
    filler: Mapping[str, Any] | None = None,
) -> config_module.Experiment:
    """The experiment of one game of ``game`` with people in the ``humans`` seats.

    ``others`` are ``SEAT=KIND`` / ``SEAT={...}`` specs, or one experiment file (a path or a
    bundled name) whose first grid cell gives the env and the seats (or ``base``, an experiment
    already read, e.g. an uploaded file); ``overrides`` are
    ``--set path=value``; ``specs`` (seat -> agent spec) set seats after both (a study's
    filler in a seat nobody came for), and ``filler`` is the agent that takes a human seat whose
    person leaves (:class:`~socialsim.agents.human.agent.Human`). Every seat and key is checked as ``socialsim run`` checks them.
    The browser plays one game of :data:`GAME_ENVS`; the ``terminal`` also plays the
    :data:`TERMINAL_GAMES` and files with an ``[evolution]`` table, one game a generation (see
    the module docstring), which the others refuse.
    """
    env_id = _env_id(game, terminal)
    game = game_of(env_id)
    if not humans:
        raise ConfigError("--as: name at least one seat to play")
    files = [o for o in others if "=" not in o]
    if len(files) > 1:
        raise ConfigError(f"--with: at most one experiment file, got {', '.join(files)}")
    if files or base is not None:
        where = files[0] if files else "the experiment file"
        base = base if base is not None else config_module.load(files[0])
        _, cell = base.cells[0]
        config = copy.deepcopy(cell)
        if config["env"]["id"] != env_id:
            raise ConfigError(f"--with {where}: the file plays {config['env']['id']}, not {env_id}")
        config["name"] = f"play_{config['name']}"
        if not terminal:
            refuse_generations(config, f"--with {where}")
    else:
        config = {"name": f"play_{game}", "env": {"id": env_id}, "seats": {}}
        config["seats"] = copy.deepcopy(dict(DEFAULT_SEATS[game]))
    config.pop("grid", None)
    config.pop("probes", None)  # side questions are for models, not for people at a table
    config["description"] = f"{game} with people in {', '.join(humans)}"
    config["episodes"] = 1
    config["seed"] = int(seed) if seed is not None else secrets.randbelow(2**31 - 1)
    config["max_concurrent"] = 1
    config["workers"] = 1
    # a bot that never decides fails the game naming its seat, rather than holding it for ever
    config.setdefault("decision_timeout", BOT_DECISION_TIMEOUT)
    for text in others:
        if "=" in text:
            seat, spec = config_module.seat_assignment(text)
            config["seats"][seat] = spec
    for text in overrides:
        config_module.apply_override(config, text)
    for seat, spec in (specs or {}).items():
        config["seats"][seat] = copy.deepcopy(dict(spec))
    for seat in humans:
        config["seats"][seat] = {"kind": HUMAN, "name": (names or {}).get(seat, "")}
        if filler is not None:
            config["seats"][seat]["filler"] = copy.deepcopy(dict(filler))
    try:
        env = registry.env_module(env_id).raw_env(**config["env"].get("kwargs", {}))
    except (TypeError, ValueError) as error:
        raise ConfigError(f"env.kwargs: {error}") from None
    unknown = [s for s in humans if s not in env.possible_agents]
    if unknown:
        raise ConfigError(
            f"--as: unknown seat {unknown[0]!r}; the seats of {env_id} are "
            f"{', '.join(env.possible_agents)}"
        )
    return config_module.resolve(config)


def refuse_generations(config: Mapping[str, Any], where: str) -> None:
    """A :class:`ConfigError` for a file with an ``[evolution]`` table, where one game is
    played (the browser): naming the key, its value and what is allowed."""
    if "evolution" in config:
        raise ConfigError(
            f"{where}: evolution: a generational experiment "
            f"({config['evolution'].get('generations')} generations) is played one game a "
            "generation in the terminal (socialsim play GAME --as SEAT --with FILE --out DIR), "
            "not here; allowed here: an experiment without an [evolution] table"
        )


def human_seats(experiment: config_module.Experiment) -> list[str]:
    return [s for s, spec in experiment.specs()[0].seats.items() if spec["kind"] == HUMAN]


def prepare(experiment: config_module.Experiment, out: Path) -> EpisodeSpec:
    """The spec of the next game to log in ``out``: episode ``i`` is the ``i``-th logged one,
    with the experiment's seed of episode ``i`` (a directory holding another experiment is
    refused)."""
    held = records.read_manifest(out)
    if held is not None and held.get("config") != experiment.config:
        raise ConfigError(
            f"--out {out}: the directory holds another game's results; choose another directory"
        )
    if "evolution" in experiment.config:
        return next_generation(experiment, out)
    spec = experiment.specs()[0]
    index = len(records.read_records(out, include_failed=True)) if out.exists() else 0
    return dataclasses.replace(
        spec, episode=index, seed=episode_seed(experiment.config.get("seed", 0), index)
    )


def next_generation(experiment: config_module.Experiment, out: Path) -> EpisodeSpec:
    """The game of the first generation that ``out`` lacks, born of the record of the one
    before (a :class:`ConfigError` once every generation is played)."""
    from socialsim.society import experiment as evolving

    done = records.read_records(out) if out.exists() else []
    g = len({r.cell.get(evolving.GENERATION) for r in done})
    total = evolving.generations(experiment)
    if g >= total:
        raise ConfigError(
            f"--out {out}: all {total} generations are played; nothing is left to play "
            f"(socialsim report {out})"
        )
    return evolving.generation(experiment, g, done).specs()[0]


def generation_of(spec: EpisodeSpec) -> int | None:
    """The generation ``spec`` plays, or ``None`` outside an ``[evolution]`` experiment."""
    return spec.cell.get("generation")


def episodes_total(experiment: config_module.Experiment, spec: EpisodeSpec) -> int:
    """What the manifest counts: the games logged so far, or every generation's."""
    if "evolution" in experiment.config:
        return experiment.config["evolution"]["generations"]
    return spec.episode + 1


def write_manifest(experiment: config_module.Experiment, out: Path, episodes: int) -> None:
    """The results directory's manifest (:mod:`socialsim.manifest`), naming the human seats."""
    out.mkdir(parents=True, exist_ok=True)
    held = manifest.made(experiment, out, episodes)
    records.write_manifest(out, {**held, "humans": human_seats(experiment)})


async def play_game(
    experiment: config_module.Experiment,
    spec: EpisodeSpec,
    out: Path,
    consoles: Mapping[str, Any],
    on_deciding: OnDeciding | None = None,
) -> records.EpisodeRecord:
    """Play ``spec`` with ``consoles`` (seat -> console) in the human seats and append the
    record to ``out``'s log; ``on_deciding`` is told who is deciding as the game waits on them
    (:meth:`~socialsim.episode.Episode.aplay`). An interruption (Ctrl-C, a cancelled session)
    logs nothing."""
    run = RunContext(directory=out, shared={CONSOLES: dict(consoles)})
    record = await runner.play_episode_async(spec, run=run, on_deciding=on_deciding)
    held = records.read_manifest(out)
    if held is not None and held.get("config") != experiment.config:  # written meanwhile
        raise ConfigError(
            f"--out {out}: another experiment's results were written there while the game was "
            "played; the game is not logged into them"
        )
    total = episodes_total(experiment, spec)
    if held is None:
        write_manifest(experiment, out, total)
    else:
        held["episodes_total"] = max(held.get("episodes_total", 0), total)
        records.write_manifest(out, held)
    with records.EventLog(out) as log:
        log.append(record)
    return record
