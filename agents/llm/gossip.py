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
readable lines (``Round 3: Kate about John: "..."``), an accountability notice
(what the counterpart sees and whether it will be gossiped), the optional common knowledge for
subgame-perfect equilibria, and the JSON answer required.

The answers each decision asks for, how replies are read and the fallbacks are described in
:mod:`socialsim.agents.llm.gossip_answers`. An invalid answer is re-prompted with the game
master's reason, up to ``max_attempts`` answers, then the protocol's fallback is played; both
are counted (``invalid_answers``, ``fallbacks``) and logged in the record (see
:class:`~socialsim.agents.llm.base.LLMAgent`).

Gossip in the prompts: as in the reference, the donation, prisoner's dilemma and trust prompts
quote each gossip's message without its tone (``Round 3: Kate about John: "..."``), and the
market's show the tone too (``Round 3: Kate about John (criticism): "..."``); ``show_tones``
shows the tones in every game.

Files: this module is the decision loop; :mod:`~socialsim.agents.llm.gossip_prompts` writes
the prompts from the seat's :class:`~socialsim.envs.gossip.protocol.Notebook`;
:mod:`~socialsim.agents.llm.gossip_answers` reads the replies.

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
    show_tones: also show the tone of each gossip in the donation, prisoner's dilemma and
        trust prompts (the log and the memory lines), where the reference shows the message
        alone; the market's prompts always show it, as the reference's do.
    structured_output: ``True`` constrains the answer to its exact JSON schema
        (:func:`~socialsim.agents.llm.gossip_answers.answer_schema`), sent in the form the model
        table's ``structured_format`` names (:mod:`socialsim.llm.structured`); ``"auto"`` (the
        default) does for a self-hosted server that takes a schema (llama-cpp-python,
        llama.cpp, vLLM), not through a provider by name (see the base class).
    prompt_style: ``"full"`` (the reference's prompts) or ``"terse"``, for small models: the
        decision prompt keeps the round, the resources, the choices, the accountability
        notice, the last 3 memory lines and the last 3 gossip lines about the counterpart, and
        drops the objective, the common-knowledge block and the guidelines.
    retry_temperature: the temperature of re-prompts at temperature 0 (see the base class).
    system_as_user: send the system message's text at the head of the user message, for models
        and chat templates without a system role (llama-cpp-python's ``gemma`` format drops a
        system message without a word; see the base class).

    The model table's ``temperature`` and ``max_tokens`` default to 1.0 and 1024.
    max_words: the gossip message must have fewer words than this.
    max_attempts: answers tried per decision before the fallback (default 3).
    drop_failed_attempts: keep failed attempts out of the re-prompt (see the base class).

Version History
    * v5: ``system_as_user``; placeholders refused without their brackets too, and an empty
      gossip message (the fallback's) is no answer.
    * v4: ``structured_output="auto"`` (the default) constrains the answers of self-hosted
      servers that take a schema.
    * v3: generation defaults (temperature 1.0, max_tokens 1024), ``prompt_style="terse"``,
      constrained answers by the ``schema`` override, placeholder answers refused.
    * v2: the gossip of the donation, prisoner's dilemma and trust prompts is quoted without its
      tone, as in the reference (``show_tones=True`` shows it, as v1 did).
    * v1: the game's settings are read from the env's ``rules`` message; the seat options
      ``gossip``, ``cost``, ``benefit``, ``multiplier``, ``discount``, ``initial_resources``,
      ``n_agents``, ``n_sellers`` and ``rounds`` are gone.
    * v0: first version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.agents.llm import gossip_answers as answers
from socialsim.agents.llm.base import LLMAgent
from socialsim.agents.llm.gossip_prompts import HORIZONS, PROMPT_STYLES, SeatPrompts, fragment
from socialsim.agents.llm.gossip_tom import answer_probe
from socialsim.envs.gossip.notebook import Meeting, Notebook
from socialsim.envs.gossip.protocol import GAME_OF_ROLE, GOSSIP

from socialsim.agent import Question
from socialsim.bus import Message

#: Used unless the model table sets them: temperature 1 (the one reasoning models accept) and a
#: ceiling on a reply's length (an answer is a short JSON object).
GENERATION_DEFAULTS = {"temperature": 1.0, "max_tokens": 1024}


class GossipLLMAgent(LLMAgent):
    """An LLM player of the gossip games; see the module docstring for the arguments."""

    plays = {"gossip": {"*"}}

    default_max_attempts = 3
    generation_defaults = GENERATION_DEFAULTS

    def __init__(
        self,
        model: str | Mapping[str, Any],
        equilibrium_knowledge: bool = True,
        horizon: str = "infinite",
        reflection: bool = False,
        display_names: bool | Mapping[str, str] = True,
        show_tones: bool = False,
        structured_output: bool | str = "auto",
        max_words: int = 150,
        max_attempts: int | None = None,
        drop_failed_attempts: bool = False,
        prompt_style: str = "full",
        retry_temperature: float | None = 0.7,
        system_as_user: bool = False,
    ):
        super().__init__(
            model,
            max_attempts,
            drop_failed_attempts,
            retry_temperature,
            structured_output,
            system_as_user,
        )
        if prompt_style not in PROMPT_STYLES:
            raise ValueError(
                f"prompt_style: must be one of {', '.join(PROMPT_STYLES)}, got {prompt_style!r}"
            )
        self.prompt_style = prompt_style
        for name, value in (
            ("equilibrium_knowledge", equilibrium_knowledge),
            ("reflection", reflection),
            ("show_tones", show_tones),
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
        self.show_tones = show_tones
        self.max_words = max_words

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.notebook = Notebook(agent_id)
        self.reasons: dict[int, dict[str, str]] = {}  # round -> decision -> my justification
        self.prompts = SeatPrompts(
            self.notebook,
            self.reasons,
            equilibrium_knowledge=self.equilibrium_knowledge,
            horizon=self.horizon,
            display_names=self.display_names,
            show_tones=self.show_tones,
            terse=self.prompt_style == "terse",
        )

    @property
    def gossip(self) -> bool:
        """Whether the env's rules message says gossip is on."""
        return self.prompts.gossip

    # -- reading what the env gives -----------------------------------------------------------

    def read(self, messages: Sequence[Message], info: Mapping[str, Any]) -> None:
        """Take in the new inbox messages and check ``info["role"]`` against the rules."""
        self.notebook.read(messages)
        game = self.notebook.game.name  # raises when no rules message has been read
        role = info.get("role")
        if role is not None:
            if role not in GAME_OF_ROLE:
                raise ValueError(
                    f"info['role']: {role!r} is not a role of the gossip games "
                    f"({', '.join(GAME_OF_ROLE)})"
                )
            if GAME_OF_ROLE[role] != game:
                raise ValueError(
                    f"info['role']: {role!r} is a role of the {GAME_OF_ROLE[role]} game, but "
                    f"the rules message says {game!r}"
                )

    def current_meeting(self, info: Mapping[str, Any]) -> Meeting:
        meeting = self.notebook.meetings.get(info.get("round"))
        if meeting is None or meeting.other != info.get("counterpart"):
            raise ValueError(
                f"{self.agent_id}: no match message for round {info.get('round')!r} with "
                f"{info.get('counterpart')!r} reached this agent"
            )
        return meeting

    def chat(
        self, meeting: Meeting, decision: str, form: str, notes: str | None = None
    ) -> list[dict[str, str]]:
        """The messages sent for ``decision``."""
        return [
            {"role": "system", "content": self.prompts.system()},
            {"role": "user", "content": self.prompts.decision(meeting, decision, form, notes)},
        ]

    # -- acting -------------------------------------------------------------------------------

    async def reflect(self, meeting: Meeting) -> str | None:
        """The agent's own summary of its memory and the log (``None`` after invalid answers)."""
        chat = [
            {"role": "system", "content": self.prompts.system()},
            {"role": "user", "content": self.prompts.reflection(meeting)},
        ]
        outcome = await self.ask(
            chat,
            answers.parse_reflection,
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
        self.read(messages, info)
        game = self.notebook.game
        decision = info.get("decision")
        if decision not in game.decisions:
            raise ValueError(
                f"info['decision']: {decision!r} is not a decision of the "
                f"{game.name} game for role {info.get('role')!r}"
            )
        meeting = self.current_meeting(info)
        notes = await self.reflect(meeting) if self.reflection else None
        most = answers.limit(decision, meeting, self.prompts.number("multiplier"))
        form = answers.answer_form(game, decision, most, self.max_words)
        overrides = {}
        if await self.constrained():
            overrides["schema"] = answers.answer_schema(game, decision, most, self.max_words)
        outcome = await self.ask(
            self.chat(meeting, decision, form, notes),
            lambda text: answers.parse_answer(game, decision, text, most, self.max_words),
            decision=decision,
            correction=lambda reason: fragment("correction", reason=reason, form=form),
            fallback=lambda: (answers.fallback(game, decision), ""),
            **overrides,
        )
        choice, justification = outcome.value
        if decision != GOSSIP:
            self.notebook.note_move(meeting.round, decision, choice)
        if justification.strip():
            self.reasons.setdefault(meeting.round, {})[decision] = justification
        return answers.to_action(decision, choice, justification)

    # -- side questions (the gossip theory-of-mind probes) ------------------------------------

    async def aanswer(self, question: Question) -> Any:
        return await answer_probe(self, question)
