"""Checks of the LLM seats of an experiment as a whole, before its first episode (the config
check calls :func:`check_seat_models` with every grid cell)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.llm.build import DEFAULTS
from socialsim.llm.model import served_name
from socialsim.llm.server import probe_structured_output, server_info
from socialsim.llm.structured import FORMATS


def check_seat_models(cells: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> None:
    """ValueError naming the seat when

    * two seat tables on one model and server ask for different ``concurrency`` (they share one
      limit, so the second would be refused mid-episode), or
    * a seat with ``structured_output`` on an ``api_base`` (``true``, or ``"auto"``, the
      agents' default, where the server is one it constrains:
      :data:`~socialsim.llm.server.CONSTRAINED_FAMILIES`, or the table names a
      ``structured_format``) names a ``structured_format`` the server refuses: one probe request
      per (server, model, format) tells (:func:`~socialsim.llm.server.probe_structured_output`).

    ``cells`` are ``(grid assignment, resolved config)`` pairs.
    """
    limits: dict[tuple[str, Any], tuple[int, str]] = {}
    for assignment, cell in cells:
        where = f"grid cell {dict(assignment)}: " if assignment else ""
        for seat, spec in cell["seats"].items():
            model = spec.get("model")
            if not isinstance(model, Mapping) or not isinstance(model.get("model"), str):
                continue
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
            structured_format = model.get("structured_format", "auto")
            if isinstance(api_base, str) and constrained(
                spec.get("structured_output", "auto"), api_base, name, structured_format, model
            ):
                key_variable = model.get("api_key_env")
                reason = probe_structured_output(
                    api_base,
                    served_name(name),
                    structured_format,
                    api_key=os.environ.get(key_variable) if key_variable else None,
                    timeout=float(model.get("timeout", DEFAULTS["timeout"])),
                )
                if reason is not None:
                    raise ValueError(
                        f"{where}seats.{seat}.model.structured_format: the server at {api_base} "
                        f"refused structured output in the form {structured_format!r} ({reason}); "
                        f"name the form it accepts, one of {', '.join(FORMATS[1:])}"
                    )


def constrained(
    setting: Any, api_base: str, name: str, structured_format: str, model: Mapping[str, Any]
) -> bool:
    """Whether a seat's answers will be constrained (the agents' ``structured_output``)."""
    if setting != "auto":
        return setting is True
    if structured_format != "auto":
        return True
    timeout = float(model.get("timeout", DEFAULTS["timeout"]))
    info = server_info(api_base, served_name(name), timeout)
    return info is not None and info.constrains
