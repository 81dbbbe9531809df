"""What an uploaded experiment may set: the boundary between a host's upload and the server.

Whoever holds the host link may choose a game, not reach the server's files, credentials,
endpoints or code. So an upload is checked against an allow-list before anything it names is
imported, read or built:

* top-level keys: ``name`` (a plain name: letters, digits, ``_ . -``, at most 64 characters, no
  ``..``), ``description``, ``episodes`` (at most :data:`MAX_EPISODES`), ``seed`` (0 to
  :data:`MAX_SEED`), ``env``, ``seats`` and ``grid`` (at most :data:`MAX_CELLS` cells);
* ``env.id``: a game with a seat page; ``env.form``; ``env.kwargs``: the env's keywords whose
  values are plain (a boolean, a number or a short text), never a file (``wordlist``);
* each seat: a registered agent kind by name (never ``module:Class``) and that kind's plain
  parameters; a ``model`` table (a server, a key variable, a cache file) is the operator's to
  set (``socialsim serve --offer FILE``), never an upload's;
* every number is finite and at most :data:`MAX_NUMBER` in size; every text is plain (at most
  :data:`MAX_TEXT` characters; no ``/``, ``\\``, ``:``, NUL, no leading ``~`` or ``.``).

A parameter is plain if its annotation is a boolean, a number or a text (or optional) and its
name is not one of :data:`REFUSED` (a plain-typed ``path`` still names a file).

A key off the list is refused (:class:`~socialsim.config.ConfigError`, answered 422) with its
dotted path and what may be set there. The grid's cells are counted before any is built, and the
memory the check would take is estimated (the gossip envs keep player-by-player tables) and
bounded by :data:`MAX_CHECK_BYTES`. The game's size is bounded too: its players times the
pairings one game plays (:func:`game_size`, an upper bound; a session plays one episode) is
the server's time it takes, at most :data:`MAX_GAME_SECONDS` (a donation game of 200 players,
every pair once, is about 21 s and allowed; of 300, about 88 s, and of 3,000, refused).
"""

from __future__ import annotations

import copy
import inspect
import itertools
import math
import re
import tomllib
import typing
from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from socialsim import config as config_module
from socialsim import registry
from socialsim.config import DEFAULT_SEAT, ConfigError
from socialsim.envs.gossip.options import default_random_rounds

MAX_EPISODES = 1000  # a browser session plays one; a file written for `socialsim run` may say more
MAX_CELLS = 64
MAX_SEED = 2**31 - 1
MAX_TEXT = 200
MAX_NUMBER = 10**6  # no game keyword needs more; beyond it numpy may overflow
MAX_DESCRIPTION = 2000
MAX_CHECK_BYTES = 512 * 2**20
#: bytes per pair of players the gossip envs hold (measured: 77 MB for 2000 players)
BYTES_PER_PAIR = 20
#: seconds of the server's time per pairing and player of a game (measured with scripted
#: image-scoring donors: 1.4-2.8 us), per step of the reference schedule's search (measured: the
#: donation game's reset, 9.3 s for 200 players, 47.7 s for 300), and the most an upload's game
#: may take (see :func:`game_size`)
SECONDS_PER_TELLING = 3e-6
SECONDS_PER_SEARCH_STEP = 2.4e-8
MAX_GAME_SECONDS = 60.0

TOP_KEYS = ("name", "description", "episodes", "seed", "env", "seats", "grid")
ENV_KEYS = ("id", "form", "kwargs")
#: keys an upload never sets, and what they name
REFUSED = {
    "api_key_env": "a credential",
    "api_base": "an endpoint",
    "transport": "an endpoint",
    "model": "a model server and its credentials",
    "cache": "a file",
    "wordlist": "a file",
    "hint_vocabulary": "a file",
    "vocabulary": "a file",
    "vectors": "a file",
    "path": "a file",
    "policy": "a file",
    "render_mode": "the server's display",
}
_PLAIN_HINTS = {
    bool: (bool,),
    int: (int,),
    float: (int, float),
    str: (str,),
    bool | None: (bool,),
    int | None: (int,),
    float | None: (int, float),
    str | None: (str,),
}
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
_SEAT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}|\*")
_NOT_PLAIN = ("/", "\\", ":", "\x00")


def parse(text: Any) -> dict[str, Any]:
    """The TOML table of an upload (a :class:`ConfigError` for anything else)."""
    if not isinstance(text, str):
        raise ConfigError("upload: the experiment file's text")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"upload: not valid TOML: {error}") from None
    except RecursionError:
        raise ConfigError("upload: nested too deeply") from None


def read(text: Any, games: Mapping[str, str]):
    """``(experiment, game)`` of an uploaded experiment file: its keys checked against the
    allow-list (before anything it names is imported or read), then checked as ``socialsim
    run`` checks a file; ``games``: env id -> game, for the envs with seat pages. ``${VARIABLES}``
    are not expanded: the server's environment is not the host's to read."""
    table = parse(text)
    check_upload(table, list(games))
    experiment = config_module.resolve(table)
    return experiment, games[experiment.cells[0][1]["env"]["id"]]


def check_name(where: str, value: Any) -> str:
    """``value`` if it is a plain name (it names a directory under the results directory)."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        raise ConfigError(
            f"{where}: a plain name (letters, digits, _ . -, at most 64 characters, no '..'), "
            f"got {shown(value)}"
        )
    return value


def check_seed(where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise ConfigError(f"{where}: an integer from 0 to {MAX_SEED}, got {shown(value)}")
    return value


def check_upload(table: Mapping[str, Any], env_ids: Collection[str]) -> None:
    """Refuse ``table`` unless every key is on the allow-list (the module docstring), every
    value plain and within its cap; ``env_ids``: the envs that have a seat page."""
    _keys("upload: ", table, TOP_KEYS)
    check_name("upload: name", table.get("name"))
    description = table.get("description", "")
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        raise ConfigError(f"upload: description: a text of at most {MAX_DESCRIPTION} characters")
    grid = table.get("grid", {})
    if not isinstance(grid, dict):
        raise ConfigError("upload: grid: a table of dotted paths to lists of values")
    cells = 1
    for axis, values in grid.items():
        head = axis.split(".")[0]
        if head not in TOP_KEYS or head in ("name", "description", "grid"):
            raise ConfigError(
                f"upload: grid.{axis}: not allowed in an upload; a grid path starts with one "
                "of: episodes, seed, env, seats"
            )
        if not isinstance(values, list) or not values:
            raise ConfigError(f"upload: grid.{axis}: a non-empty list of values")
        cells *= len(values)
    if cells > MAX_CELLS:
        raise ConfigError(f"upload: grid: {cells} cells; at most {MAX_CELLS} in an upload")
    base = {k: v for k, v in table.items() if k != "grid"}
    envs: dict[str, int] = {}  # each distinct env's players
    for combo in itertools.product(*grid.values()):
        cell = copy.deepcopy(base)
        for axis, value in zip(grid, combo, strict=True):
            _set(cell, axis.split("."), value)
        where = "upload: " + (f"grid cell {dict(zip(grid, combo, strict=True))}: " if grid else "")
        _check_cell(where, cell, env_ids, envs)
    total = sum(BYTES_PER_PAIR * n * n for n in envs.values())
    if total > MAX_CHECK_BYTES:
        raise ConfigError(
            f"upload: env.kwargs: about {total // 2**20} MB to build its envs (players "
            f"{sorted(envs.values())}); at most {MAX_CHECK_BYTES // 2**20} MB in an upload"
        )


def _check_cell(
    where: str, cell: Mapping[str, Any], env_ids: Collection[str], envs: dict[str, int]
) -> None:
    _keys(where, cell, TOP_KEYS)
    if "episodes" in cell:
        episodes = cell["episodes"]
        if isinstance(episodes, bool) or not isinstance(episodes, int):
            raise ConfigError(f"{where}episodes: an integer, got {shown(episodes)}")
        if not 1 <= episodes <= MAX_EPISODES:
            raise ConfigError(
                f"{where}episodes: from 1 to {MAX_EPISODES} in an upload (a browser session "
                f"plays one), got {episodes}"
            )
    if "seed" in cell:
        check_seed(f"{where}seed", cell["seed"])
    env = cell.get("env")
    if not isinstance(env, dict):
        raise ConfigError(f"{where}env: a table with the env's id")
    _keys(f"{where}env.", env, ENV_KEYS)
    env_id = env.get("id")
    if env_id not in env_ids:
        raise ConfigError(
            f"{where}env.id: {shown(env_id)} has no seat page; allowed: {', '.join(env_ids)}"
        )
    if env.get("form", "parallel") not in registry.FORMS:
        raise ConfigError(f"{where}env.form: allowed: {', '.join(registry.FORMS)}")
    kwargs = env.get("kwargs", {})
    if not isinstance(kwargs, dict):
        raise ConfigError(f"{where}env.kwargs: a table of the env's keywords")
    raw_env = registry.env_module(env_id).raw_env
    _plain_values(f"{where}env.kwargs.", kwargs, plain_parameters(raw_env))
    players = _players(raw_env, kwargs)
    envs[f"{env_id}:{sorted(kwargs.items())}"] = players
    pairs, seconds = game_size(raw_env, kwargs)
    if seconds > MAX_GAME_SECONDS:
        raise ConfigError(
            f"{where}env.kwargs: a game of {players} players and {pairs} pairings is about "
            f"{seconds:.0f} s of the server's time; at most {MAX_GAME_SECONDS:g} s in an upload "
            '(fewer players or rounds, or schedule = "random")'
        )
    seats = cell.get("seats")
    if not isinstance(seats, dict) or not seats:
        raise ConfigError(f"{where}seats: a table of seats, each with a 'kind'")
    kinds = registry.agent_kinds()
    for seat, spec in seats.items():
        if not _SEAT.fullmatch(seat):
            raise ConfigError(f"{where}seats: a seat's name, got {shown(seat)}")
        at = f"{where}seats.{seat}"
        if not isinstance(spec, dict):
            raise ConfigError(f"{at}: a table with a 'kind'")
        kind = spec.get("kind")
        if seat != DEFAULT_SEAT and "kind" not in spec and isinstance(seats.get("*"), dict):
            kind = seats[DEFAULT_SEAT].get("kind")  # a named seat filled from the default
        if not isinstance(kind, str) or kind not in kinds:
            raise ConfigError(
                f"{at}.kind: {shown(kind)} is not an agent kind the server offers"
                f"{registry.nearest(kind, kinds) if isinstance(kind, str) else ''}; allowed: "
                f"{', '.join(sorted(kinds))} (never package.module:Class in an upload)"
            )
        allowed = plain_parameters(registry.agent_class(kind))
        _plain_values(f"{at}.", {k: v for k, v in spec.items() if k != "kind"}, allowed)


@cache
def plain_parameters(target) -> dict[str, tuple[type, ...]]:
    """name -> the types an upload may give, for each keyword of ``target`` that takes a plain
    value (a boolean, a number, a text) and names nothing of the server's (:data:`REFUSED`)."""
    source = getattr(target, "parallel_class", target)  # a shim's raw_env shows its arguments
    function = source.__init__ if inspect.isclass(source) else source
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - a keyword we cannot read is not offered
        return {}
    out = {}
    for name in inspect.signature(target).parameters:
        types = _PLAIN_HINTS.get(hints.get(name))
        if types is not None and name not in REFUSED:
            out[name] = types
    return out


def game_size(raw_env, kwargs: Mapping[str, Any]) -> tuple[int, float]:
    """``(pairings, seconds)``: an upper bound on the pairings one game of the env plays (a
    session plays one episode, whatever ``episodes`` says) and on the server's time it takes:
    :data:`SECONDS_PER_TELLING` per pairing and player (each pairing's gossip reaches every
    player) and, unless the schedule is random, the search for the reference's order, which
    tries every pair at every step (:data:`SECONDS_PER_SEARCH_STEP` per pair squared, whatever
    ``rounds`` says). Its rounds: ``rounds`` (``max_turns``) or its default; unset, every pair
    once. A round pairs one pair, or as many as fit (``players // 2``) in a random schedule."""
    players = max(_players(raw_env, kwargs), 1)
    defaults = {n: p.default for n, p in inspect.signature(raw_env).parameters.items()}
    rounds = next(
        (
            v
            for k in ("rounds", "max_turns")
            if isinstance(v := kwargs.get(k, defaults.get(k)), int)
        ),
        None,
    )
    schedule = kwargs.get("schedule") or ("random" if kwargs.get("entrant") == "joins" else None)
    if schedule == "random":
        rounds = rounds if rounds is not None else default_random_rounds(players)
        per_round = max(players // 2, 1)
        given = kwargs.get("pairs_per_round")
        if isinstance(given, int) and not isinstance(given, bool) and given > 0:
            per_round = min(given, per_round)
    every_pair = players * (players - 1) // 2
    search = 0.0
    if schedule != "random":
        per_round = 1
        rounds = rounds if rounds is not None else every_pair
        search = every_pair**2 * SECONDS_PER_SEARCH_STEP
    pairs = max(rounds, 1) * per_round
    return pairs, players * pairs * SECONDS_PER_TELLING + search


def _players(raw_env, kwargs: Mapping[str, Any]) -> int:
    """The players an env holds: the sum of its ``n_*`` keywords (with their defaults)."""
    total = 0
    for name, parameter in inspect.signature(raw_env).parameters.items():
        value = kwargs.get(name, parameter.default)
        if name.startswith("n_") and isinstance(value, int) and not isinstance(value, bool):
            total += max(value, 0)
    return total


def _keys(where: str, table: Mapping[str, Any], allowed: Collection[str]) -> None:
    for key, value in table.items():
        _refuse_key(where, key, allowed, value)


def _refuse_key(where: str, key: Any, allowed: Collection[str], value: Any = None) -> None:
    if key in allowed:
        return
    if key in REFUSED:
        inner = [k for k in value if k in REFUSED and k != key] if isinstance(value, dict) else []
        named = f"{key} ({', '.join(f'{key}.{k}' for k in inner)})" if inner else key
        raise ConfigError(
            f"{where}{named}: not allowed in an uploaded experiment (it names {REFUSED[key]}; "
            f"only the server's operator sets it); allowed here: {', '.join(allowed) or '(none)'}"
        )
    raise ConfigError(
        f"{where}{shown(key)}: not allowed in an uploaded experiment; allowed here: "
        f"{', '.join(allowed) or '(none)'}"
    )


def _plain_values(
    where: str, values: Mapping[str, Any], allowed: Mapping[str, tuple[type, ...]]
) -> None:
    for key, value in values.items():
        _refuse_key(where, key, allowed, value)
        types = allowed[key]
        ok = isinstance(value, types) and (bool in types or not isinstance(value, bool))
        if isinstance(value, int | float) and not isinstance(value, bool):
            ok = ok and math.isfinite(value) and abs(value) <= MAX_NUMBER
        if not ok:
            words = {bool: "true or false", int: "an integer", float: "a number", str: "a text"}
            expected = " or ".join(words[t] for t in types if not (t is int and float in types))
            if isinstance(value, int | float) and not isinstance(value, bool):
                expected += f" from -{MAX_NUMBER} to {MAX_NUMBER}"
            raise ConfigError(f"{where}{key}: expected {expected}, got {shown(value)}")
        if isinstance(value, str):
            _plain_text(f"{where}{key}", value)


def _plain_text(where: str, value: str) -> None:
    if len(value) > MAX_TEXT or any(c in value for c in _NOT_PLAIN) or value[:1] in ("~", "."):
        raise ConfigError(
            f"{where}: a plain text (at most {MAX_TEXT} characters; no path, address or "
            f"module: no / \\ : or a leading ~ or .), got {shown(value)}"
        )


def _set(table: dict[str, Any], keys: list[str], value: Any) -> None:
    for key in keys[:-1]:
        table = table.setdefault(key, {})
        if not isinstance(table, dict):
            raise ConfigError(f"upload: grid.{'.'.join(keys)}: {key} is not a table")
    table[keys[-1]] = value


def shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = [
    "MAX_CELLS",
    "MAX_EPISODES",
    "MAX_SEED",
    "check_name",
    "check_seed",
    "check_upload",
    "parse",
    "read",
    "shown",
]
