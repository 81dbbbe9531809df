"""A distilled strategy: conditional probability tables over the cues of
:mod:`socialsim.envs.gossip.cues`, and the file that holds them.

Why tables and not a logistic model: each decision has two binary cues, so a table has four
cells a decision, each read on its own (its count shows when it is sparse), and a table
represents every norm exactly. Stern judging's gossip is an exclusive-or of the move and the
recipient's standing (praise helping the good and refusing the bad), which no logistic model
on the two cues can express; a table recovers it, and distilling a scripted population gives
back its norm.

Probabilities are the counts shrunk towards the strategy's overall shares of that decision
by ``alpha`` pseudo-decisions per choice (``alpha`` = 0.5 by default, the Jeffreys weight):
``P(help | cell) = (helped + 2 alpha p) / (n + 2 alpha)``, ``p`` the strategy's overall
(add-``alpha``) rate of help; a tone's valence alike with ``3 alpha``. A cell never seen plays
the strategy's overall shares, not a coin: an always-defector that never met a bad recipient
still refuses one. ``alpha = 0`` plays the observed frequencies.

A strategy may also condition on extra cues (``socialsim distill --cues base,round``: stock,
round, last experience, :data:`socialsim.envs.gossip.cues.EXTRA`). Its tables then have an
axis per extra cue after the two base ones, and each cell is shrunk the same way towards its
base cell's probabilities (the counts summed over the extra cues, smoothed as above) instead
of the overall shares: a cell never seen plays what the base cues alone say. Summed over the
extra cues, the counts are those of the base-cue strategy of the same decisions
(:meth:`Strategy.marginal`), which is what the numpy society plays.

The file (``socialsim distill --out FILE``, read by the ``distilled`` seat kind) is JSON::

    {"format": "socialsim-distilled", "version": 1, "smoothing": 0.5, "source": {...},
     "strategies": {NAME: {"donate": [[[refused, helped], ...]...], "gossip": [...],
                           "fidelity": {...}}}}

``donate[bad_image][bad_standing]`` = [refused, helped]; ``gossip[helped][own_bad_standing]``
= counts of the valences good, neutral, bad. The counts are the model; probabilities are
computed from them when the file is read. A file with a strategy over extra cues is version 2
and names them (``"cues": ["base", "round"]``, the tables ``[cue, cue, third, choice]``); a
base-cue file stays version 1, as before.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from socialsim.envs.gossip.cues import DONATE, VALENCES, check_cues, cue_columns, cue_shape

FORMAT, VERSION = "socialsim-distilled", 1
#: the version of a file with a strategy over extra cues (read alike)
VERSION_EXTRA = 2
#: the largest policy file read (a strategy's tables are a few hundred bytes)
MAX_BYTES = 1 << 20


@dataclass
class Strategy:
    """The counts of one strategy's decisions by cell, and how they are smoothed; ``extras``
    the extra cues its tables condition on besides the base ones (none: the society plays it)."""

    name: str
    donate: np.ndarray | None = None
    gossip: np.ndarray | None = None
    smoothing: float = 0.5
    fidelity: dict[str, Any] = field(default_factory=dict)
    extras: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.extras = check_cues(self.extras)
        shape = cue_shape(self.extras)
        if self.donate is None:
            self.donate = np.zeros((*shape, 2), dtype=np.int64)
        if self.gossip is None:
            self.gossip = np.zeros((*shape, 3), dtype=np.int64)
        self.columns = cue_columns(self.extras)

    @classmethod
    def fit(
        cls, name: str, decisions: Iterable[Any], smoothing: float = 0.5, extras: Any = ()
    ) -> Strategy:
        strategy = cls(name, smoothing=check_smoothing(smoothing), extras=extras)
        for d in decisions:
            table = strategy.donate if d.purpose == DONATE else strategy.gossip
            table[strategy.cell(d.full)][d.choice] += 1
        return strategy

    def cell(self, full: tuple[int, ...]) -> tuple[int, ...]:
        """The cell of a decision whose base then extra cues are ``full``."""
        return tuple(full[c] for c in self.columns)

    def help_probability(self) -> np.ndarray:
        """``P(help)`` by ``[bad_image, bad_standing, *extra cues]``."""
        return _smoothed(self.donate, self.smoothing)[..., 1]

    def valence_probability(self) -> np.ndarray:
        """``P(valence)`` by ``[helped, own_bad_standing, *extra cues]``, valences in
        ``VALENCES`` order."""
        return _smoothed(self.gossip, self.smoothing)

    def probabilities(self, purpose: int) -> np.ndarray:
        """The table of ``purpose``'s choice probabilities, ``[cue, cue, ..., choice]``."""
        return _smoothed(self.donate if purpose == DONATE else self.gossip, self.smoothing)

    def marginal(self) -> Strategy:
        """The strategy over the base cues only: the counts summed over the extra cues (the
        strategy ``socialsim distill --cues base`` fits to the same decisions)."""
        if not self.extras:
            return self
        axes = tuple(range(2, self.donate.ndim - 1))
        return Strategy(
            self.name, self.donate.sum(axis=axes), self.gossip.sum(axis=axes), self.smoothing,
            self.fidelity,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        entry = {
            "donate": self.donate.tolist(),
            "gossip": self.gossip.tolist(),
            "fidelity": self.fidelity,
        }
        if self.extras:
            entry["cues"] = ["base", *self.extras]
        return entry


def _smoothed(counts: np.ndarray, alpha: float) -> np.ndarray:
    """Counts ``[cue, cue, ..., choice]`` as probabilities, each cell shrunk by ``alpha``
    pseudo-decisions per choice towards a prior: ``(count + alpha k prior) / (n + alpha k)``.
    The prior of a base-cue table is its overall shares (add-``alpha``, even for an empty
    table), of a table with extra cues each cell's base cell (the counts summed over the extra
    cues, smoothed so). A cell never seen takes its prior; ``alpha`` 0 gives the observed
    frequencies."""
    k = counts.shape[-1]
    if counts.ndim > 3:
        extra = counts.ndim - 3
        base = _smoothed(counts.sum(axis=tuple(range(2, 2 + extra))), alpha)
        prior = base.reshape(2, 2, *([1] * extra), k)
    else:
        overall = counts.reshape(-1, k).sum(axis=0)
        total_all = overall.sum()
        if total_all + k * alpha > 0:
            prior = (overall + alpha) / (total_all + k * alpha)
        else:
            prior = np.full(k, 1.0 / k)
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        shrunk = (counts + alpha * k * prior) / (total + alpha * k)
    return np.where(total + alpha > 0, shrunk, np.broadcast_to(prior, counts.shape))


def check_smoothing(value: Any) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"smoothing: must be a finite number >= 0, got {value!r}")
    return float(value)


def save(
    path: str | os.PathLike, strategies: Mapping[str, Strategy], source: Mapping[str, Any]
) -> None:
    """Write the policy file whole or not at all (a temporary file renamed over ``path``)."""
    smoothing = {s.smoothing for s in strategies.values()}
    if len(smoothing) != 1:
        raise ValueError("smoothing: the strategies of one file share one smoothing")
    extra = any(s.extras for s in strategies.values())
    data = {
        "format": FORMAT,
        "version": VERSION_EXTRA if extra else VERSION,
        "model": "conditional probability tables over the cues of socialsim.envs.gossip.cues",
        "valences": list(VALENCES),
        "smoothing": smoothing.pop(),
        "source": dict(source),
        "strategies": {name: s.to_json() for name, s in strategies.items()},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(data, out, indent=1, sort_keys=True)
            out.write("\n")
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load(path: str | os.PathLike) -> dict[str, Strategy]:
    """The strategies of a policy file, checked (a ``ValueError`` names the field)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ValueError(
                f"policy: {path} is {size} bytes; a policy file is at most {MAX_BYTES}"
            )
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"policy: no file {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"policy: cannot read {path} as a policy file ({error})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"policy: {path} is not a distilled strategy file (format {FORMAT!r})")
    version = data.get("version")
    if version not in (VERSION, VERSION_EXTRA):
        raise ValueError(
            f"policy.version: {version!r}; this socialsim reads {VERSION} and {VERSION_EXTRA}"
        )
    smoothing = check_smoothing(data.get("smoothing"))
    strategies = data.get("strategies")
    if not isinstance(strategies, dict) or not strategies:
        raise ValueError(f"policy.strategies: {path} names no strategy")
    return {
        str(name): _strategy(str(name), entry, smoothing, version)
        for name, entry in strategies.items()
    }


def _strategy(name: str, entry: Any, smoothing: float, version: int) -> Strategy:
    extras = ()
    if isinstance(entry, dict) and "cues" in entry:
        where = f"policy.strategies.{name}.cues"
        cues = entry["cues"]
        if not isinstance(cues, list) or not all(isinstance(c, str) for c in cues):
            raise ValueError(f"{where}: must be a list of cue names, got {cues!r}")
        extras = check_cues(cues, where)
        if extras and version != VERSION_EXTRA:
            raise ValueError(f"{where}: extra cues need policy version {VERSION_EXTRA}")
    shape = cue_shape(extras)
    return Strategy(
        name,
        _counts(entry, "donate", (*shape, 2), name),
        _counts(entry, "gossip", (*shape, 3), name),
        smoothing,
        entry.get("fidelity", {}) if isinstance(entry, dict) else {},
        extras,
    )


def _counts(entry: Any, key: str, shape: tuple[int, ...], name: str) -> np.ndarray:
    where = f"policy.strategies.{name}.{key}"
    if not isinstance(entry, dict) or key not in entry:
        raise ValueError(f"{where}: missing")
    try:
        counts = np.asarray(entry[key])
    except ValueError:
        counts = None
    if (
        counts is None
        or counts.shape != shape
        or counts.dtype.kind not in "iu"
        or (counts < 0).any()
    ):
        raise ValueError(f"{where}: must be counts (integers >= 0) of shape {list(shape)}")
    return counts.astype(np.int64)


def pick(strategies: Mapping[str, Strategy], name: str | None, path: Any) -> Strategy:
    """The strategy ``name`` of a file, or its only one."""
    if name is None:
        if len(strategies) != 1:
            raise ValueError(
                f"name: {path} holds {len(strategies)} strategies; name one of "
                f"{', '.join(sorted(strategies))}"
            )
        return next(iter(strategies.values()))
    if name not in strategies:
        raise ValueError(
            f"name: {name!r} is not in {path}; allowed: {', '.join(sorted(strategies))}"
        )
    return strategies[name]
