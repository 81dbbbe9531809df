"""The prompt text of the gossip games' LLM agent, written from what a seat's
:class:`~socialsim.envs.gossip.protocol.Notebook` knows.

Templates live in ``agents/llm/prompts/gossip/``: ``<game>_system.txt`` (the system message),
``<game>_<decision>.txt`` (the user message of a decision) and ``fragments.txt`` (the
conditional pieces, one ``[section]`` each). Everything here is text: the rules, the payoffs
and what happened in a match come from the protocol and the notebook, never re-derived.

Which gossip shows its tone follows the reference: its donation, prisoner's dilemma and trust
prompts quote the message alone, its market log shows the tone beside it. ``show_tones`` shows
the tones in every game.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from socialsim.agents.llm.base import render
from socialsim.agents.llm.seat_text import quote
from socialsim.envs.gossip.notebook import Meeting, Notebook
from socialsim.envs.gossip.protocol import (
    trust_received,
)

PROMPTS = "gossip"
HORIZONS = ("infinite", "finite")
PROMPT_STYLES = ("full", "terse")
#: memory lines and gossip lines a terse prompt keeps (the latest)
TERSE_LINES = 3
#: the games whose prompts show each gossip's tone even without ``show_tones``
TONES_SHOWN = ("market",)

QUALITY_WORDS = {"H": "high quality (H)", "L": "low quality (L)"}
CHOICE_WORDS = {
    "c": "the customised product (c)",
    "s": "the standard product (s)",
    "none": "no product (none)",
}


@cache
def fragments() -> dict[str, string.Template]:
    """The ``[section]`` templates of ``prompts/gossip/fragments.txt``."""
    text = (
        resources.files("socialsim.agents.llm")
        .joinpath("prompts", PROMPTS, "fragments.txt")
        .read_text(encoding="utf-8")
    )
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = re.fullmatch(r"\[([\w.]+)\]", line.strip())
        if header:
            current = sections.setdefault(header.group(1), [])
        elif current is not None:
            current.append(line)
    return {name: string.Template("\n".join(lines).strip()) for name, lines in sections.items()}


def fragment(section: str, /, **values: Any) -> str:
    return fragments()[section].substitute(values)


def tidy(text: str) -> str:
    """Collapse the blank lines that empty optional sections leave behind."""
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def amount(value: float) -> str:
    """A resource amount as a person writes it: 10, 2.5, 3.33 (never 10.0 or -0)."""
    value = round(float(value), 2)
    return "0" if value == 0 else f"{value:g}"


def quoted(message: str | None) -> str:
    if message is None or not message.strip():
        return fragment("no_message")
    return quote(" ".join(message.split()))  # a JSON string: it cannot end itself early


@dataclass
class SeatPrompts:
    """The system, decision and reflection prompts of one seat in one episode.

    ``reasons`` maps a round to the seat's own justification of each decision it made then
    (what its memory lines quote); the agent fills it as it answers.
    """

    notebook: Notebook
    reasons: dict[int, dict[str, str]]
    equilibrium_knowledge: bool = True
    horizon: str = "infinite"
    display_names: bool | Mapping[str, str] = True
    show_tones: bool = False
    terse: bool = False

    # -- the rules in force (from the env's rules message) ---------------------------------------

    def number(self, key: str) -> float:
        return float(self.notebook.rule(key, 0.0))

    @property
    def gossip(self) -> bool:
        return bool(self.notebook.rule("gossip"))

    @property
    def mode(self) -> str:
        return "gossip" if self.gossip else "silent"

    @property
    def tones_shown(self) -> bool:
        return self.show_tones or self.notebook.game.name in TONES_SHOWN

    def name(self, agent_id: str) -> str:
        """The name an agent goes by in the prompts."""
        if isinstance(self.display_names, Mapping):
            return str(self.display_names.get(agent_id, agent_id))
        if self.display_names:  # the names a person's view shows too: one per agent
            return self.notebook.name(agent_id)
        return agent_id

    def received(self, meeting: Meeting) -> float:
        """What the responder of a trust meeting received."""
        return trust_received(meeting.invested, self.number("multiplier"))

    # -- the system message ---------------------------------------------------------------------

    def system(self) -> str:
        game = self.notebook.game
        rounds = int(self.notebook.rule("rounds"))
        length = (
            fragment("length.finite", rounds=rounds)
            if self.horizon == "finite"
            else fragment("length.infinite")
        )
        information = fragment(f"information.{self.mode}")
        if self.gossip and self.notebook.rule("gossip_reach", 1.0) < 1:
            information = fragment("information.reach")
        if self.gossip:
            information = fragment("tone_list", tones=fragment("tones")) + "\n\n" + information
        n = int(self.notebook.rule("n_agents"))
        sellers = int(self.notebook.rule("n_sellers")) if game.name == "market" else None
        meetings = self.notebook.meetings
        cost, benefit = self.number("cost"), self.number("benefit")
        values = {
            "identity": fragment(
                "identity",
                name=self.name(self.notebook.agent_id),
                n_agents=n,
                game_title=game.title,
                horizon_phrase="an infinite horizon"
                if self.horizon == "infinite"
                else "a finite horizon",
                discount=amount(self.number("discount")),
            ),
            "rules": fragment(f"rules.{game.name}.{self.mode}"),
            # the reference's schedule, or random matching (where pairs may meet again)
            "matching": fragment(
                f"matching.{'random' if self.notebook.rule('schedule') == 'random' else 'align'}"
                + (".roles" if game.name in ("donation", "trust") else "")
            ),
            "length": length,
            "information": information,
            # the market states no stock: its payoffs start from 0
            "initial_resources": amount(self.number("initial_resources")),
            "cost": amount(cost),
            "benefit": amount(benefit),
            "mutual": amount(benefit - cost),
            "multiplier": amount(self.number("multiplier")),
            "n_sellers": sellers if sellers is not None else "",
            "n_buyers": n - sellers if sellers is not None else "",
            "role": meetings[max(meetings)].role if meetings else "",
        }
        return tidy(render(PROMPTS, f"{game.name}_system", **values))

    # -- memory and the public log --------------------------------------------------------------

    def memory_lines(self, before_round: int) -> list[str]:
        """First-person lines about each of my matches that ended before ``before_round``."""
        meetings = self.notebook.meetings
        return [self.memory_line(meetings[r]) for r in sorted(meetings) if r < before_round]

    def facts(self, meeting: Meeting) -> dict[str, Any]:
        """What happened in ``meeting``, under the names the memory and event templates use."""
        cost, benefit = self.number("cost"), self.number("benefit")
        values: dict[str, Any] = {
            "round": meeting.round,
            "other": self.name(meeting.other),
            "own": amount(meeting.own),
            "theirs": amount(meeting.theirs),
            "cost": amount(cost),
            "benefit": amount(benefit),
        }
        game = meeting.game
        if game == "donation":
            values["ratio"] = f"{100 * cost / meeting.theirs:.3g}%" if meeting.theirs > 0 else "all"
            return values
        mine, theirs = self.notebook.payoffs(meeting)
        values.update(my_payoff=amount(mine), their_payoff=amount(theirs))
        if game == "prisoners":
            values.update(my_move=meeting.mine.get("play"), their_move=meeting.received.get("move"))
        elif game == "trust":
            values.update(
                invested=amount(meeting.invested),
                received=amount(self.received(meeting)),
                returned=amount(meeting.returned),
            )
        else:
            quality = meeting.mine.get("sell", meeting.received.get("move"))
            choice = meeting.mine.get("buy", meeting.received.get("move"))
            values.update(
                quality=QUALITY_WORDS.get(quality, str(quality)),
                choice=CHOICE_WORDS.get(choice, str(choice)),
            )
        return values

    @staticmethod
    def section(kind: str, meeting: Meeting) -> str:
        """The fragment ``kind.<game>.<role>`` of a meeting, and in the donation game
        ``.<move>`` (its texts differ by the donor's move)."""
        name = f"{kind}.{meeting.game}.{meeting.role}"
        if meeting.game == "donation":
            move = meeting.mine.get("donate", meeting.received.get("move"))
            name += f".{move or 'defect'}"
        return name

    def memory_line(self, meeting: Meeting) -> str:
        facts = self.facts(meeting)
        parts = [fragment(self.section("memory", meeting), **facts)]
        for section, gossip in (("memory.heard", meeting.heard), ("memory.said", meeting.said)):
            if gossip is not None:
                parts.append(self.gossip_text(section, gossip[0], gossip[1], other=facts["other"]))
        for decision, reason in self.reasons.get(meeting.round, {}).items():
            kind = "gossip" if decision == "gossip" else "move"
            parts.append(fragment(f"memory.reason.{kind}", text=quoted(reason)))
        return "- " + " ".join(parts)

    def gossip_text(self, section: str, tone: str, message: str | None, **values: Any) -> str:
        """A gossip as a prompt quotes it: with its tone, or the message alone."""
        if self.tones_shown:
            return fragment(section, tone=tone, message=quoted(message), **values)
        return fragment(f"{section}.no_tone", message=quoted(message), **values)

    def log_lines(self, about: str | None = None) -> list[str]:
        """The public gossip log as lines (only those about ``about`` if given)."""
        return [
            self.gossip_text(
                "log.line",
                entry["tone"],
                entry.get("message"),
                round=entry["round"],
                author=self.name(entry["author"]),
                about=self.name(entry["about"]),
            )
            for entry in self.notebook.gossip
            if about is None or entry["about"] == about
        ] + [  # what a ``reputation`` message told (gossip_reach < 1), as a scripted judge reads
            fragment("log.told", round=round_, about=self.name(told), tones=", ".join(tones))
            for (round_, told), tones in self.notebook.told.items()
            if about is None or told == about
        ]

    # -- the user messages ----------------------------------------------------------------------

    def sections(self, meeting: Meeting, notes: str | None) -> dict[str, str]:
        """The parts shared by every decision prompt."""
        other = self.name(meeting.other)
        if notes is not None:
            memory_section = fragment("notes", notes=notes.strip())
        else:
            memory = self.memory_lines(meeting.round)
            if self.terse:
                memory = memory[-TERSE_LINES:]
            memory_section = fragment(
                "memory", memory="\n".join(memory) if memory else fragment("none.memory")
            )
        log = self.log_lines(about=meeting.other if self.terse else None)
        if self.terse:
            log = log[-TERSE_LINES:]
        log_section = (
            fragment("log", other=other, log="\n".join(log) if log else fragment("none.log"))
            if self.gossip
            else ""
        )
        discount = amount(self.number("discount"))
        if self.horizon == "finite":
            total = int(self.notebook.rule("rounds"))
            objective = fragment(
                "objective.finite",
                discount=discount,
                round=meeting.round,
                rounds=total,
                left=max(total - meeting.round, 0),
            )
        else:
            objective = fragment("objective.infinite", discount=discount)
        if self.terse:  # the bare decision: no objective, no knowledge block, no guidelines
            return {
                **self._numbers(meeting, other),
                "objective": "",
                "memory_section": memory_section,
                "log_section": log_section,
                "knowledge": "",
                "guidelines": fragment("guideline.answer"),
            }
        guidelines = []
        if self.equilibrium_knowledge:
            guidelines.append(fragment("guideline.knowledge"))
        guidelines += [
            fragment(f"guideline.trust.{self.mode}", other=other),
            fragment("guideline.deviation"),
            fragment("guideline.answer"),
        ]
        return {
            **self._numbers(meeting, other),
            "objective": objective,
            "memory_section": memory_section,
            "log_section": log_section,
            "knowledge": fragment(f"knowledge.{self.horizon}")
            if self.equilibrium_knowledge
            else "",
            "guidelines": "\n".join(guidelines),
        }

    def _numbers(self, meeting: Meeting, other: str) -> dict[str, str]:
        return {
            "round": str(meeting.round),
            "other": other,
            "own": amount(meeting.own),
            "other_resources": amount(meeting.theirs),
            "cost": amount(self.number("cost")),
            "benefit": amount(self.number("benefit")),
            "multiplier": amount(self.number("multiplier")),
            "tones": fragment("tones"),
        }

    def decision(self, meeting: Meeting, decision: str, form: str, notes: str | None) -> str:
        """The user message of ``decision`` in ``meeting``; ``form`` is the answer required."""
        game = meeting.game
        other = self.name(meeting.other)
        values = self.sections(meeting, notes)
        values["form"] = form
        if decision == "gossip":
            values["accountability"] = fragment("accountability.gossip", other=other)
            values["event"] = self.event(meeting)
            values["role"] = meeting.role
            roles = self.notebook.game.roles
            values["other_role"] = roles[1 - roles.index(meeting.role)]
        else:
            values["accountability"] = fragment(
                f"accountability.{game}.{decision}.{self.mode}", other=other
            )
        if decision == "return":
            values["invested"] = amount(meeting.invested)
            values["received"] = amount(self.received(meeting))
        return tidy(render(PROMPTS, f"{game}_{decision}", **values))

    def event(self, meeting: Meeting) -> str:
        """What happened in the current match, told to the agent about to gossip."""
        return fragment(self.section("event", meeting), **self.facts(meeting))

    def reflection(self, meeting: Meeting) -> str:
        """The user message asking the seat to summarise its memory and the log."""
        values = self.sections(meeting, None)
        return tidy(
            fragment(
                "reflect",
                round=meeting.round,
                role=meeting.role,
                other=values["other"],
                memory_section=values["memory_section"],
                log_section=values["log_section"],
            )
        )
