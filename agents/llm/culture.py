"""An LLM donor of the culture donor game (``culture_v0``), after Vallinder & Hughes (2024).

At birth, before its first decision, the agent writes its strategy in text, having read the
strategies of the previous generation's survivors (``survivors``: handed to it through its seat
spec by :func:`socialsim.society.experiment.next_seats`); a survivor keeps its own
(``strategy``) and writes nothing. Its first action carries the text, which the env posts on the
bus, so every generation's record keeps every agent's strategy. Each donation is then one
prompt: the strategy, the agent's and its recipient's resources, and the recipient's trace.

Arguments: ``model`` (as every LLM agent), ``strategy`` (a survivor's own text),
``survivors`` (the texts a newborn reads), ``max_words`` (the strategy's length, 100 by
default), ``max_attempts``, ``retry_temperature``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from socialsim.agents.llm.base import LLMAgent, render
from socialsim.agents.llm.seat_text import quote
from socialsim.envs.culture import protocol as p

from socialsim.bus import Message
from socialsim.llm import AnswerParseError

GAME = "culture"
#: what the game uses when no valid strategy came back: the record says so
NO_STRATEGY = "(no valid strategy was written; the game's fallback: give nothing)"
OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _object(text: str) -> dict[str, Any]:
    found = OBJECT.search(text)
    try:
        value = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise AnswerParseError("no JSON object found")
    return value


def parse_strategy(text: str, max_words: int) -> str:
    strategy = _object(text).get("strategy")
    if not isinstance(strategy, str) or not strategy.strip():
        raise AnswerParseError('"strategy" must be a non-empty string')
    if len(strategy.split()) > max_words:
        raise AnswerParseError(f'"strategy" has more than {max_words} words')
    return strategy.strip()


def parse_donation(text: str, punishment: bool) -> int:
    answer = _object(text)
    verb, fraction = answer.get("verb", "give"), answer.get("fraction")
    if verb not in (("give", "punish") if punishment else ("give",)):
        raise AnswerParseError(f'"verb" must be {"give or punish" if punishment else "give"}')
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
        raise AnswerParseError('"fraction" must be a number')
    try:
        return p.action_of(verb, float(fraction))
    except ValueError as error:
        raise AnswerParseError(str(error)) from None


def trace_lines(trace: Sequence[Mapping[str, Any]], recipient: str) -> str:
    if not trace:
        return f"{recipient} has no decisions as a donor yet."
    lines = [f"{recipient}'s last decisions as a donor:"]
    for t in trace:
        lines.append(
            f"- Round {t['round']}: {t['verb']} {t['fraction']:g} of its units "
            f"({t['amount']:g} units) to {t['recipient']}"
        )
    return "\n".join(lines)


class CultureLLMAgent(LLMAgent):
    """An LLM donor that writes its strategy at birth; see the module docstring."""

    plays = {"culture": {p.DECISION}}
    #: an [evolution] child inherits the whole seat spec; texts through ``strategy``/``survivors``
    heritable = True
    reads_strategies = True
    generation_defaults = {"temperature": 1.0, "max_tokens": 512}

    def __init__(
        self,
        model: str | Mapping[str, Any],
        strategy: str | None = None,
        survivors: Sequence[str] = (),
        max_words: int = 100,
        max_attempts: int | None = None,
        retry_temperature: float | None = 0.7,
    ):
        super().__init__(model, max_attempts, False, retry_temperature, False)
        if strategy is not None and (not isinstance(strategy, str) or not strategy.strip()):
            raise ValueError(f"strategy: a non-empty text or absent, got {strategy!r}")
        if isinstance(survivors, str) or not all(isinstance(s, str) for s in survivors):
            raise ValueError(f"survivors: a list of strategy texts, got {survivors!r}")
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
            raise ValueError(f"max_words: must be an integer >= 1, got {max_words!r}")
        self.inherited = strategy
        self.survivors = list(survivors)
        self.max_words = max_words

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.rules: Mapping[str, Any] | None = None
        self.strategy = self.inherited
        self.posted = False

    def system(self) -> str:
        r = self.rules
        rule = (
            f" Instead of giving, a donor may punish: it spends a fraction of its units and its "
            f"recipient loses {r['punishment_loss']:g} times as much."
            if r["punishment"]
            else ""
        )
        return render(
            GAME,
            "system",
            me=self.agent_id,
            n_agents=len(r["agents"]),
            initial_resources=f"{r['initial_resources']:g}",
            rounds=r["rounds"],
            multiplier=f"{r['multiplier']:g}",
            punishment_rule=rule,
        )

    async def write_strategy(self) -> str:
        texts = "\n".join(f"{k + 1}. {quote(text)}" for k, text in enumerate(self.survivors))
        survivors = render(GAME, "survivors", texts=texts) if self.survivors else ""
        form = '{"strategy": "<your strategy>"}'
        chat = [
            {"role": "system", "content": self.system()},
            {
                "role": "user",
                "content": render(GAME, "strategy", max_words=self.max_words, survivors=survivors),
            },
        ]
        outcome = await self.ask(
            chat,
            lambda text: parse_strategy(text, self.max_words),
            decision=p.STRATEGY,
            correction=lambda reason: render(GAME, "correction", reason=reason, form=form),
            fallback=lambda: NO_STRATEGY,
        )
        return outcome.value

    async def aact(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> Any:
        view = None
        for message in messages:
            if message.kind == p.RULES:
                self.rules = message.payload
            elif message.kind == p.RECIPIENT:
                view = message.payload
        if info.get("decision") != p.DECISION or view is None or self.rules is None:
            raise ValueError(
                f"info['decision']: expected {p.DECISION!r} with a recipient, got {info!r}"
            )
        if self.strategy is None:
            self.strategy = await self.write_strategy()
        punishment = bool(self.rules["punishment"])
        form = (
            '{"verb": "give" or "punish", "fraction": <0 to 1>}'
            if punishment
            else '{"fraction": <0 to 1>}'
        )
        prompt = render(
            GAME,
            "donate",
            strategy=self.strategy,
            round=view["round"],
            rounds=self.rules["rounds"],
            your_resources=f"{view['your_resources']:g}",
            recipient=view["recipient"],
            recipient_resources=f"{view['recipient_resources']:g}",
            trace=trace_lines(view["trace"], view["recipient"]),
            form=form,
        )
        outcome = await self.ask(
            [{"role": "system", "content": self.system()}, {"role": "user", "content": prompt}],
            lambda text: parse_donation(text, punishment),
            decision=p.DECISION,
            correction=lambda reason: render(GAME, "correction", reason=reason, form=form),
            fallback=lambda: p.FALLBACK,
        )
        action: dict[str, Any] = {p.DECISION: outcome.value}
        if not self.posted:  # the strategy reaches the record once per episode
            action[p.STRATEGY] = self.strategy
            self.posted = True
        return action
