"""The checks of one resolved grid cell, before anything is written: its keys, its env (built
once), every seat's agent (built once per distinct spec), the seats' fit to the env's decisions,
its probes, and the LLM seats of all cells together."""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from typing import Any

from socialsim import interventions, registry
from socialsim.config.schema import DEFAULT_SEAT, ENV_KEYS, TOP_KEYS, ConfigError, check_keys
from socialsim.plain_json import canonical_json


def check_cell(
    config: dict[str, Any], where: str = "", built: dict[str, Any] | None = None
) -> None:
    """Check one fully resolved configuration (no grid): its keys, its env, and every seat's
    agent (built, so that a bad parameter or a missing optional package is found before
    anything is written). ``built`` holds what the cells of one experiment share, checked
    once: each distinct env (its seats), seat spec and seat fit."""
    built = {} if built is None else built
    try:
        check_keys(where, config, TOP_KEYS)
        if config.get("seed", 0) < 0:
            raise ConfigError(f"{where}seed: must be an integer >= 0, got {config['seed']}")
        env = config["env"]
        check_keys(f"{where}env.", env, ENV_KEYS)
        if "id" not in env:
            raise ConfigError(
                f"{where}env.id: required key missing; allowed ids: {', '.join(registry.ENV_IDS)}"
            )
        form = env.get("form", "parallel")
        if form not in registry.FORMS:
            raise ConfigError(
                f"{where}env.form: {form!r} is not allowed; allowed: {', '.join(registry.FORMS)}"
            )
        possible_agents = _env_seats(where, env, built)
        seats = config["seats"]
        for seat, spec in seats.items():
            if seat != DEFAULT_SEAT and seat not in possible_agents:
                raise ConfigError(
                    f"{where}seats.{seat}: unknown seat {seat!r}; the env's seats are {', '.join(possible_agents)} (or '*' for all)"
                )
            _check_seat_once(f"{where}seats.{seat}", spec, built)
        missing = [a for a in possible_agents if a not in seats and DEFAULT_SEAT not in seats]
        if missing:
            raise ConfigError(
                f'{where}seats: no agent for seats {missing}; name them or give seats."*"'
            )
        for agent_id in possible_agents:  # every seat's kind fits its env and its decisions
            name = agent_id if agent_id in seats else DEFAULT_SEAT
            fit = f"fit:{seats[name]['kind']}:{env['id']}:{agent_id}"
            if fit not in built:  # the fit depends on the kind only, not on its parameters
                registry.check_fit(f"{where}seats.{name}", seats[name], env["id"], agent_id)
                built[fit] = None
            _check_seat_spaces(f"{where}seats.{name}", seats[name], env, agent_id, built)
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
        for i, intervention in enumerate(config.get("interventions", [])):
            interventions.check(i, intervention, possible_agents)
    except ConfigError as error:
        raise ConfigError(_top_key_hint(str(error))) from None
    except ValueError as error:  # registry errors already name the key
        text = str(error)
        text = text if text.startswith(where) else f"{where}{text}"
        raise ConfigError(_top_key_hint(text)) from None


def _top_key_hint(text: str) -> str:
    """``text``, with a hint when the unknown key it names is a top-level key written below a
    table's header (``episodes = 3`` after ``[seats."*"]`` belongs to that table in TOML)."""
    found = re.search(r"(\S+): unknown key '([^']+)'", text)
    if found is None or found.group(2) not in TOP_KEYS or found.group(1) == found.group(2):
        return text
    key = found.group(2)
    return (
        f"{text}; {key!r} is a top-level key: in TOML a key below a [table] header belongs to "
        "that table, so write it above the first header"
    )


def _names_a_model(cells: list[tuple[dict[str, Any], dict[str, Any]]]) -> bool:
    return any(
        isinstance(spec.get("model"), Mapping)
        for _, cell in cells
        for spec in cell["seats"].values()
    )


def check_models(cells: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    """The LLM seats of every cell together (:func:`socialsim.llm.check_seat_models`): one
    concurrency limit per model and server. Asks no server: what the servers are is resolved
    by the run, once, when it has episodes to play (:func:`resolve_models`)."""
    if not _names_a_model(cells):
        return  # no seat names a model: nothing to check, and no LLM code to import
    from socialsim.llm import check_seat_models

    try:
        check_seat_models(cells)
    except ValueError as error:
        raise ConfigError(str(error)) from None


def resolve_models(
    cells: list[tuple[dict[str, Any], dict[str, Any]]], manifest: Any, run_dir: Any
) -> list[tuple[dict[str, Any], dict[str, Any]]] | None:
    """``cells`` with what each LLM seat's server is, resolved once for a run that has episodes
    to play (:func:`socialsim.llm.resolve_servers`: as the ``manifest`` of an earlier run in
    ``run_dir`` recorded it, else asked, with the structured-output probe, else as the reply
    cache recorded it); None when no seat names a model."""
    if not _names_a_model(cells):
        return None
    from socialsim.llm import resolve_servers

    recorded = manifest.get("llm") if isinstance(manifest, dict) else None
    try:
        return resolve_servers(cells, recorded if isinstance(recorded, list) else (), run_dir)
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


def _env_seats(where: str, env: Mapping[str, Any], built: dict[str, Any]) -> list[str]:
    """The seats of the env ``env`` (its keyword names and values checked, the env built once
    per distinct id and keywords: the cells of a grid share a few)."""
    kwargs = env.get("kwargs", {})
    key = f"env:{env['id']}:{canonical_json(kwargs)}"
    if key not in built:
        module = registry.env_module(env["id"])
        registry.check_kwargs(f"{where}env.kwargs", module.raw_env, kwargs)
        try:
            built[f"{key}:env"] = made = module.raw_env(**kwargs)  # its spaces, for the seats
            built[key] = list(made.possible_agents)
        except (TypeError, ValueError) as error:  # "name: must be ..." names the keyword
            raise ConfigError(f"{where}env.kwargs{_dotted(str(error))}") from None
        except MemoryError as error:  # numpy names the size it could not allocate
            raise ConfigError(
                f"{where}env.kwargs: {env['id']} with {kwargs} is too large for this machine: "
                f"{error}"
            ) from None
    return built[key]


def _check_seat_once(where: str, spec: Mapping[str, Any], built: dict[str, Any]) -> None:
    """Check the agent spec of a seat and build its agent, once per distinct spec: its
    constructor checks its parameters and loads what it needs (word vectors, an optional
    package). LLM agents make no request when built."""
    key = f"seat:{canonical_json(spec)}"
    if key in built:
        return
    registry.check_agent_spec(where, spec)
    try:
        agent = registry.build_agent(spec)
    except (TypeError, ValueError, ImportError) as error:
        raise ConfigError(f"{where}: {spec['kind']}: {error}") from None
    _check_key_variable(where, spec)
    built[key] = agent  # kept for its seats' spaces check


def _check_seat_spaces(
    where: str, spec: Mapping[str, Any], env: Mapping[str, Any], agent_id: str, built: dict
) -> None:
    """The agent built for ``spec`` checks the spaces of seat ``agent_id`` (a trained policy:
    its file's), once per distinct spec, env and seat."""
    env_key = f"env:{env['id']}:{canonical_json(env.get('kwargs', {}))}"
    key = f"spaces:{canonical_json(spec)}:{env_key}:{agent_id}"
    if key in built:
        return
    made = built[f"{env_key}:env"]
    try:
        built[f"seat:{canonical_json(spec)}"].check_seat(
            agent_id, made.observation_space(agent_id), made.action_space(agent_id)
        )
    except (TypeError, ValueError, ImportError) as error:
        raise ConfigError(f"{where}: {spec['kind']}: {error}") from None
    built[key] = None


def resolve_seats(
    config: Mapping[str, Any], built: dict[str, Any] | None = None
) -> dict[str, dict[str, Any]]:
    """agent id -> agent spec for every seat of the env, the '*' default filled in (``built``:
    the envs already built, as :func:`check_cell` keeps them)."""
    possible_agents = _env_seats("", config["env"], {} if built is None else built)
    seats = config["seats"]
    # each seat its own spec, to its nested tables: no agent can change another seat's
    return {a: copy.deepcopy(seats.get(a, seats.get(DEFAULT_SEAT))) for a in possible_agents}
