"""What a run of the contract checks reports: hard failures (:class:`Violation`) and warnings.

As gymnasium's env checker does, a broken rule is a failure and a doubtful point a warning
(:class:`ContractWarning`); unlike it, the failures of every check are collected, so that one
run lists all that is wrong (:class:`Findings` keeps the first failure of each check).
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

CHECKS = (
    "episode",
    "decisions",
    "masks",
    "forbidden_action",
    "malformed_action",
    "bus",
    "seeding",
    "frozen_observations",
    "render",
    "spaces",
    "aec_selection",
    "pettingzoo_api",
    "pettingzoo_seed",
)

FORMS = ("parallel", "aec")

# The checks one episode of legal play observes together.
OBSERVED = (
    "episode",
    "decisions",
    "masks",
    "forbidden_action",
    "bus",
    "frozen_observations",
    "aec_selection",
)


class ContractWarning(UserWarning):
    """Something the contract allows but that is probably a mistake (or left a check unused)."""


@dataclass(frozen=True)
class Violation:
    check: str
    form: str
    message: str

    def __str__(self) -> str:
        return f"[{self.form}] {self.check}: {self.message}"


class Findings:
    """The failures of one form; only the first failure of each check is kept."""

    def __init__(self, form: str, env_name: str):
        self.form = form
        self.env_name = env_name
        self.violations: list[Violation] = []
        self._warned: set[str] = set()

    def fail(self, check: str, message: str) -> None:
        if all(v.check != check for v in self.violations):
            self.violations.append(Violation(check, self.form, message))

    def failed(self, check: str) -> bool:
        return any(v.check == check for v in self.violations)

    def warn(self, check: str, message: str) -> None:
        if check not in self._warned:
            self._warned.add(check)
            text = f"{self.env_name} [{self.form}] {check}: {message}"
            warnings.warn(text, ContractWarning, stacklevel=4)


@dataclass
class Context:
    make: Callable[..., Any]
    form: str
    seed: int
    max_steps: int
    num_cycles: int
    findings: Findings


def describe(error: BaseException) -> str:
    frame = traceback.extract_tb(error.__traceback__)[-1:]
    where = f" at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno}" if frame else ""
    return f"{type(error).__name__}: {error}{where}"


def show(value: Any) -> str:
    """``value`` for a message: numpy scalars and arrays as plain numbers and lists."""
    if isinstance(value, (np.generic, np.ndarray)):
        return repr(value.tolist())
    return repr(value)
