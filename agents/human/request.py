"""What a person is asked at a decision: a :class:`Request` of named text :class:`Field` s,
each checked by the game's rules (the view modules :mod:`.decrypto` and :mod:`.gossip` build
them; the :class:`~.agent.Human` agent and the front ends use them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: the longest text accepted in any field (a gossip message, a hint)
MAX_FIELD_CHARS = 280


@dataclass(frozen=True)
class Field:
    """One text field of a request. ``check(text)`` returns the value or raises ``ValueError``
    with a message for the person; ``choices`` lists the accepted words where there are few."""

    name: str
    label: str
    check: Callable[[str], Any]
    choices: tuple[str, ...] = ()
    placeholder: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "label": self.label,
            "choices": list(self.choices),
            "placeholder": self.placeholder,
            "max_length": MAX_FIELD_CHARS,
        }


@dataclass(frozen=True)
class Request:
    """What the person must decide now: a title, the fields, and how the checked values become
    the env action (``build(values) -> action``; it may raise ``ValueError`` too)."""

    decision: str
    title: str
    fields: tuple[Field, ...]
    build: Callable[[dict[str, Any]], Any]
    help: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "title": self.title,
            "help": self.help,
            "fields": [f.to_json() for f in self.fields],
        }

    def check_field(self, name: str, text: Any) -> Any:
        """The checked value of one field (``ValueError`` with the reason)."""
        if not isinstance(text, str):
            raise ValueError(f"{name}: expected text")
        if len(text) > MAX_FIELD_CHARS:
            raise ValueError(f"at most {MAX_FIELD_CHARS} characters, please")
        for f in self.fields:
            if f.name == name:
                return f.check(text)
        raise ValueError(f"unknown field {name!r}")

    def read(self, answer: Mapping[str, Any]) -> Any:
        """The env action of a whole answer (``ValueError`` naming the first bad field)."""
        if not isinstance(answer, Mapping):
            raise ValueError("the answer must give every field")
        values = {}
        for f in self.fields:
            if f.name not in answer:
                raise ValueError(f"{f.label}: missing")
            try:
                values[f.name] = self.check_field(f.name, answer[f.name])
            except ValueError as error:
                raise ValueError(f"{f.label}: {error}") from None
        return self.build(values)
