"""The LLM seats of an experiment as a whole: their config check (:func:`check_seat_models`,
offline, with every grid cell) and what their servers are, resolved once per run before its
first episode (:func:`resolve_servers`)."""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from socialsim.llm.build import DEFAULTS, cache_path
from socialsim.llm.cache import recorded_server
from socialsim.llm.model import served_name
from socialsim.llm.offline import is_offline
from socialsim.llm.server import ServerInfo, probe_structured_output, server_info
from socialsim.llm.structured import FORMATS

Cells = Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]


def _llm_seats(cells: Cells) -> Iterable[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
    """``(where, seat, spec, model table)`` of every seat that names a model table."""
    for assignment, cell in cells:
        where = f"grid cell {dict(assignment)}: " if assignment else ""
        for seat, spec in cell["seats"].items():
            model = spec.get("model")
            if isinstance(model, Mapping) and isinstance(model.get("model"), str):
                yield where, seat, spec, model


def check_seat_models(cells: Cells) -> None:
    """ValueError naming the seat when two seat tables on one model and server ask for
    different ``concurrency`` (they share one limit, so the second would be refused
    mid-episode), or a table's ``server`` is not what a run records. Asks no server.

    ``cells`` are ``(grid assignment, resolved config)`` pairs.
    """
    limits: dict[tuple[str, Any], tuple[int, str]] = {}
    for where, seat, _, model in _llm_seats(cells):
        name, api_base = model["model"], model.get("api_base")
        limit = model.get("concurrency", DEFAULTS["concurrency"])
        if limit:
            first = limits.setdefault((name, api_base), (limit, f"{where}seats.{seat}"))
            if first[0] != limit:
                raise ValueError(
                    f"{where}seats.{seat}.model.concurrency: {limit} requests in flight to "
                    f"{name!r} at {api_base}, but {first[1]}.model.concurrency is {first[0]}; "
                    "seats on one model and server share one limit: give them the same"
                )
        if model.get("server") is not None:
            try:
                ServerInfo.from_facts(model["server"])
            except ValueError as error:
                raise ValueError(f"{where}seats.{seat}.model.{error}") from None


def resolve_servers(
    cells: Cells,
    recorded: Iterable[Mapping[str, Any]] = (),
    run_dir: str | os.PathLike | None = None,
) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """``cells`` (copied) with every seat's model table on an ``api_base`` stating ``server``:
    what the server is (:meth:`ServerInfo.facts`), resolved once for a run, before its first
    episode, so that every episode constrains its answers the same way and a rerun or a replay
    finds the same cache rows:

    1. as the run recorded it before (``recorded``: its manifest's ``llm`` entries): a resumed
       run asks nothing;
    2. else asked now (``GET /models``), and the structured-output form probed once for the
       seats it constrains: a refusal is a ValueError naming the seat;
    3. else (the server out of reach) as the reply cache the seat uses recorded it: a replay
       of a finished run's cache needs no server;
    4. else a seat whose ``structured_output = "auto"`` depends on the server (the table names
       no ``structured_format``) is a ValueError naming the seat; the others are left to meet
       the server in their requests.

    A table that states ``server`` itself keeps it. ``run_dir`` places the seats' caches.
    """
    cells = [(assignment, copy.deepcopy(dict(cell))) for assignment, cell in cells]
    known: dict[tuple[str, str], Mapping[str, Any] | None] = {}
    for entry in recorded:
        config = entry.get("config") if isinstance(entry, Mapping) else None
        if isinstance(config, Mapping) and isinstance(config.get("api_base"), str):
            if isinstance(config.get("server"), Mapping) and isinstance(config.get("model"), str):
                known[(config["api_base"], served_name(config["model"]))] = config["server"]
    asked: set[tuple[str, str]] = set()
    for where, seat, spec, model in _llm_seats(cells):
        api_base = model.get("api_base")
        if not isinstance(api_base, str) or model.get("server") is not None:
            continue
        key = (api_base, served_name(model["model"]))
        timeout = float(model.get("timeout", DEFAULTS["timeout"]))
        if key not in known:  # offline: as the cache recorded it, never asked
            info = None if is_offline() else server_info(api_base, key[1], timeout)
            if info is not None:
                known[key] = info.facts()
                asked.add(key)
            else:
                path = cache_path(model.get("cache", DEFAULTS["cache"]), run_dir)
                known[key] = None if path is None else recorded_server(path, *key)
        facts = known[key]
        setting = spec.get("structured_output", "auto")
        structured_format = model.get("structured_format", "auto")
        if facts is None:
            if setting == "auto" and structured_format == "auto":
                raise ValueError(
                    f"{where}seats.{seat}.model.api_base: the server at {api_base} cannot be "
                    f"reached, and structured_output = 'auto' depends on what it is (it "
                    "constrains answers on llama.cpp, llama-cpp-python and vLLM servers); start "
                    f"the server, or set seats.{seat}.structured_output = true or false"
                )
            continue
        info = ServerInfo.from_facts(dict(facts))
        if key in asked and constrained(setting, structured_format, info):
            _probe(where, seat, model, api_base, key[1], structured_format, timeout)
        model["server"] = {**info.facts()}
    return cells


def _probe(
    where: str,
    seat: str,
    model: Mapping[str, Any],
    api_base: str,
    name: str,
    structured_format: str,
    timeout: float,
) -> None:
    """One probe request per (server, model, format) and process: a refusal is a ValueError."""
    key_variable = model.get("api_key_env")
    reason = probe_structured_output(
        api_base,
        name,
        structured_format,
        api_key=os.environ.get(key_variable) if key_variable else None,
        timeout=timeout,
    )
    if reason is not None:
        raise ValueError(
            f"{where}seats.{seat}.model.structured_format: the server at {api_base} "
            f"refused structured output in the form {structured_format!r} ({reason}); "
            f"name the form it accepts, one of {', '.join(FORMATS[1:])}"
        )


def constrained(setting: Any, structured_format: str, info: ServerInfo) -> bool:
    """Whether a seat's answers will be constrained (the agents' ``structured_output``), on a
    server that is ``info``."""
    if setting != "auto":
        return setting is True
    return structured_format != "auto" or info.constrains
