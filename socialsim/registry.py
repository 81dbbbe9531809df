"""Where env ids, agent kinds and probes are found.

Each game family and each agent family owns its own module and declares what it offers in a
module-level table; this file only lists the modules, so that families never edit a shared table.

* An env id ``NAME`` is the module ``socialsim.envs.NAME`` exposing ``env()``, ``parallel_env()``
  and ``raw_env`` (the PettingZoo convention).
* An agent module declares ``KINDS = {"kind_name": "module:Class", ...}``.
* A probe module declares ``PROBES = {"probe_name": "module:Class", ...}``.

A listed module whose package is not installed is skipped; a module that is there but fails to
import is an error. A new family adds its module to the list when it lands.

Installed packages add their own through entry points, listed by ``socialsim list`` and usable
by name in an experiment, beside the ``"package.module:Class"`` form::

    [project.entry-points."socialsim.agents"]
    tit_for_tat = "mypkg.agents:TitForTat"      # kind name -> an Agent subclass
    [project.entry-points."socialsim.envs"]
    my_game_v0 = "mypkg.my_game_v0"             # env id -> a module exposing env, parallel_env, raw_env

**Which kinds fit which env.** An env's *family* is the package of its Parallel class under
``socialsim.envs`` (``gossip``, ``decrypto``, ``pennies``), or its ``metadata["family"]``. An
agent class declares ``plays`` (family -> decisions); a family whose protocol publishes
``DECISION_OF`` (seat -> its decision, as Decrypto's does) has each seat's decision checked too,
and a class that declares ``only_seats`` is refused any other seat.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import typing
from collections.abc import Mapping
from functools import cache
from importlib import metadata
from typing import Any

ENV_IDS = (
    "matching_pennies_v0",
    "donation_v0",
    "prisoners_v0",
    "trust_v0",
    "market_v0",
    "decrypto_v0",
    "culture_v0",
)

AGENT_MODULES = (
    "socialsim.agents.scripted.pennies",
    "socialsim.agents.scripted.gossip",
    "socialsim.agents.scripted.distilled",
    "socialsim.agents.scripted.gossip_tom",
    "socialsim.agents.scripted.proxies",
    "socialsim.agents.scripted.culture",
    "socialsim.agents.scripted.decrypto",
    "socialsim.agents.scripted.decrypto_tricks",
    "socialsim.agents.embedding",
    "socialsim.agents.llm",
    "socialsim.agents.rl",
    "socialsim.agents.human",
)

PROBE_MODULES = ("socialsim.envs.decrypto.tom", "socialsim.envs.gossip.tom")

FORMS = ("parallel", "aec")


def nearest(name: str, names) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``names``, or ``""``."""
    close = difflib.get_close_matches(name, list(names), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def _import_optional(module: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name and (module == error.name or module.startswith(error.name + ".")):
            return None
        raise


def _load(target: str):
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


AGENT_GROUP = "socialsim.agents"
ENV_GROUP = "socialsim.envs"


@cache
def entry_point_table(group: str) -> dict[str, str]:
    """name -> target of the installed packages' entry points of ``group``."""
    return {point.name: point.value for point in metadata.entry_points(group=group)}


# -- envs -----------------------------------------------------------------------------------------


def env_ids() -> list[str]:
    """The env ids that are installed: the bundled ones, then those of entry points."""
    bundled = [name for name in ENV_IDS if _import_optional(f"socialsim.envs.{name}") is not None]
    return bundled + [name for name in entry_point_table(ENV_GROUP) if name not in ENV_IDS]


def env_module(env_id: str):
    """The shim module of ``env_id``: a bundled id, or a user's module by its import path
    (``"mypkg.my_env_v0"`` or ``"mypkg:my_env_v0"``) exposing ``env``, ``parallel_env`` and
    ``raw_env``."""
    if env_id not in ENV_IDS and env_id in entry_point_table(ENV_GROUP):
        return _user_env_module(entry_point_table(ENV_GROUP)[env_id])
    if env_id not in ENV_IDS and ("." in env_id or ":" in env_id):
        return _user_env_module(env_id)
    if env_id not in ENV_IDS:
        known = [*ENV_IDS, *entry_point_table(ENV_GROUP)]
        raise ValueError(
            f"env.id: unknown env {env_id!r}{nearest(env_id, known)}; allowed: "
            f"{', '.join(known)}, or the import path "
            "of a module exposing env, parallel_env and raw_env (mypkg.my_env_v0)"
        )
    module = _import_optional(f"socialsim.envs.{env_id}")
    if module is None:
        raise ValueError(f"env.id: {env_id!r} is not installed; available: {', '.join(env_ids())}")
    return module


def _user_env_module(env_id: str):
    path = env_id.replace(":", ".")
    module = _import_user(f"env.id: {env_id!r}", path)
    missing = [name for name in ("env", "parallel_env", "raw_env") if not hasattr(module, name)]
    if missing:
        raise ValueError(
            f"env.id: {env_id!r}: the module {path} lacks {', '.join(missing)}; an env module "
            "exposes env(), parallel_env() and raw_env, as PettingZoo's do"
        )
    return module


def _import_user(where: str, module: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        raise ValueError(
            f"{where}: cannot import {module} ({error}); put its package on PYTHONPATH or "
            "install it"
        ) from None


def check_kwargs(where: str, target, kwargs: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming any keyword ``target`` does not accept, and the allowed ones."""
    params = inspect.signature(target).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = [
        n
        for n, p in params.items()
        if p.kind is not inspect.Parameter.VAR_POSITIONAL and n != "self"
    ]
    required = [
        n
        for n, p in params.items()
        if n != "self"
        and p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    missing = [n for n in required if n not in kwargs]
    if missing:
        raise ValueError(
            f"{where}.{missing[0]}: required key missing; {target.__name__} needs "
            f"{', '.join(required)}"
        )
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        allowed_keys = (
            f"allowed keys: {', '.join(allowed)}" if allowed else f"{target.__name__} takes no keys"
        )
        raise ValueError(
            f"{where}: unknown key {unknown[0]!r}{nearest(unknown[0], allowed)}; {allowed_keys}"
        )
    hints = _type_hints(target)
    for name, value in kwargs.items():
        allowed_types = _PLAIN_TYPES.get(hints.get(name))
        if allowed_types is not None and not _is_instance(value, allowed_types):
            raise ValueError(
                f"{where}.{name}: expected {_describe(allowed_types)}, got {value!r} "
                f"({type(value).__name__})"
            )


# The annotations a keyword's value is checked against (others are left to the target itself).
_PLAIN_TYPES: dict[Any, tuple[type, ...]] = {
    bool: (bool,),
    int: (int,),
    float: (int, float),
    str: (str,),
    bool | None: (bool, type(None)),
    int | None: (int, type(None)),
    float | None: (int, float, type(None)),
    str | None: (str, type(None)),
}
_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _type_hints(target) -> dict[str, Any]:
    function = target.__init__ if inspect.isclass(target) else target
    try:
        return typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - an annotation we cannot evaluate is simply not checked
        return {}


def _is_instance(value: Any, types: tuple[type, ...]) -> bool:
    if isinstance(value, bool) and bool not in types:
        return False
    return isinstance(value, types)


def _describe(types: tuple[type, ...]) -> str:
    words = [
        _TYPE_WORDS[t] for t in types if t in _TYPE_WORDS and not (t is int and float in types)
    ]
    return " or ".join(words + (["none"] if type(None) in types else []))


def make_env(env_id: str, form: str = "parallel", **kwargs: Any):
    """Build a PettingZoo env by id, in ``form`` 'parallel' or 'aec'."""
    if form not in FORMS:
        raise ValueError(f"env.form: {form!r} is not allowed; allowed: {', '.join(FORMS)}")
    module = env_module(env_id)
    check_kwargs("env.kwargs", module.raw_env, kwargs)
    return module.parallel_env(**kwargs) if form == "parallel" else module.env(**kwargs)


# -- agents ---------------------------------------------------------------------------------------


@cache
def agent_kinds() -> dict[str, str]:
    """kind name -> 'module:Class' for every installed agent family."""
    kinds: dict[str, str] = {}
    for module_name in AGENT_MODULES:
        module = _import_optional(module_name)
        for kind, target in getattr(module, "KINDS", {}).items():
            if kind in kinds:
                raise RuntimeError(
                    f"agent kind {kind!r} is declared by both {kinds[kind]} and {target}"
                )
            kinds[kind] = target
    for kind, target in entry_point_table(AGENT_GROUP).items():
        if kind in kinds:
            raise RuntimeError(
                f"agent kind {kind!r} is declared by both {kinds[kind]} and the entry point "
                f"{target} (group {AGENT_GROUP})"
            )
        kinds[kind] = target
    return kinds


def agent_class(kind: str):
    """The class of an agent kind: a name ``socialsim list`` shows, or ``"package.module:Class"``
    naming any :class:`~socialsim.agent.Agent` subclass importable from ``sys.path``."""
    if ":" in kind:
        return _user_agent_class(kind)
    kinds = agent_kinds()
    if kind not in kinds:
        raise ValueError(
            f"kind: unknown agent kind {kind!r}{nearest(kind, kinds)}; allowed: "
            f"{', '.join(sorted(kinds))}, or "
            "package.module:Class"
        )
    target = kinds[kind]
    cls = _load(target) if kind not in entry_point_table(AGENT_GROUP) else _user_agent_class(target)
    cls.kind = kind
    return cls


def _user_agent_class(kind: str):
    from socialsim.agent import Agent

    module_name, _, name = kind.partition(":")
    module = _import_user(f"kind: {kind!r}", module_name)
    cls = getattr(module, name, None)
    if not (inspect.isclass(cls) and issubclass(cls, Agent)):
        found = sorted(
            n
            for n, v in vars(module).items()
            if inspect.isclass(v) and issubclass(v, Agent) and v is not Agent
        )
        found_text = ", ".join(found) or "(none)"
        if cls is None:
            problem = f"{module_name} has no {name}"
        else:
            problem = f"{module_name}.{name} is not a subclass of socialsim.agent.Agent"
        raise ValueError(f"kind: {kind!r}: {problem}; its Agent subclasses: {found_text}")
    if "kind" not in vars(cls):  # a subclass of a registered kind keeps its own name otherwise
        cls.kind = kind
    return cls


def check_agent_spec(where: str, spec: Mapping[str, Any]) -> None:
    if not isinstance(spec, Mapping) or "kind" not in spec:
        raise ValueError(f"{where}: an agent spec is a table with a 'kind' key, got {spec!r}")
    params = {k: v for k, v in spec.items() if k != "kind"}
    try:
        cls = agent_class(spec["kind"])
    except ValueError as error:  # "kind: ..." -> "seats.X.kind: ..."
        raise ValueError(f"{where}.{error}") from None
    check_kwargs(where, cls, params)


# -- which kinds fit which env ---------------------------------------------------------------


def env_family(env_id: str) -> str | None:
    """The family of ``env_id`` (see the module docstring), ``None`` if it has none."""
    raw = env_module(env_id).raw_env
    family = (getattr(raw, "metadata", None) or {}).get("family")
    if family:
        return str(family)
    parts = getattr(raw, "parallel_class", raw).__module__.split(".")
    return parts[2] if parts[:2] == ["socialsim", "envs"] and len(parts) > 3 else None


def seat_decision(family: str, seat: str) -> str | None:
    """The one decision ``seat`` makes, when the family's protocol says (``DECISION_OF``)."""
    protocol = _import_optional(f"socialsim.envs.{family}.protocol")
    return getattr(protocol, "DECISION_OF", {}).get(seat)


def fit_problem(cls, family: str | None, seat: str) -> str | None:
    """Why an agent of class ``cls`` cannot play ``seat`` of an env of ``family``, or ``None``
    when it can (or declares nothing)."""
    plays = getattr(cls, "plays", None)
    if plays is None or family is None:
        return None
    if family not in plays:
        return f"it plays {' and '.join(sorted(plays)) or 'no'} games, not {family} games"
    decisions = plays[family]
    only = getattr(cls, "only_seats", None)
    if only is not None and seat not in only:
        return f"it plays only seat {' and '.join(only)}: it reads what that seat alone is shown"
    due = seat_decision(family, seat)
    if due is not None and "*" not in decisions and due not in decisions:
        return (
            f"seat {seat} makes {due!r} decisions and it makes only {', '.join(sorted(decisions))}"
        )
    return None


def kinds_that_fit(env_id: str, seat: str | None = None) -> list[str]:
    """The agent kinds that declare they play ``env_id`` (at ``seat``, if given)."""
    family = env_family(env_id)
    fits = []
    for kind in sorted(agent_kinds()):
        try:
            cls = agent_class(kind)
        except ImportError:  # an optional extra that is not installed
            continue
        plays = getattr(cls, "plays", None)
        if plays is None or family not in plays:
            continue
        if seat is None or fit_problem(cls, family, seat) is None:
            fits.append(kind)
    return fits


def check_fit(where: str, spec: Mapping[str, Any], env_id: str, seat: str) -> None:
    """Raise ``ValueError`` naming the seat, its kind and the kinds that fit, if the agent of
    ``spec`` cannot play ``seat`` of ``env_id``."""
    family = env_family(env_id)
    problem = fit_problem(agent_class(spec["kind"]), family, seat)
    if problem is not None:
        fitting = ", ".join(kinds_that_fit(env_id, seat)) or "(none installed)"
        raise ValueError(
            f"{where}.kind: {spec['kind']!r} cannot play seat {seat} of {env_id}: {problem}; "
            f"kinds that fit: {fitting}"
        )


#: seat-spec keys that are not the agent's: its ``kind``, and the ``parent`` an evolution
#: experiment records for each seat (socialsim.society.experiment)
NOT_PARAMS = ("kind", "parent")


def build_agent(spec: Mapping[str, Any]):
    params = {k: v for k, v in spec.items() if k not in NOT_PARAMS}
    return agent_class(spec["kind"])(**params)


# -- probes ---------------------------------------------------------------------------------------


@cache
def probe_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for module_name in PROBE_MODULES:
        table.update(getattr(_import_optional(module_name), "PROBES", {}))
    return table


def make_probe(name: str, **kwargs: Any):
    table = probe_table()
    if name not in table:
        raise ValueError(
            f"probes: unknown probe {name!r}; allowed: {', '.join(sorted(table)) or '(none installed)'}"
        )
    return _load(table[name])(**kwargs)
