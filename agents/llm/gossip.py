"""LLM players of the four ALIGN gossip games: one class for every game, role and decision.

| | |
|---|---|
| Kind | `llm_gossip` (`socialsim.agents.llm.gossip:GossipLLMAgent`) |
| Games | `donation_v0`, `prisoners_v0`, `trust_v0`, `market_v0`, read from `info["role"]` |
| Decisions | `donate`, `play`, `invest`, `return`, `sell`, `buy`, `gossip`, read from `info["decision"]` |
| Calls | one per decision (two with `reflection=True`), plus the re-prompts of invalid answers |
| Prompts | `agents/llm/prompts/gossip/`: `<game>_system.txt`, `<game>_<decision>.txt`, `fragments.txt` |

Every decision is one stateless chat, as in the reference: a system message with the agent's
identity (self-interested, far-sighted with the discount factor, rational), the rules and the
payoffs, and a user message with the round, both agents' current resources (total payoffs in
the prisoner's dilemma and the market), the agent's own memory of its past matches (first-person
lines built from the bus messages it received and its own answers), the public gossip log as
readable lines (``Round 3: Kate about John (criticism): "..."``), an accountability notice
(what the counterpart sees and whether it will be gossiped), the optional common knowledge for
subgame-perfect equilibria, and the JSON answer required.

Answers and what the env receives:

| decision | JSON answer | action passed to the env | fallback |
|---|---|---|---|
| `donate` | `{"justification", "donor_action": "cooperate" or "defect"}` | `{"action": "cooperate", "justification"}` | defect |
| `play` | `{"justification", "player_action": "C" or "D"}` | `{"action": "C", ...}` | D |
| `invest` | `{"justification", "investor_action": number in [0, own resources]}` | `{"amount": 2.5, ...}` | 0 |
| `return` | `{"justification", "responder_action": number in [0, multiplier x I]}` | `{"amount": ..., ...}` | 0 |
| `sell` | `{"justification", "seller_action": "H" or "L"}` | `{"action": "H", ...}` | L |
| `buy` | `{"justification", "buyer_action": "c", "s" or "none"}` | `{"action": "c", ...}` | none |
| `gossip` | `{"justification", "tone": one of the five, "gossip": under 150 words}` | `{"tone": "praising", "message"}` | neutral, empty message |

Choices are matched ignoring case and surrounding spaces (``" Cooperate"`` is cooperate), but
nothing else is guessed: ``"Cooperate!"``, an unknown tone, an amount out of range, a message of
150 words or more, or a reply without a JSON object is an invalid answer. The agent re-prompts
with the game master's reason, up to ``max_attempts`` answers, then plays the fallback; both are
counted (``invalid_answers``, ``fallbacks``) and logged in the record (see
:class:`~socialsim.agents.llm.base.LLMAgent`).

The agent sees only its observation, its inbox and ``info``, never the env's arguments. The
rules it states come from the env's ``rules`` message (public, published to everyone at reset,
so it is in the first inbox the agent reads): ``game``, ``gossip``, ``cost``, ``benefit``,
``multiplier``, ``discount``, ``initial_resources``, ``n_agents``, ``n_sellers``,
``rounds`` (the episode's real number of rounds, stated by a finite horizon) and ``entrant``
(its id, so that the reference's entrant goes by its reference name). So one seat table plays
every setting of the env, and an experiment grid may cross ``env.kwargs.gossip`` with any option
of the agent. An inbox without a ``rules`` message is a ``ValueError``.

Arguments
    model: the model config table (see :func:`socialsim.llm.build_model`), or a model name.
    equilibrium_knowledge: add the common-knowledge block for finding subgame-perfect
        equilibria (backward induction for a finite horizon, the one-shot deviation principle
        for an infinite one) and a guideline to use it; ``False`` is the paper's ablation.
    horizon: ``"infinite"`` or ``"finite"``: the wording only (the episode length is the env's);
        a finite game states its exact number of rounds, from the ``rules`` message.
    reflection: before each decision, a second call asks the agent to summarise its memory and
        the gossip log; the summary replaces the raw memory lines in the decision prompt.
    display_names: ``True`` shows ``agent_i`` as the reference's names (John, Kate, Jack, ...,
        and Max for the entrant the ``rules`` message names), ``False`` shows the ids, a table
        maps ids to names (unlisted ids keep their id).
    structured_output: ask for the answer with ``response_format`` (a JSON schema), for models
        and servers that support it.
    max_words: the gossip message must have fewer words than this.
    max_attempts: answers tried per decision before the fallback (default 3).
    drop_failed_attempts: keep failed attempts out of the re-prompt (see the base class).

Version History
    * v1: the game's settings are read from the env's ``rules`` message; the seat options
      ``gossip``, ``cost``, ``benefit``, ``multiplier``, ``discount``, ``initial_resources``,
      ``n_agents``, ``n_sellers`` and ``rounds`` are gone.
    * v0: first version.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from socialsim.agents.llm.base import LLMAgent, render
from socialsim.envs.gossip.core import MARKET_PAYOFFS, REFERENCE_ENTRANT_NAME, REFERENCE_NAMES
from socialsim.envs.gossip.norms import TONES

from socialsim.bus import Message
from socialsim.llm import AnswerParseError, extract_json, require_fields

KINDS = {"llm_gossip": "socialsim.agents.llm.gossip:GossipLLMAgent"}

PROMPTS = "gossip"
HORIZONS = ("infinite", "finite")

GAME_OF_ROLE = {
    "donor": "donation",
    "recipient": "donation",
    "player": "prisoners",
    "investor": "trust",
    "responder": "trust",
    "seller": "market",
    "buyer": "market",
}
TITLES = {
    "donation": "donation game",
    "prisoners": "prisoner's dilemma",
    "trust": "trust game",
    "market": "product-choice market",
}
DECISIONS = {
    "donation": ("donate", "gossip"),
    "prisoners": ("play", "gossip"),
    "trust": ("invest", "return", "gossip"),
    "market": ("sell", "buy", "gossip"),
}
#: decision -> (JSON field, allowed choices or None for an amount)
MOVES: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "donate": ("donor_action", ("cooperate", "defect")),
    "play": ("player_action", ("C", "D")),
    "invest": ("investor_action", None),
    "return": ("responder_action", None),
    "sell": ("seller_action", ("H", "L")),
    "buy": ("buyer_action", ("c", "s", "none")),
}
FALLBACKS: dict[str, Any] = {
    "donate": "defect",
    "play": "D",
    "invest": 0.0,
    "return": 0.0,
    "sell": "L",
    "buy": "none",
    "gossip": ("neutral", ""),
}
QUALITY_WORDS = {"H": "high quality (H)", "L": "low quality (L)"}
CHOICE_WORDS = {
    "c": "the customised product (c)",
    "s": "the standard product (s)",
    "none": "no product (none)",
}
REFLECT_WORDS = 120  # the reflection asks for at most this; twice as long is an invalid answer


# -- prompt text ----------------------------------------------------------------------------------


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
    return '"' + " ".join(message.split()) + '"'


# -- what the agent remembers ---------------------------------------------------------------------


@dataclass
class Match:
    """One of the agent's matches, as it learns it from the bus and from its own answers."""

    round: int
    role: str
    other: str
    own: float  # my stock (total payoff in PD and market) when the round started
    theirs: float
    mine: dict[str, Any] = field(default_factory=dict)  # decision -> my choice
    received: dict[str, Any] = field(default_factory=dict)  # what the counterpart did to me
    reasons: dict[str, str] = field(default_factory=dict)  # decision -> my justification
    said: tuple[str, str | None] | None = None  # (tone, message) I published about them
    heard: tuple[str, str | None] | None = None  # (tone, message) they published about me


class GossipLLMAgent(LLMAgent):
    """An LLM player of the gossip games; see the module docstring for the arguments."""

    default_max_attempts = 3

    def __init__(
        self,
        model: str | Mapping[str, Any],
        equilibrium_knowledge: bool = True,
        horizon: str = "infinite",
        reflection: bool = False,
        display_names: bool | Mapping[str, str] = True,
        structured_output: bool = False,
        max_words: int = 150,
        max_attempts: int | None = None,
        drop_failed_attempts: bool = False,
    ):
        super().__init__(model, max_attempts, drop_failed_attempts)
        for name, value in (
            ("equilibrium_knowledge", equilibrium_knowledge),
            ("reflection", reflection),
            ("structured_output", structured_output),
            ("drop_failed_attempts", drop_failed_attempts),
        ):
            if not isinstance(value, bool):
                raise ValueError(f"{name}: must be true or false, got {value!r}")
        if horizon not in HORIZONS:
            raise ValueError(f"horizon: must be one of {', '.join(HORIZONS)}, got {horizon!r}")
        if not isinstance(display_names, (bool, Mapping)):
            raise ValueError(
                f"display_names: must be true, false or a table of id -> name, got {display_names!r}"
            )
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
            raise ValueError(f"max_words: must be an integer >= 1, got {max_words!r}")
        self.equilibrium_knowledge = equilibrium_knowledge
        self.horizon = horizon
        self.reflection = reflection
        self.display_names = display_names
        self.structured_output = structured_output
        self.max_words = max_words

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.matches: dict[int, Match] = {}
        self.log: list[dict[str, Any]] = []  # gossip payloads, in the order published
        self.game: str | None = None
        self.rules: dict[str, Any] | None = None  # the env's ``rules`` payload, once read

    # -- reading what the env gives -----------------------------------------------------------

    def read(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]) -> None:
        """Take in the new inbox messages and what ``info`` tells."""
        for message in messages:
            if message.kind == "rules":
                self.learn_rules(message.payload)
        if self.rules is None:
            raise ValueError(
                f"{self.agent_id}: no 'rules' message reached this agent before its first "
                "decision; the gossip envs publish one to everyone at reset (the agent learns "
                "the game's settings from it)"
            )
        role = info.get("role")
        if role is not None:
            game = GAME_OF_ROLE.get(role)
            if game is None:
                raise ValueError(
                    f"info['role']: {role!r} is not a role of the gossip games "
                    f"({', '.join(GAME_OF_ROLE)})"
                )
            if game != self.game:
                raise ValueError(
                    f"info['role']: {role!r} is a role of the {game} game, but the rules "
                    f"message says {self.game!r}"
                )
        for message in messages:
            payload = message.payload
            if message.kind == "match":
                roles = payload["roles"]
                other = next(a for a in roles if a != self.agent_id)
                stocks = payload["resources"]
                own = float(stocks[self.agent_id])
                self.matches[payload["round"]] = Match(
                    payload["round"], roles[self.agent_id], other, own, float(stocks[other])
                )
            elif message.kind == "action" and payload.get("target") == self.agent_id:
                match = self.matches.get(payload["round"])
                if match is not None:
                    action = payload["action"]
                    if isinstance(action, Mapping):
                        match.received.update(action)
                    else:
                        match.received["move"] = action
            elif message.kind == "gossip":
                self.log.append(dict(payload))
                match = self.matches.get(payload["round"])
                if match is not None:
                    said = (payload["tone"], payload.get("message"))
                    if payload["author"] == self.agent_id and payload["about"] == match.other:
                        match.said = said
                    elif payload["about"] == self.agent_id and payload["author"] == match.other:
                        match.heard = said

    def learn_rules(self, payload: Mapping[str, Any]) -> None:
        """Keep the settings of the ``rules`` message, checking the ones the prompts state."""
        rules = dict(payload)
        game = rules.get("game")
        if game not in TITLES:
            raise ValueError(
                f"rules message: game must be one of {', '.join(TITLES)}, got {game!r}"
            )
        needed = ["gossip", "discount", "n_agents", "rounds"]
        needed += {
            "donation": ["cost", "benefit", "initial_resources"],
            "prisoners": ["cost", "benefit"],
            "trust": ["multiplier", "initial_resources"],
            "market": ["n_sellers"],
        }[game]
        missing = [key for key in needed if key not in rules]
        if missing:
            raise ValueError(f"rules message: the {game} game's rules lack {', '.join(missing)}")
        self.rules = rules
        self.game = game

    # -- the rules in force (from the env's rules message) ---------------------------------------

    def rule(self, key: str, default: Any = None) -> Any:
        if self.rules is None:  # pragma: no cover - read() raises first
            raise ValueError(f"{key}: the rules message has not reached {self.agent_id}")
        return self.rules.get(key, default)

    @property
    def gossip(self) -> bool:
        return bool(self.rule("gossip"))

    @property
    def cost(self) -> float:
        return float(self.rule("cost", 0.0))

    @property
    def benefit(self) -> float:
        return float(self.rule("benefit", 0.0))

    @property
    def multiplier(self) -> float:
        return float(self.rule("multiplier", 0.0))

    @property
    def discount(self) -> float:
        return float(self.rule("discount"))

    # -- names and numbers --------------------------------------------------------------------

    def name(self, agent_id: str) -> str:
        """The name an agent goes by in the prompts."""
        if isinstance(self.display_names, Mapping):
            return str(self.display_names.get(agent_id, agent_id))
        if self.display_names:
            if agent_id == self.rule("entrant"):
                return REFERENCE_ENTRANT_NAME
            found = re.fullmatch(r"agent_(\d+)", agent_id)
            if found and int(found.group(1)) < len(REFERENCE_NAMES):
                return REFERENCE_NAMES[int(found.group(1))]
        return agent_id

    def agent_count(self) -> int:
        return int(self.rule("n_agents"))

    def total_rounds(self) -> int:
        """The episode's real number of rounds, as the rules message states it."""
        return int(self.rule("rounds"))

    def sellers(self) -> int:
        return int(self.rule("n_sellers"))

    def starting_stock(self) -> float:
        # the market states no stock: its payoffs start from 0
        return float(self.rule("initial_resources", 0.0))

    def payoffs(self, match: Match) -> tuple[float, float]:
        """(mine, theirs) of a finished or current match."""
        game = GAME_OF_ROLE[match.role]
        if game == "prisoners":
            mine, theirs = match.mine.get("play"), match.received.get("move")
            return self._pd(mine, theirs), self._pd(theirs, mine)
        if game == "trust":
            invested = self.invested(match)
            returned = self.returned(match)
            investor = returned - invested
            responder = self.multiplier * invested - returned
            return (investor, responder) if match.role == "investor" else (responder, investor)
        if game == "market":
            if match.role == "seller":
                seller, buyer = MARKET_PAYOFFS[match.mine["sell"], match.received["move"]]
                return seller, buyer
            seller, buyer = MARKET_PAYOFFS[match.received["move"], match.mine["buy"]]
            return buyer, seller
        raise ValueError(f"role: no payoff table for {match.role!r}")  # pragma: no cover

    def _pd(self, mine: str | None, theirs: str | None) -> float:
        return (self.benefit if theirs == "C" else 0.0) - (self.cost if mine == "C" else 0.0)

    @staticmethod
    def invested(match: Match) -> float:
        return float(match.mine.get("invest", match.received.get("invest", 0.0)))

    @staticmethod
    def returned(match: Match) -> float:
        return float(match.mine.get("return", match.received.get("return", 0.0)))

    # -- prompts ------------------------------------------------------------------------------

    def system_prompt(self) -> str:
        game = self.game
        mode = "gossip" if self.gossip else "silent"
        length = (
            fragment("length.finite", rounds=self.total_rounds())
            if self.horizon == "finite"
            else fragment("length.infinite")
        )
        information = fragment(f"information.{mode}")
        if self.gossip:
            information = fragment("tone_list", tones=fragment("tones")) + "\n\n" + information
        n = self.agent_count()
        values = {
            "identity": fragment(
                "identity",
                name=self.name(self.agent_id),
                n_agents=n,
                game_title=TITLES[game],
                horizon_phrase="an infinite horizon"
                if self.horizon == "infinite"
                else "a finite horizon",
                discount=amount(self.discount),
            ),
            "rules": fragment(f"rules.{game}.{mode}"),
            # the reference's schedule, or random matching (where pairs may meet again)
            "matching": fragment(
                f"matching.{'random' if self.rule('schedule') == 'random' else 'align'}"
                + (".roles" if game in ("donation", "trust") else "")
            ),
            "length": length,
            "information": information,
            "initial_resources": amount(self.starting_stock()),
            "cost": amount(self.cost),
            "benefit": amount(self.benefit),
            "mutual": amount(self.benefit - self.cost),
            "multiplier": amount(self.multiplier),
            "n_sellers": self.sellers() if game == "market" else "",
            "n_buyers": n - self.sellers() if game == "market" else "",
            "role": self.matches[max(self.matches)].role if self.matches else "",
        }
        return tidy(render(PROMPTS, f"{game}_system", **values))

    def memory_lines(self, before_round: int) -> list[str]:
        """First-person lines about each of my matches that ended before ``before_round``."""
        lines = []
        for number in sorted(self.matches):
            if number >= before_round:
                break
            lines.append(self.memory_line(self.matches[number]))
        return lines

    def memory_line(self, match: Match) -> str:
        game = GAME_OF_ROLE[match.role]
        other = self.name(match.other)
        common = {
            "round": match.round,
            "other": other,
            "own": amount(match.own),
            "theirs": amount(match.theirs),
            "cost": amount(self.cost),
            "benefit": amount(self.benefit),
        }
        if game == "donation":
            move = match.mine.get("donate") if match.role == "donor" else match.received.get("move")
            text = fragment(f"memory.donation.{match.role}.{move or 'defect'}", **common)
        elif game == "prisoners":
            text = fragment(
                "memory.prisoners.player",
                my_move=match.mine.get("play"),
                their_move=match.received.get("move"),
                my_payoff=amount(self.payoffs(match)[0]),
                **common,
            )
        elif game == "trust":
            invested = self.invested(match)
            text = fragment(
                f"memory.trust.{match.role}",
                invested=amount(invested),
                received=amount(self.multiplier * invested),
                returned=amount(self.returned(match)),
                my_payoff=amount(self.payoffs(match)[0]),
                **common,
            )
        else:
            quality = match.mine.get("sell", match.received.get("move"))
            choice = match.mine.get("buy", match.received.get("move"))
            text = fragment(
                f"memory.market.{match.role}",
                quality=QUALITY_WORDS.get(quality, str(quality)),
                choice=CHOICE_WORDS.get(choice, str(choice)),
                my_payoff=amount(self.payoffs(match)[0]),
                **common,
            )
        parts = [text]
        if match.heard is not None:
            parts.append(
                fragment(
                    "memory.heard", other=other, tone=match.heard[0], message=quoted(match.heard[1])
                )
            )
        if match.said is not None:
            parts.append(
                fragment(
                    "memory.said", other=other, tone=match.said[0], message=quoted(match.said[1])
                )
            )
        for decision, reason in match.reasons.items():
            kind = "gossip" if decision == "gossip" else "move"
            parts.append(fragment(f"memory.reason.{kind}", text=quoted(reason)))
        return "- " + " ".join(parts)

    def log_lines(self) -> list[str]:
        return [
            fragment(
                "log.line",
                round=entry["round"],
                author=self.name(entry["author"]),
                about=self.name(entry["about"]),
                tone=entry["tone"],
                message=quoted(entry.get("message")),
            )
            for entry in self.log
        ]

    def sections(self, match: Match, notes: str | None) -> dict[str, str]:
        """The parts shared by every decision prompt."""
        other = self.name(match.other)
        mode = "gossip" if self.gossip else "silent"
        memory = self.memory_lines(match.round)
        if notes is not None:
            memory_section = fragment("notes", notes=notes.strip())
        else:
            memory_section = fragment(
                "memory", memory="\n".join(memory) if memory else fragment("none.memory")
            )
        log = self.log_lines()
        log_section = (
            fragment("log", other=other, log="\n".join(log) if log else fragment("none.log"))
            if self.gossip
            else ""
        )
        if self.horizon == "finite":
            total = self.total_rounds()
            objective = fragment(
                "objective.finite",
                discount=amount(self.discount),
                round=match.round,
                rounds=total,
                left=max(total - match.round, 0),
            )
        else:
            objective = fragment("objective.infinite", discount=amount(self.discount))
        guidelines = []
        if self.equilibrium_knowledge:
            guidelines.append(fragment("guideline.knowledge"))
        guidelines += [
            fragment(f"guideline.trust.{mode}", other=other),
            fragment("guideline.deviation"),
            fragment("guideline.answer"),
        ]
        return {
            "round": str(match.round),
            "other": other,
            "own": amount(match.own),
            "other_resources": amount(match.theirs),
            "objective": objective,
            "memory_section": memory_section,
            "log_section": log_section,
            "knowledge": fragment(f"knowledge.{self.horizon}")
            if self.equilibrium_knowledge
            else "",
            "guidelines": "\n".join(guidelines),
            "cost": amount(self.cost),
            "benefit": amount(self.benefit),
            "multiplier": amount(self.multiplier),
            "tones": fragment("tones"),
        }

    def decision_prompt(self, info: Mapping[str, Any], notes: str | None = None) -> str:
        """The user message of the decision ``info`` names."""
        decision = info["decision"]
        match = self.current_match(info)
        game = GAME_OF_ROLE[match.role]
        mode = "gossip" if self.gossip else "silent"
        other = self.name(match.other)
        values = self.sections(match, notes)
        values["form"] = self.answer_form(decision, match)
        if decision == "gossip":
            values["accountability"] = fragment("accountability.gossip", other=other)
            values["event"] = self.event(match)
            values["role"] = match.role
            values["other_role"] = "responder" if match.role == "investor" else "investor"
        else:
            values["accountability"] = fragment(
                f"accountability.{game}.{decision}.{mode}", other=other
            )
        if decision == "return":
            invested = self.invested(match)
            values["invested"] = amount(invested)
            values["received"] = amount(self.multiplier * invested)
        return tidy(render(PROMPTS, f"{game}_{decision}", **values))

    def event(self, match: Match) -> str:
        """What happened in the current match, told to the agent about to gossip."""
        game = GAME_OF_ROLE[match.role]
        other = self.name(match.other)
        if game == "donation":
            move = match.received.get("move", "defect")
            ratio = f"{100 * self.cost / match.theirs:.3g}%" if match.theirs > 0 else "all"
            return fragment(
                f"event.donation.{move}",
                other=other,
                cost=amount(self.cost),
                benefit=amount(self.benefit),
                ratio=ratio,
            )
        mine, theirs = self.payoffs(match)
        payoffs = {"other": other, "my_payoff": amount(mine), "their_payoff": amount(theirs)}
        if game == "prisoners":
            return fragment(
                "event.prisoners",
                my_move=match.mine.get("play"),
                their_move=match.received.get("move"),
                **payoffs,
            )
        if game == "trust":
            invested = self.invested(match)
            return fragment(
                f"event.trust.{match.role}",
                invested=amount(invested),
                received=amount(self.multiplier * invested),
                returned=amount(self.returned(match)),
                **payoffs,
            )
        return fragment(
            "event.market",
            choice=CHOICE_WORDS[match.mine["buy"]],
            quality=QUALITY_WORDS[match.received["move"]],
            **payoffs,
        )

    def reflection_prompt(self, info: Mapping[str, Any]) -> str:
        match = self.current_match(info)
        values = self.sections(match, None)
        return tidy(
            fragment(
                "reflect",
                round=match.round,
                role=match.role,
                other=values["other"],
                memory_section=values["memory_section"],
                log_section=values["log_section"],
            )
        )

    def chat(self, info: Mapping[str, Any], notes: str | None = None) -> list[dict[str, str]]:
        """The messages sent for the decision ``info`` names."""
        return [
            {"role": "system", "content": self.system_prompt()},
            {"role": "user", "content": self.decision_prompt(info, notes)},
        ]

    def current_match(self, info: Mapping[str, Any]) -> Match:
        match = self.matches.get(info.get("round"))
        if match is None or match.other != info.get("counterpart"):
            raise ValueError(
                f"{self.agent_id}: no match message for round {info.get('round')!r} with "
                f"{info.get('counterpart')!r} reached this agent"
            )
        return match

    # -- answers ------------------------------------------------------------------------------

    def limit(self, decision: str, match: Match) -> float:
        """The most an investor or responder may send now."""
        if decision == "invest":
            return max(match.own, 0.0)
        return self.multiplier * self.invested(match)

    def answer_form(self, decision: str, match: Match) -> str:
        if decision == "gossip":
            return fragment("form.gossip", max_words=self.max_words)
        field_name, options = MOVES[decision]
        if options is None:
            shown = f"<a number between 0 and {amount(self.limit(decision, match))}>"
        else:
            quoted_options = [f'"{o}"' for o in options]
            shown = (
                " or ".join(quoted_options)
                if len(options) == 2
                else ", ".join(quoted_options[:-1]) + " or " + quoted_options[-1]
            )
        return fragment("form.move", field=field_name, options=shown)

    def response_format(self, decision: str) -> dict[str, Any]:
        """The JSON schema of the answer, for ``structured_output``."""
        properties: dict[str, Any] = {"justification": {"type": "string"}}
        if decision == "gossip":
            properties["tone"] = {"type": "string", "enum": list(TONES)}
            properties["gossip"] = {"type": "string"}
        else:
            field_name, options = MOVES[decision]
            properties[field_name] = (
                {"type": "number"} if options is None else {"type": "string", "enum": list(options)}
            )
        return {
            "type": "json_schema",
            "json_schema": {
                "name": f"{decision}_answer",
                "strict": True,
                "schema": {
                    "type": "object",
                    "properties": properties,
                    "required": list(properties),
                    "additionalProperties": False,
                },
            },
        }

    def parse(self, decision: str, match: Match, text: str) -> tuple[Any, str]:
        """``(choice, justification)`` of a reply, or :class:`AnswerParseError`."""
        answer = extract_json(text)
        if decision == "gossip":
            answer = require_fields(answer, {"justification": str, "tone": str, "gossip": str})
            tone = answer["tone"].strip().lower()
            if tone not in TONES:
                allowed = ", ".join(f'"{t}"' for t in TONES)
                raise AnswerParseError(
                    f'the field "tone" must be one of {allowed}, not "{answer["tone"]}"'
                )
            words = len(answer["gossip"].split())
            if words >= self.max_words:
                raise AnswerParseError(
                    f'the field "gossip" has {words} words; it must have fewer than {self.max_words}'
                )
            return (tone, answer["gossip"].strip()), answer["justification"]
        field_name, options = MOVES[decision]
        if options is None:
            answer = require_fields(answer, {"justification": str, field_name: (int, float, str)})
            value = answer[field_name]
            if isinstance(value, str):
                try:
                    value = float(value.strip())
                except ValueError:
                    raise AnswerParseError(
                        f'the field "{field_name}" must be a number, not "{answer[field_name]}"'
                    ) from None
            limit = self.limit(decision, match)
            if not math.isfinite(value) or not 0.0 <= value <= limit + 1e-9:
                raise AnswerParseError(
                    f'the field "{field_name}" must be a number between 0 and {amount(limit)}, '
                    f"not {value:g}"
                )
            return min(float(value), limit), answer["justification"]
        answer = require_fields(answer, {"justification": str, field_name: str})
        by_lower = {o.lower(): o for o in options}
        choice = by_lower.get(answer[field_name].strip().lower())
        if choice is None:
            allowed = " or ".join(f'"{o}"' for o in options)
            raise AnswerParseError(
                f'the field "{field_name}" must be {allowed}, not "{answer[field_name]}"'
            )
        return choice, answer["justification"]

    def to_action(self, decision: str, choice: Any, justification: str) -> dict[str, Any]:
        """The env's language-form action dict."""
        if decision == "gossip":
            tone, message = choice
            return {"tone": tone, "message": message}
        if decision in ("invest", "return"):
            return {"amount": float(choice), "justification": justification}
        return {"action": choice, "justification": justification}

    # -- acting -------------------------------------------------------------------------------

    async def reflect(self, info: Mapping[str, Any]) -> str | None:
        """The agent's own summary of its memory and the log (``None`` after invalid answers)."""

        def parse(text: str) -> str:
            words = len(text.split())
            if words == 0:
                raise AnswerParseError("the reply is empty")
            if words > 2 * REFLECT_WORDS:
                raise AnswerParseError(
                    f"the summary has {words} words; it must have at most {REFLECT_WORDS}"
                )
            return text.strip()

        chat = [
            {"role": "system", "content": self.system_prompt()},
            {"role": "user", "content": self.reflection_prompt(info)},
        ]
        outcome = await self.ask(
            chat,
            parse,
            decision="reflect",
            correction=lambda reason: fragment(
                "correction", reason=reason, form=fragment("form.reflect")
            ),
            fallback=lambda: None,
        )
        return outcome.value

    async def aact(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> Any:
        self.read(observation, messages, info)
        decision = info.get("decision")
        if self.game is None or decision not in DECISIONS[self.game]:
            raise ValueError(
                f"info['decision']: {decision!r} is not a decision of the "
                f"{self.game or 'gossip'} game for role {info.get('role')!r}"
            )
        match = self.current_match(info)
        notes = await self.reflect(info) if self.reflection else None
        form = self.answer_form(decision, match)
        overrides = {}
        if self.structured_output:
            overrides["response_format"] = self.response_format(decision)
        outcome = await self.ask(
            self.chat(info, notes),
            lambda text: self.parse(decision, match, text),
            decision=decision,
            correction=lambda reason: fragment("correction", reason=reason, form=form),
            fallback=lambda: (FALLBACKS[decision], ""),
            **overrides,
        )
        choice, justification = outcome.value
        if decision != "gossip":
            match.mine[decision] = choice
        if justification.strip():
            match.reasons[decision] = justification
        return self.to_action(decision, choice, justification)
