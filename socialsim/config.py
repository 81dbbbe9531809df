"""Experiment files: TOML, read with the standard library's ``tomllib``.

(About 560 lines: the one loader of experiment files, from reading to the checks of every cell;
several engineers edit it at once, so the split into overrides and checks waits until they
are merged.)

.. code-block:: toml

    name = "donation_quickstart"      # required; names the default output directory
    description = "..."
    episodes = 10                     # per grid cell
    seed = 0                          # episode i has seed `seed + i` (socialsim.seeding)
    max_concurrent = 1                # episodes in flight at once (LLM agents wait concurrently)
    workers = 1                       # processes playing episodes (CPU-bound runs: the cores)
    backend = "local"                 # or "ray" (socialsim[ray]; RAY_ADDRESS names a cluster)
    cache = "~/llm_replies.sqlite"    # optional: one reply cache shared by several results
                                      # directories, for every seat whose model names none

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
import inspect
import itertools
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from socialsim import registry
from socialsim.plain_json import canonical_json
from socialsim.runner import EpisodeSpec
from socialsim.seeding import episode_seed


class ConfigError(ValueError):
    """A bad experiment file or override; the CLI exits with status 2."""


TOP_KEYS = {
    "name": str,
    "description": str,
    "episodes": int,
    "seed": int,
    "max_concurrent": int,
    "workers": int,
    "backend": str,
    "cache": str,
    "env": dict,
    "seats": dict,
    "probes": list,
    "grid": dict,
}
REQUIRED = ("name", "env", "seats")
ENV_KEYS = {"id": str, "form": str, "kwargs": dict}
DEFAULT_SEAT = "*"
BACKENDS = ("local", "ray")  # local: this process, or `workers` processes


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

    def specs(self) -> list[EpisodeSpec]:
        """Every episode of the experiment, cell by cell."""
        specs = []
        for cell, config in self.cells:
            seats = resolve_seats(config)
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
                    )
                )
        return specs


def _type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", dict: "a table", list: "a list (array)"}[kind]


def _check_type(where: str, value: Any, kind: type) -> None:
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        raise ConfigError(
            f"{where}: expected {_type_name(kind)}, got {value!r} ({type(value).__name__})"
        )


def _check_keys(where: str, table: Mapping[str, Any], allowed: Mapping[str, type]) -> None:
    for key, value in table.items():
        if key not in allowed:
            raise ConfigError(
                f"{where}{key}: unknown key {key!r}; allowed keys: {', '.join(allowed)}"
            )
        _check_type(f"{where}{key}", value, allowed[key])


# -- loading and overrides -------------------------------------------------------------------


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


def parse_value(text: str) -> Any:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_override(config: dict[str, Any], assignment: str) -> list[str]:
    """Apply one ``path.to.key=value`` override in place; return a line for each grid axis it
    replaces.

    An override always wins: a grid axis at the overridden path (or below it) is dropped, so the
    value set is the one that runs; ``grid.PATH=[...]`` sets the axis itself. ``seats.*.KEY``
    sets the ``"*"`` default and, as a grid axis over it does, the parameter ``KEY`` of every
    named seat whose own kind takes it and that does not set it itself (a named seat's own kind
    and parameters stay), and ``seats.*.TABLE.KEY`` is also merged into each ``TABLE`` a named seat
    has of its own (``seats.*.model.api_base`` reaches an interceptor with its own ``model``).
    """
    path, sep, text = assignment.partition("=")
    if not sep or not path.strip():
        raise ConfigError(f"--set: expected path.to.key=value, got {assignment!r}")
    value = parse_value(text.strip())
    path = path.strip()
    if path.startswith("grid."):
        config.setdefault("grid", {})[path[len("grid.") :]] = value
        return []
    keys = path.split(".")
    targets = [keys]
    seats = config.get("seats")
    if len(keys) > 3 and keys[:2] == ["seats", DEFAULT_SEAT] and isinstance(seats, dict):
        targets += [
            ["seats", seat, *keys[2:]]
            for seat, spec in seats.items()
            if seat != DEFAULT_SEAT
            and isinstance(spec, dict)
            and isinstance(spec.get(keys[2]), dict)
        ]
    notes = []
    for target in targets:
        notes += _replace_grid_axes(config, ".".join(target), assignment)
        _set_path(config, target, value, "--set")
    _reach_named_seats(config, path, value)
    return notes


def _replace_grid_axes(config: dict[str, Any], path: str, assignment: str) -> list[str]:
    """Drop the grid axes that ``--set path=...`` overrides; refuse one that would overwrite
    the override in every cell."""
    grid = config.get("grid")
    if not isinstance(grid, dict):
        return []
    notes = []
    for axis in list(grid):
        if axis == path or axis.startswith(path + "."):
            notes.append(
                f"--set {assignment.strip()} replaces the grid axis {axis} = {grid.pop(axis)!r}"
            )
        elif path.startswith(axis + "."):
            raise ConfigError(
                f"--set {assignment.strip()}: the grid sweeps {axis}, which holds {path}; "
                f"set the axis instead (--set 'grid.{axis}=[...]')"
            )
    if not grid:
        del config["grid"]
    return notes


def _fill_named_seats(config: dict[str, Any]) -> None:
    """A seat named without a kind (``seats.agent_3.p = 1``) starts from the '*' spec, its own
    keys merged in, table into table (``seats.encoder.model.model = ...`` keeps the other keys
    of the default's ``model`` table)."""
    seats = config.get("seats")
    if not isinstance(seats, dict) or not isinstance(seats.get(DEFAULT_SEAT), dict):
        return
    for seat, spec in seats.items():
        if seat != DEFAULT_SEAT and isinstance(spec, dict) and "kind" not in spec:
            seats[seat] = _merged(seats[DEFAULT_SEAT], spec)


def _reach_named_seats(config: dict[str, Any], path: str, value: Any) -> None:
    """A grid axis ``seats.*.KEY`` (a parameter, not the kind) also sets ``KEY`` on every named
    seat with a kind of its own that takes that parameter and does not set it itself: an axis
    over ``seats.*.norm`` gives the whole population the norm, the norm-less entrant keeps its own
    spec."""
    keys = path.split(".")
    if len(keys) != 3 or keys[:2] != ["seats", DEFAULT_SEAT] or keys[2] == "kind":
        return
    seats = config.get("seats", {})
    for seat, spec in list(seats.items()):
        if seat == DEFAULT_SEAT or not isinstance(spec, dict) or keys[2] in spec:
            continue
        if "kind" in spec and _takes(spec["kind"], keys[2]):
            # a new table: the spec may be a grid value that other cells share
            seats[seat] = {**spec, keys[2]: copy.deepcopy(value)}


def _takes(kind: Any, parameter: str) -> bool:
    try:
        target = registry.agent_class(kind)
    except Exception:  # an unknown kind is reported by check_cell, with its alternatives
        return False
    parameters = inspect.signature(target).parameters
    return parameter in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())


def _merged(default: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``default`` with ``own`` merged in, table into table (``own`` wins)."""
    merged = copy.deepcopy(dict(default))
    for key, value in own.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _set_path(config: dict[str, Any], keys: list[str], value: Any, where: str) -> None:
    table = config
    for depth, key in enumerate(keys[:-1]):
        nxt = table.setdefault(key, {})
        if not isinstance(nxt, dict):
            raise ConfigError(
                f"{where} {'.'.join(keys)}: {'.'.join(keys[: depth + 1])} is not a table"
            )
        table = nxt
    table[keys[-1]] = value


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
    notes = []
    for assignment in overrides:
        notes += apply_override(config, assignment)
    _fill_named_seats(config)
    return dataclasses.replace(resolve(config), notes=tuple(notes))


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand_variables(value: Any, where: str = "", environ: Mapping[str, str] | None = None) -> Any:
    """Replace ``${NAME}`` and ``${NAME:-default}`` in every string of the file by the
    environment variable's value (e.g. ``model = "${SOCIALSIM_MODEL:-openai/gpt-4o-mini}"``),
    so that the manifest records the value actually used."""
    environ = os.environ if environ is None else environ
    if isinstance(value, dict):
        return {k: expand_variables(v, f"{where}{k}.", environ) for k, v in value.items()}
    if isinstance(value, list):
        return [expand_variables(v, where, environ) for v in value]
    if not isinstance(value, str) or "${" not in value:
        return value

    def substitute(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(
            f"{where.rstrip('.')}: the environment variable {name} is not set (write ${{{name}:-default}} for a default)"
        )

    return _VARIABLE.sub(substitute, value)


def resolve(config: dict[str, Any]) -> Experiment:
    """Check ``config`` and expand its grid into cells."""
    config = copy.deepcopy(config)
    _check_keys("", config, TOP_KEYS)
    for key in REQUIRED:
        if key not in config:
            raise ConfigError(f"{key}: required key missing; a file needs {', '.join(REQUIRED)}")
    for key in ("episodes", "max_concurrent", "workers"):
        if key in config and config[key] < 1:
            raise ConfigError(f"{key}: must be >= 1, got {config[key]}")
    if config.get("seed", 0) < 0:
        raise ConfigError(f"seed: must be an integer >= 0, got {config['seed']}")
    backend = config.get("backend", "local")
    if backend not in BACKENDS:
        raise ConfigError(f"backend: {backend!r} is not allowed; allowed: {', '.join(BACKENDS)}")
    if backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError("backend: 'ray' needs Ray, not installed: pip install 'socialsim[ray]'")
    if "cache" in config:
        if not config["cache"].strip():
            raise ConfigError("cache: expected the path of a reply cache file, got ''")
        config["cache"] = str(Path(config["cache"]).expanduser().resolve())
    built: dict[str, None] = {}  # seat specs already built once (cells share most of them)
    grid = config.pop("grid", {})
    cells = []
    for assignment in expand_grid(grid):
        cell_config = copy.deepcopy(config)
        for key, value in assignment.items():
            _set_path(cell_config, key.split("."), value, f"grid.{key}")
        for key, value in assignment.items():  # after every axis, whatever their order
            _reach_named_seats(cell_config, key, value)
        _fill_named_seats(cell_config)
        _share_reply_cache(cell_config)
        check_cell(
            cell_config, where=f"grid cell {assignment}: " if assignment else "", built=built
        )
        cells.append((assignment, cell_config))
    check_models(cells)
    resolved = dict(config)
    if grid:
        resolved["grid"] = grid
    return Experiment(resolved, cells)


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


def check_cell(
    config: dict[str, Any], where: str = "", built: dict[str, None] | None = None
) -> None:
    """Check one fully resolved configuration (no grid): its keys, its env (built once), and
    every seat's agent (built once per distinct spec, so that a bad parameter or a missing
    optional package is found before anything is written)."""
    built = {} if built is None else built
    try:
        _check_keys(where, config, TOP_KEYS)
        if config.get("seed", 0) < 0:
            raise ConfigError(f"{where}seed: must be an integer >= 0, got {config['seed']}")
        env = config["env"]
        _check_keys(f"{where}env.", env, ENV_KEYS)
        if "id" not in env:
            raise ConfigError(
                f"{where}env.id: required key missing; allowed ids: {', '.join(registry.ENV_IDS)}"
            )
        form = env.get("form", "parallel")
        if form not in registry.FORMS:
            raise ConfigError(
                f"{where}env.form: {form!r} is not allowed; allowed: {', '.join(registry.FORMS)}"
            )
        kwargs = env.get("kwargs", {})
        module = registry.env_module(env["id"])
        registry.check_kwargs(f"{where}env.kwargs", module.raw_env, kwargs)
        try:
            possible_agents = list(module.raw_env(**kwargs).possible_agents)
        except (TypeError, ValueError) as error:  # "name: must be ..." names the keyword
            raise ConfigError(f"{where}env.kwargs{_dotted(str(error))}") from None
        except MemoryError as error:  # numpy names the size it could not allocate
            raise ConfigError(
                f"{where}env.kwargs: {env['id']} with {kwargs} is too large for this machine: "
                f"{error}"
            ) from None
        seats = config["seats"]
        for seat, spec in seats.items():
            if seat != DEFAULT_SEAT and seat not in possible_agents:
                raise ConfigError(
                    f"{where}seats.{seat}: unknown seat {seat!r}; the env's seats are {', '.join(possible_agents)} (or '*' for all)"
                )
            registry.check_agent_spec(f"{where}seats.{seat}", spec)
            _build_once(f"{where}seats.{seat}", spec, built)
            _check_key_variable(f"{where}seats.{seat}", spec)
        missing = [a for a in possible_agents if a not in seats and DEFAULT_SEAT not in seats]
        if missing:
            raise ConfigError(
                f'{where}seats: no agent for seats {missing}; name them or give seats."*"'
            )
        for agent_id in possible_agents:  # every seat's kind fits its env and its decisions
            name = agent_id if agent_id in seats else DEFAULT_SEAT
            registry.check_fit(f"{where}seats.{name}", seats[name], env["id"], agent_id)
        for i, probe in enumerate(config.get("probes", [])):
            if not isinstance(probe, dict) or "name" not in probe:
                raise ConfigError(
                    f"{where}probes[{i}]: a probe is a table with a 'name' key, got {probe!r}"
                )
            table = registry.probe_table()
            if probe["name"] not in table:
                raise ConfigError(
                    f"{where}probes[{i}].name: unknown probe {probe['name']!r}; allowed: {', '.join(sorted(table)) or '(none)'}"
                )
    except ConfigError:
        raise
    except ValueError as error:  # registry errors already name the key
        text = str(error)
        raise ConfigError(text if text.startswith(where) else f"{where}{text}") from None


def check_models(cells: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """The LLM seats of every cell together (:func:`socialsim.llm.check_seat_models`): one
    concurrency limit per model and server, and a structured format the server accepts."""
    from socialsim.llm import check_seat_models  # here: only experiments with LLM seats need it

    try:
        check_seat_models(cells)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def _check_key_variable(where: str, spec: Mapping[str, Any]) -> None:
    """A seat's ``model.api_key_env`` must name a variable that is set: found now, not after
    the first episodes failed."""
    model = spec.get("model")
    name = model.get("api_key_env") if isinstance(model, dict) else None
    if isinstance(name, str) and not os.environ.get(name):
        raise ConfigError(
            f"{where}.model.api_key_env: the environment variable {name!r} is not set (or empty); "
            "export it, or name the variable that holds the key"
        )


def _dotted(message: str) -> str:
    """``"rounds: must be ..."`` -> ``".rounds: must be ..."``, else ``": message"``."""
    head, sep, _ = message.partition(": ")
    return f".{message}" if sep and head.isidentifier() else f": {message}"


def _build_once(where: str, spec: Mapping[str, Any], built: dict[str, None]) -> None:
    """Build the agent of ``spec`` once: its constructor checks its parameters and loads what it
    needs (word vectors, an optional package). LLM agents make no request when built."""
    key = canonical_json(spec)
    if key in built:
        return
    try:
        registry.build_agent(spec)
    except (TypeError, ValueError, ImportError) as error:
        raise ConfigError(f"{where}: {spec['kind']}: {error}") from None
    built[key] = None


def resolve_seats(config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """agent id -> agent spec for every seat of the env, the '*' default filled in."""
    env = config["env"]
    possible_agents = (
        registry.env_module(env["id"]).raw_env(**env.get("kwargs", {})).possible_agents
    )
    seats = config["seats"]
    return {a: dict(seats.get(a, seats.get(DEFAULT_SEAT))) for a in possible_agents}
