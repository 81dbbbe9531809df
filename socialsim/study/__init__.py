"""Study files: a human study of socialsim games, in TOML, read and checked by :func:`load`.

A study says which experiment people play, which of its seats are for people (the others keep
the experiment's agents: LLM, scripted or RL), the agent that takes a person's seat when nobody
comes in time or the person leaves (``filler``), how many games each participant plays, the
treatments and how arrivals are assigned to them, the pages people read (Markdown files beside
the study file), the comprehension quiz, the payment rule, the completion code and the panel's
participant-id parameter. ``socialsim serve --study FILE`` runs it (:mod:`socialsim.web.lobby`),
``socialsim study-test FILE`` tries it with simulated participants.

.. code-block:: toml

    name = "donation_study"           # names the results folder and the export
    experiment = "game.toml"          # beside this file, or a bundled experiment's name
    people = ["agent_0", "agent_1"]   # the seats people play: a game waits for this many
    filler = { kind = "image_scoring" }   # takes a seat nobody fills or a person leaves
    games = 1                         # games each participant plays
    assignment = "balanced"           # or "arrival" (in turn) or "random" (seeded)
    seed = 0                          # game seeds and the "random" assignment
    wait_seconds = 120                # the lobby's wait cap, then the filler fills the seats
    idle_seconds = 90                 # a person silent this long at a move: the filler takes over
    max_quiz_attempts = 3             # 0: no limit; past it the participant is not admitted
    arrivals_per_minute = 20          # arrivals from one address in a minute (0: no limit)

    [[treatments]]                    # listed; each may name its own experiment and --set keys
    name = "llm"
    experiment = "game_llm.toml"
    [[treatments]]
    name = "scripted"
    set = ["seats.*.kind=image_scoring"]

    # ... or crossed (instead of the list): every combination of the values is a treatment
    # [treatments.cross]
    # experiment = ["game_llm.toml", "game_scripted.toml"]   # experiments, as above
    # "env.kwargs.rounds" = [4, 6]                             # any experiment key, as --set
    # gives game_llm-rounds_4, game_llm-rounds_6, game_scripted-rounds_4, game_scripted-rounds_6
    # (each value named after its key's last part; the experiment after its file)

    [pages]                           # Markdown files beside this file (raw HTML is not shown)
    consent = "consent.md"
    instructions = "instructions.md"

    [[quiz]]
    question = "What does giving cost you?"
    choices = ["nothing", "the amount given"]
    answer = "the amount given"

    [payment]                         # show_up + points x per_point, at most cap
    show_up = 2.0
    per_point = 0.05
    cap = 6.0
    currency = "GBP"

    [completion]
    code = "C1A2B3"                   # shown at the end
    redirect = "https://panel.example/submissions/complete?cc=C1A2B3"   # optional

    [panel]
    id_parameter = "PROLIFIC_PID"     # the link's parameter carrying the panel's participant id

Every key is checked; an error names the field, the value and what is allowed
(:class:`~socialsim.config.ConfigError`, exit 2).
"""

from __future__ import annotations

import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from socialsim.config.schema import ConfigError, check_keys, check_type

ASSIGNMENTS = ("balanced", "arrival", "random")
TOP_KEYS = {
    "name": str,
    "description": str,
    "experiment": str,
    "people": list,
    "filler": dict,
    "games": int,
    "assignment": str,
    "seed": int,
    "wait_seconds": float,
    "idle_seconds": float,
    "max_quiz_attempts": int,
    "arrivals_per_minute": int,
    "treatments": object,  # a list of [[treatments]], or a table with a cross
    "pages": dict,
    "quiz": list,
    "payment": dict,
    "completion": dict,
    "panel": dict,
}
REQUIRED = ("name", "experiment", "people", "filler", "payment", "completion")
TREATMENT_KEYS = {"name": str, "experiment": str, "set": list}
CROSS_KEYS = {"cross": dict}
PAGE_KEYS = {"consent": str, "instructions": str}
QUIZ_KEYS = {"question": str, "choices": list, "answer": str}
PAYMENT_KEYS = {"show_up": float, "per_point": float, "cap": float, "currency": str}
COMPLETION_KEYS = {"code": str, "redirect": str}
PANEL_KEYS = {"id_parameter": str}
PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: a panel's participant id, as carried into the data (anything else is refused at arrival)
PANEL_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
PAGE_BYTES = 64 * 1024


@dataclass(frozen=True)
class Treatment:
    """One arm: the experiment people play in it, and the ``--set`` keys applied to it."""

    name: str
    experiment: str
    overrides: tuple[str, ...] = ()
    #: a crossed treatment's values, key by key (``experiment`` first if crossed): the factors
    #: its games are told apart by in the study's results (:mod:`socialsim.web.study_record`)
    factors: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class Question:
    question: str
    choices: tuple[str, ...]
    answer: str


@dataclass(frozen=True)
class Payment:
    """``show_up + points * per_point``, at most ``cap`` (and never below the show-up fee)."""

    show_up: float
    per_point: float
    cap: float
    currency: str = ""

    def amount(self, points: float) -> float:
        return round(min(self.cap, self.show_up + max(points, 0.0) * self.per_point), 2)


@dataclass(frozen=True)
class Study:
    """A checked study file (:func:`load`); ``folder`` holds its pages and experiments."""

    name: str
    description: str
    folder: Path
    people: tuple[str, ...]
    filler: Mapping[str, Any]
    games: int
    assignment: str
    seed: int
    wait_seconds: float
    idle_seconds: float
    max_quiz_attempts: int
    treatments: tuple[Treatment, ...]
    pages: Mapping[str, str]  # page -> its Markdown text
    quiz: tuple[Question, ...]
    payment: Payment
    code: str
    redirect: str
    id_parameter: str
    #: arrivals the public link takes from one client address in any minute (0: no limit)
    arrivals_per_minute: int = 20


def _number(where: str, value: Any, low: float, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: expected a number, got {value!r}")
    if value < low or (strict and value == low):
        relation = ">" if strict else ">="
        raise ConfigError(f"{where}: expected a number {relation} {low:g}, got {value!r}")
    return float(value)


def _keys(where: str, table: Mapping[str, Any], allowed: Mapping[str, type]) -> None:
    for key, value in table.items():
        if key not in allowed:
            check_keys(where, {key: value}, allowed)  # names the key and the allowed ones
        elif allowed[key] is float:  # a number may be written as an integer (show_up = 2)
            _number(f"{where}{key}", value, -math.inf)
        else:
            check_type(f"{where}{key}", value, allowed[key])


def _strings(where: str, value: Any, at_least: int = 0) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where}: expected a list of non-empty strings, got {value!r}")
    if len(value) < at_least:
        raise ConfigError(f"{where}: expected at least {at_least}, got {len(value)}")
    if len(set(value)) != len(value):
        raise ConfigError(f"{where}: {value!r} names one entry twice")
    return tuple(value)


def _file_beside(where: str, folder: Path, name: str) -> Path:
    """A plain file name inside the study's folder (no path: a study names no other files)."""
    if not PLAIN_NAME.fullmatch(name):
        raise ConfigError(
            f"{where}: {name!r} is not a plain file name; allowed: a file in the study's folder "
            "(letters, digits, '_', '-', '.')"
        )
    path = folder / name
    if not path.is_file():
        raise ConfigError(f"{where}: no file {name!r} in {folder}")
    return path


def _experiment(where: str, folder: Path, name: str) -> str:
    """A file beside the study (returned as its path), else a bundled experiment's name."""
    if PLAIN_NAME.fullmatch(name) and (folder / name).is_file():
        return str(folder / name)
    if "/" in name or "\\" in name:
        raise ConfigError(f"{where}: {name!r}: name a file in the study's folder, without a path")
    return name  # a bundled name: checked when the experiment is read


def load(path: str | Path) -> Study:
    """Read and check a study file (a :class:`ConfigError` naming the field on any fault)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"STUDY: no study file {str(path)!r}")
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return from_table(table, path.parent.resolve())


def from_table(table: Mapping[str, Any], folder: Path) -> Study:
    _keys("", table, TOP_KEYS)
    for key in REQUIRED:
        if key not in table:
            raise ConfigError(f"{key}: required; the study file must set {', '.join(REQUIRED)}")
    name = table["name"]
    if not PLAIN_NAME.fullmatch(name):
        raise ConfigError(f"name: {name!r} is not a plain name (letters, digits, '_', '-', '.')")
    experiment = _experiment("experiment", folder, table["experiment"])
    people = _strings("people", table["people"], at_least=1)
    filler = dict(table["filler"])
    if not isinstance(filler.get("kind"), str) or filler["kind"] == "human":
        raise ConfigError(
            f"filler.kind: the agent that takes a person's seat, got {filler.get('kind')!r}; "
            "allowed: any agent kind but human (socialsim list)"
        )
    games = table.get("games", 1)
    if games < 1:
        raise ConfigError(f"games: games each participant plays, >= 1, got {games}")
    assignment = table.get("assignment", "balanced")
    if assignment not in ASSIGNMENTS:
        raise ConfigError(f"assignment: {assignment!r}; allowed: {', '.join(ASSIGNMENTS)}")
    attempts = table.get("max_quiz_attempts", 3)
    if attempts < 0:
        raise ConfigError(f"max_quiz_attempts: >= 0 (0: no limit), got {attempts}")
    rate = table.get("arrivals_per_minute", 20)
    if rate < 0:
        raise ConfigError(
            f"arrivals_per_minute: arrivals from one address in a minute, >= 0 (0: no limit), "
            f"got {rate}"
        )
    return Study(
        name=name,
        description=table.get("description", ""),
        folder=folder,
        people=people,
        filler=filler,
        games=games,
        assignment=assignment,
        seed=table.get("seed", 0),
        wait_seconds=_number("wait_seconds", table.get("wait_seconds", 120), 0, strict=True),
        idle_seconds=_number("idle_seconds", table.get("idle_seconds", 90), 0, strict=True),
        max_quiz_attempts=attempts,
        treatments=_treatments(table.get("treatments"), folder, experiment),
        pages=_pages(table.get("pages", {}), folder),
        quiz=_quiz(table.get("quiz", [])),
        payment=_payment(table["payment"]),
        **_completion(table["completion"]),
        id_parameter=_panel(table.get("panel", {})),
        arrivals_per_minute=rate,
    )


def _tables(name: str, listed: list, allowed: Mapping[str, type]):
    """``(where, table)`` of each ``[[name]]`` table, its keys checked."""
    for i, entry in enumerate(listed):
        if not isinstance(entry, dict):
            raise ConfigError(f"{name}[{i}]: expected a table, got {entry!r}")
        _keys(f"{name}[{i}].", entry, allowed)
        yield f"{name}[{i}].", entry


def _treatments(listed: Any, folder: Path, experiment: str) -> tuple[Treatment, ...]:
    if listed is None:
        return (Treatment("main", experiment),)
    if isinstance(listed, dict):
        return crossed(listed, folder, experiment)
    if not isinstance(listed, list):
        raise ConfigError(
            f"treatments: expected [[treatments]] tables or a [treatments.cross] table, got {listed!r}"
        )
    if not listed:
        raise ConfigError("treatments: list at least one [[treatments]] table, or leave it out")
    out = []
    for where, entry in _tables("treatments", listed, TREATMENT_KEYS):
        if "name" not in entry or not PLAIN_NAME.fullmatch(entry["name"]):
            raise ConfigError(f"{where}name: required, a plain name, got {entry.get('name')!r}")
        source = _experiment(f"{where}experiment", folder, entry.get("experiment", experiment))
        overrides = _strings(f"{where}set", entry.get("set", []))
        for text in overrides:
            if "=" not in text:
                raise ConfigError(f"{where}set: {text!r}: expected path.to.key=value")
        out.append(Treatment(entry["name"], source, overrides))
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        raise ConfigError(f"treatments: a name is listed twice in {names}")
    return tuple(out)


def _axes(where: str, table: Mapping[str, Any]) -> dict[str, Any]:
    """The cross's keys as dotted paths (``env.kwargs.rounds = [...]`` and a quoted
    ``"env.kwargs.rounds" = [...]`` are one axis) -> their lists of values."""
    out = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_axes(f"{where}{key}.", value))
        else:
            out[f"{where}{key}"] = value
    return out


def _value_text(value: Any) -> str:
    """An axis value as a ``--set`` value (TOML)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else repr(value)


def _value_name(value: Any) -> str:
    text = _value_text(value).strip('"')
    return re.sub(r"[^A-Za-z0-9_.]+", "_", text).strip("_") or "empty"


def crossed(table: Mapping[str, Any], folder: Path, experiment: str) -> tuple[Treatment, ...]:
    """The treatments of ``[treatments.cross]``: every combination of its keys' values, in the
    order written (the last key varying fastest), each named after its values."""
    _keys("treatments.", table, CROSS_KEYS)
    if "cross" not in table:
        raise ConfigError("treatments.cross: required; a table of experiment keys and their values")
    axes = _axes("", table["cross"])
    if not axes:
        raise ConfigError("treatments.cross: name at least one key and its values to cross")
    lasts = [key.rsplit(".", 1)[-1] for key in axes]
    parts = []  # per axis: (label, [(value, --set text or the experiment, name part)])
    for key, values in axes.items():
        where = f"treatments.cross.{key}"
        scalar = (
            all(isinstance(v, str | int | float) for v in values)
            if isinstance(values, list)
            else False
        )
        if not scalar or not values:
            raise ConfigError(
                f"{where}: expected a list of values to cross (strings, numbers or booleans), "
                f"got {values!r}"
            )
        if len({_value_text(v) for v in values}) != len(values):
            raise ConfigError(f"{where}: {values!r} names one value twice")
        label = key.rsplit(".", 1)[-1] if lasts.count(key.rsplit(".", 1)[-1]) == 1 else key
        label = re.sub(r"[^A-Za-z0-9_]+", "_", label).strip("_")
        if key == "experiment":
            options = []
            for v in values:
                check_type(where, v, str)
                source = _experiment(where, folder, v)
                options.append((v, source, Path(v).stem))
        else:
            options = [(v, f"{key}={_value_text(v)}", f"{label}_{_value_name(v)}") for v in values]
        parts.append((key, options))
    out = []
    for combination in itertools.product(*(options for _, options in parts)):
        source, overrides, names, factors = experiment, [], [], []
        for (key, _), (value, setting, name) in zip(parts, combination, strict=True):
            factors.append((key, value))
            names.append(name)
            if key == "experiment":
                source = setting
            else:
                overrides.append(setting)
        name = "-".join(names)
        if not PLAIN_NAME.fullmatch(name):
            raise ConfigError(
                f"treatments.cross: the treatment {name!r} makes no plain name of at most 64 "
                "letters, digits, '_', '-' and '.'; cross fewer keys or shorter values"
            )
        out.append(Treatment(name, source, tuple(overrides), tuple(factors)))
    names = [t.name for t in out]
    if len(set(names)) != len(names):
        raise ConfigError(f"treatments.cross: two combinations share a name in {names}")
    return tuple(out)


def _pages(table: Any, folder: Path) -> dict[str, str]:
    check_type("pages", table, dict)
    _keys("pages.", table, PAGE_KEYS)
    pages = {}
    for page, name in table.items():
        path = _file_beside(f"pages.{page}", folder, name)
        data = path.read_bytes()
        if len(data) > PAGE_BYTES:
            raise ConfigError(f"pages.{page}: {name} is over {PAGE_BYTES} bytes")
        try:
            pages[page] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"pages.{page}: {name} is not UTF-8 text") from None
    return pages


def _quiz(listed: Any) -> tuple[Question, ...]:
    check_type("quiz", listed, list)
    out = []
    for where, entry in _tables("quiz", listed, QUIZ_KEYS):
        for key in QUIZ_KEYS:
            if key not in entry:
                raise ConfigError(f"{where}{key}: required ({', '.join(QUIZ_KEYS)})")
        choices = _strings(f"{where}choices", entry["choices"], at_least=2)
        if entry["answer"] not in choices:
            raise ConfigError(
                f"{where}answer: {entry['answer']!r} is not among the choices {list(choices)}"
            )
        out.append(Question(entry["question"], choices, entry["answer"]))
    return tuple(out)


def _payment(table: Mapping[str, Any]) -> Payment:
    _keys("payment.", table, PAYMENT_KEYS)
    show_up = _number("payment.show_up", table.get("show_up", 0.0), 0)
    per_point = _number("payment.per_point", table.get("per_point", 0.0), 0)
    cap = _number("payment.cap", table.get("cap", math.inf), 0)
    if cap < show_up:
        raise ConfigError(f"payment.cap: {cap:g} is below the show-up fee {show_up:g}")
    return Payment(show_up, per_point, cap, table.get("currency", ""))


def _completion(table: Mapping[str, Any]) -> dict[str, str]:
    _keys("completion.", table, COMPLETION_KEYS)
    if not table.get("code") and not table.get("redirect"):
        raise ConfigError("completion: give a code, a redirect URL, or both")
    redirect = table.get("redirect", "")
    if redirect and not re.fullmatch(r"https?://[^\s<>\"']+", redirect):
        raise ConfigError(f"completion.redirect: an http(s) URL, got {redirect!r}")
    return {"code": table.get("code", ""), "redirect": redirect}


def _panel(table: Mapping[str, Any]) -> str:
    _keys("panel.", table, PANEL_KEYS)
    parameter = table.get("id_parameter", "participant")
    if not PARAMETER.fullmatch(parameter):
        raise ConfigError(
            f"panel.id_parameter: {parameter!r}; allowed: letters, digits and '_' (e.g. PROLIFIC_PID)"
        )
    return parameter


def assign(study: Study, arrival: int, counts: Sequence[int], draw: float) -> int:
    """The treatment (its index) of the ``arrival``-th participant (from 0): ``balanced``, the
    one with the fewest participants (``counts``: all but those who left before their first
    game, who saw no treatment and are replaced; ties: the first listed);
    ``arrival``, in turn; ``random``, ``draw`` (uniform in [0, 1), from the study's seeded
    generator) picks one."""
    k = len(study.treatments)
    if study.assignment == "arrival":
        return arrival % k
    if study.assignment == "random":
        return min(int(draw * k), k - 1)
    return min(range(k), key=lambda i: (counts[i], i))


__all__ = ["ASSIGNMENTS", "PANEL_ID", "Payment", "Question", "Study", "Treatment", "assign", "load"]
