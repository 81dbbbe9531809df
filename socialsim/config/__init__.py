"""Experiment files: TOML, read with the standard library's ``tomllib``.

The loader (:func:`load`, :func:`resolve`) lives here; the file's keys and types in
:mod:`~socialsim.config.schema`, what ``--set`` and the grid do to the table in
:mod:`~socialsim.config.overrides`, and the checks of every cell in
:mod:`~socialsim.config.checks`.

.. code-block:: toml

    name = "donation_quickstart"      # required; names the default output directory
    description = "..."
    episodes = 10                     # per grid cell
    seed = 0                          # episode i has seed `seed + i` (socialsim.seeding)
    max_concurrent = 1                # episodes in flight at once (LLM agents wait concurrently)
    workers = 1                       # processes playing episodes (CPU-bound runs: the cores;
                                      # 0: in this process, for a debugger or a profiler)
    backend = "local"                 # or "ray" (socialsim[ray]; RAY_ADDRESS names a cluster)
    cache = "~/llm_replies.sqlite"    # optional: one reply cache shared by several results
                                      # directories, for every seat whose model names none
    decision_timeout = 30             # optional: seconds a seat may take to decide, else its
                                      # episode fails naming it (every agent kind)
    episode_timeout = 600             # optional: seconds an episode may take

    [env]
    id = "donation_v0"                # `socialsim list` shows the ids
    form = "parallel"                 # or "aec"
    [env.kwargs]                      # the env constructor's keywords
    n_agents = 9

    [seats."*"]                       # the agent for every seat not named below
    kind = "image_scoring"
    [seats.agent_8]                   # other keys are the agent class's keywords
    kind = "entrant"

    [[probes]]                        # optional side-question protocols
    name = "piaget"

    [grid]                            # optional: dotted paths into this file, lists to cross
    "env.kwargs.gossip" = [true, false]

    [model_groups]                    # optional: the report groups the models by these labels
    "openai/o4-mini" = "reasoning"
    "openai/gpt-4o-mini" = "chat"

Every key is checked: a typo'd key or a wrong type is a :class:`ConfigError` that names the key
and the allowed keys; every grid cell is checked (its env is constructed once) before anything
is written. ``--set path.to.key=value`` overrides (``value`` is read as TOML, else as a string;
``--set grid.env.kwargs.gossip=[true]`` sets a grid entry). Strings may name environment
variables, ``"${SOCIALSIM_MODEL:-openai/gpt-4o-mini}"``, expanded when the file is read.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import itertools
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from socialsim import registry
from socialsim.config.checks import check_cell, check_models, resolve_models, resolve_seats
from socialsim.config.overrides import (
    apply_override,
    expand_variables,
    fill_named_seats,
    parse_value,
    reach_named_seats,
    seat_assignment,
    set_path,
)
from socialsim.config.schema import (
    BACKENDS,
    DEFAULT_SEAT,
    ENV_KEYS,
    REQUIRED,
    TOP_KEYS,
    ConfigError,
    check_keys,
)
from socialsim.episode import EpisodeSpec
from socialsim.seeding import episode_seed

__all__ = [
    "BACKENDS",
    "DEFAULT_SEAT",
    "ENV_KEYS",
    "REQUIRED",
    "TOP_KEYS",
    "ConfigError",
    "Experiment",
    "apply_override",
    "bundled_description",
    "bundled_experiments",
    "check_cell",
    "check_models",
    "resolve_models",
    "expand_grid",
    "expand_variables",
    "find_file",
    "load",
    "parse_value",
    "resolve",
    "resolve_seats",
    "seat_assignment",
]


@dataclass(frozen=True)
class Experiment:
    config: dict[str, Any]  # the resolved file, overrides applied, grid included
    cells: list[tuple[dict[str, Any], dict[str, Any]]]  # (grid assignment, resolved config)
    notes: tuple[str, ...] = ()  # what the overrides changed beyond their own key (grid axes)

    @property
    def name(self) -> str:
        return self.config["name"]

    @property
    def max_concurrent(self) -> int:
        return self.config.get("max_concurrent", 1)

    @property
    def workers(self) -> int:
        return self.config.get("workers", 1)

    @property
    def backend(self) -> str:
        return self.config.get("backend", "local")

    def with_cells(self, cells: list[tuple[dict[str, Any], dict[str, Any]]]) -> Experiment:
        """The same experiment with its cells resolved further (subclasses keep their own
        fields, which :func:`dataclasses.replace` would not pass to their ``__init__``)."""
        changed = copy.copy(self)
        object.__setattr__(changed, "cells", cells)
        return changed

    def specs(self) -> list[EpisodeSpec]:
        """Every episode of the experiment, cell by cell."""
        specs = []
        built: dict[str, Any] = {}  # the cells of a grid share a few envs: each built once
        for cell, config in self.cells:
            seats = resolve_seats(config, built)
            env = config["env"]
            for index in range(config.get("episodes", 1)):
                specs.append(
                    EpisodeSpec(
                        env_id=env["id"],
                        env_kwargs=env.get("kwargs", {}),
                        form=env.get("form", "parallel"),
                        seed=episode_seed(config.get("seed", 0), index),
                        seats=seats,
                        episode=index,
                        cell=cell,
                        experiment=config["name"],
                        probes=tuple(config.get("probes", ())),
                        interventions=tuple(config.get("interventions", ())),
                        decision_timeout=config.get("decision_timeout"),
                        episode_timeout=config.get("episode_timeout"),
                    )
                )
        return specs


def bundled_experiments() -> list[str]:
    """Names of the experiment files shipped in ``socialsim.experiments``."""
    folder = resources.files("socialsim.experiments")
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def bundled_description(name: str) -> str:
    """The ``description`` of a bundled experiment file ('' if it has none)."""
    text = (resources.files("socialsim.experiments") / f"{name}.toml").read_text(encoding="utf-8")
    try:
        return str(tomllib.loads(text).get("description", ""))
    except tomllib.TOMLDecodeError:
        return ""


def find_file(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.exists():
        return path
    stem = name_or_path[: -len(".toml")] if name_or_path.endswith(".toml") else name_or_path
    bundled = resources.files("socialsim.experiments") / f"{stem}.toml"
    if bundled.is_file():
        return Path(str(bundled))
    raise ConfigError(
        f"FILE: no experiment file {name_or_path!r}"
        f"{registry.nearest(stem, bundled_experiments())}; give a path or one of the bundled: "
        f"{', '.join(bundled_experiments())}"
    )


def load(
    source: str | os.PathLike | Mapping[str, Any], overrides: Iterable[str] = ()
) -> Experiment:
    """Read, override and fully check an experiment: a file path, the name of a bundled file,
    or a dict shaped like the file."""
    if isinstance(source, Mapping):
        config = copy.deepcopy(dict(source))
    else:
        path = find_file(str(source))
        try:
            config = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: not valid TOML: {error}") from None
    config = expand_variables(config)
    if not isinstance(source, Mapping):
        _read_file_params_from(config, path.parent)
    notes = []
    for assignment in overrides:
        notes += apply_override(config, assignment)
    fill_named_seats(config)
    return dataclasses.replace(resolve(config), notes=tuple(notes))


def _read_file_params_from(config: dict[str, Any], folder: Path) -> None:
    """Make the relative paths that a file's seats give in their kind's ``file_params`` (an
    ``rl`` seat's policy ``path``; a grid axis over one too) absolute against ``folder``, the
    experiment file's, so that a file means the same files from any working directory."""
    seats = config.get("seats")
    if not isinstance(seats, dict):
        return  # the checks name what is wrong

    def params(seat: str) -> tuple[str, ...]:
        spec = seats.get(seat)
        default = seats.get(DEFAULT_SEAT)
        kind = (spec if isinstance(spec, dict) else {}).get("kind") or (
            default.get("kind") if isinstance(default, dict) else None
        )
        try:
            return tuple(getattr(registry.agent_class(kind), "file_params", ()))
        except (TypeError, ValueError):
            return ()  # an unknown kind: the checks name it

    def absolute(value: Any) -> Any:
        if not isinstance(value, str) or not value:
            return value
        given = Path(value).expanduser()
        return value if given.is_absolute() else os.path.normpath(folder.resolve() / given)

    for seat, spec in seats.items():
        if isinstance(spec, dict):
            for param in params(seat):
                if param in spec:
                    spec[param] = absolute(spec[param])
    grid = config.get("grid")
    for key, values in grid.items() if isinstance(grid, dict) else ():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "seats" and parts[2] in params(parts[1]):
            if isinstance(values, list):
                grid[key] = [absolute(value) for value in values]


def resolve(config: dict[str, Any]) -> Experiment:
    """Check ``config`` and expand its grid into cells."""
    config = copy.deepcopy(config)
    check_keys("", config, TOP_KEYS)
    for key in REQUIRED:
        if key not in config:
            raise ConfigError(f"{key}: required key missing; a file needs {', '.join(REQUIRED)}")
    for key in ("episodes", "max_concurrent"):
        if key in config and config[key] < 1:
            raise ConfigError(f"{key}: must be >= 1, got {config[key]}")
    if config.get("workers", 1) < 0:
        raise ConfigError(
            f"workers: must be >= 0 (0: play in this process), got {config['workers']}"
        )
    for key in ("decision_timeout", "episode_timeout"):
        if key in config and not 0 < config[key] < float("inf"):
            raise ConfigError(f"{key}: must be a number of seconds > 0, got {config[key]}")
    if config.get("seed", 0) < 0:
        raise ConfigError(f"seed: must be an integer >= 0, got {config['seed']}")
    for model, group in config.get("model_groups", {}).items():
        if not isinstance(group, str) or not group:
            raise ConfigError(
                f"model_groups.{model}: expected a group name (e.g. 'reasoning', 'chat'), got {group!r}"
            )
    backend = config.get("backend", "local")
    if backend not in BACKENDS:
        raise ConfigError(f"backend: {backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError("backend: 'ray' needs Ray, not installed: pip install 'socialsim[ray]'")
    if "cache" in config:
        if not config["cache"].strip():
            raise ConfigError("cache: expected the path of a reply cache file, got ''")
        config["cache"] = str(Path(config["cache"]).expanduser().resolve())
    built: dict[str, Any] = {}  # envs, seat specs and fits the cells share, checked once
    grid = config.pop("grid", {})
    cells = []
    for assignment in expand_grid(grid):
        cell_config = _cell_config(config, assignment)
        _share_reply_cache(cell_config)
        try:
            check_cell(
                cell_config, where=f"grid cell {assignment}: " if assignment else "", built=built
            )
            if "evolution" in cell_config:
                check_evolution(cell_config, assignment, built)
        except ConfigError as error:
            raise _for_the_file(error, config, assignment) from None
        cells.append((assignment, cell_config))
    check_models(cells)
    resolved = dict(config)
    if grid:
        resolved["grid"] = grid
    return Experiment(resolved, cells)


def check_evolution(config: dict[str, Any], cell: dict[str, Any], built: dict[str, Any]) -> None:
    """A cell's ``[evolution]`` table and its first generation (:mod:`.evolution`)."""
    from socialsim.config.evolution import check_first_generation, evolution_rule

    where = f"grid cell {cell}: " if cell else ""
    evolution_rule(config["evolution"])
    check_first_generation(resolve_seats(config, built), where, config["evolution"])


def _for_the_file(error: ConfigError, config: dict[str, Any], cell: dict[str, Any]) -> ConfigError:
    """``error`` of grid cell ``cell`` without its ``grid cell {...}:`` prefix when the file
    without its grid fails the same way: then the error concerns no grid cell."""
    prefix = f"grid cell {cell}: "
    text = str(error)
    if not cell or not text.startswith(prefix):
        return error
    plain = copy.deepcopy(config)
    fill_named_seats(plain)
    _share_reply_cache(plain)
    try:
        check_cell(plain)
    except ConfigError as same:
        if str(same) == text[len(prefix) :]:
            return same
    except Exception:  # noqa: BLE001 - the file alone may be incomplete without its grid
        pass
    return error


def _cell_config(config: dict[str, Any], assignment: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved table of one grid cell, its own to the last value (a grid value is copied,
    never shared with another cell), checked against its label.

    A table axis is applied before the axes inside it (``seats`` before
    ``seats.interceptor.kind``), whatever their order in the file, so that the inner key wins in
    every cell rather than being lost to (or written into) a table that other cells share.
    """
    cell_config = copy.deepcopy(config)
    for key in sorted(assignment, key=lambda k: len(k.split("."))):
        set_path(cell_config, key.split("."), copy.deepcopy(assignment[key]), f"grid.{key}")
    for key, value in assignment.items():  # after every axis, whatever their order
        reach_named_seats(cell_config, key, value)
    fill_named_seats(cell_config)
    _check_label(cell_config, assignment)
    return cell_config


def _check_label(cell_config: Mapping[str, Any], assignment: Mapping[str, Any]) -> None:
    """Every value a cell's label names is the value the cell resolved to (each key of a table
    axis, unless an axis inside that table sets it): a mislabelled cell is a configuration
    error, never a condition played under another's name."""
    for key, value in assignment.items():
        inner = [k for k in assignment if k.startswith(key + ".")]
        for path, expected in _leaves(key, value):
            if any(path == k or path.startswith(k + ".") for k in inner):
                continue
            actual = _get_path(cell_config, path.split("."))
            if actual != expected:
                raise ConfigError(
                    f"grid cell {dict(assignment)}: {path} resolved to {actual!r}, but the "
                    f"cell's label says {expected!r}; the grid's axes contradict each other"
                )


def _leaves(path: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):  # an empty table names nothing: the cell may fill it
        return [leaf for k, v in value.items() for leaf in _leaves(f"{path}.{k}", v)]
    return [(path, value)]


def _get_path(table: Any, keys: list[str]) -> Any:
    for key in keys:
        if not isinstance(table, Mapping) or key not in table:
            return "(missing)"
        table = table[key]
    return table


def _share_reply_cache(config: dict[str, Any]) -> None:
    """The top-level ``cache`` (a path, made absolute against the working directory so that
    every results directory means the same file) goes into each seat's ``model`` table that
    names no ``cache`` of its own."""
    absolute = config.get("cache")
    if absolute is None:
        return
    for spec in config.get("seats", {}).values():
        model = spec.get("model") if isinstance(spec, dict) else None
        if isinstance(model, str):
            spec["model"] = {"model": model, "cache": absolute}
        elif isinstance(model, dict) and "cache" not in model:
            model["cache"] = absolute


def expand_grid(grid: Mapping[str, Any]) -> list[dict[str, Any]]:
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(
                f"grid.{key}: expected a non-empty list of values to cross, got {values!r}"
            )
        if key.split(".")[0] not in TOP_KEYS or key.split(".")[0] in ("grid", "name"):
            allowed = [k for k in TOP_KEYS if k not in ("grid", "name")]
            raise ConfigError(
                f"grid.{key}: unknown key {key.split('.')[0]!r}; a grid path starts with one of: {', '.join(allowed)}"
            )
    keys = list(grid)
    return [
        dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))
    ]
