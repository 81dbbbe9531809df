"""How an LLM gossip player answers the theory-of-mind probes of
:mod:`socialsim.envs.gossip.tom`: in a side chat (its system prompt and the question, written in
``prompts/gossip/tom_questions.txt``) that never enters its game's history. The answer is one
of the probe's words, or ``None`` after invalid replies (the probe then records the question as
unanswered; an "unknown" reply is an abstention, recorded as such and never scored).
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from socialsim.agents.llm.seat_text import quote
from socialsim.envs.gossip import tom

from socialsim.agent import Question
from socialsim.bus import Message
from socialsim.llm.parsing import AnswerParseError


@cache
def templates() -> dict[str, string.Template]:
    """The ``[section]`` templates of ``prompts/gossip/tom_questions.txt``."""
    text = (
        resources.files("socialsim.agents.llm")
        .joinpath("prompts", "gossip", "tom_questions.txt")
        .read_text(encoding="utf-8")
    )
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = re.fullmatch(r"\[(\w+)\]", line.strip())
        if header:
            current = sections.setdefault(header.group(1), [])
        elif current is not None:
            current.append(line)
    return {name: string.Template("\n".join(lines).strip()) for name, lines in sections.items()}


#: the context's fields that hold an agent id (shown by the seat's display name)
AGENT_FIELDS = ("you", "about", "author", "viewer")


def audience(to: Any, name: Callable[[str], str]) -> str:
    return "everyone" if to == "*" else ", ".join(name(a) for a in to)


def question_prompt(question: Question, name: Callable[[str], str] = str) -> str:
    """The user message of one probe question; ``name`` shows an agent id as the seat's
    prompts do."""
    context: Mapping[str, Any] = question.context
    parts = templates()

    def said(payload: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **payload,
            "author": name(payload["author"]),
            "about": name(payload["about"]),
            "message": quote(payload.get("message") or ""),  # seat text: a JSON string
        }

    lines = [
        parts["gossip_line"].substitute(said(m["payload"]), to=audience(m["to"], name))
        for m in context.get("inbox_gossip", ())
    ]
    values = {k: v for k, v in context.items() if isinstance(v, (str, int, float))}
    values.update({k: name(context[k]) for k in AGENT_FIELDS if k in context})
    if context.get("gossip_said") is not None:
        values.update({f"gossip_{k}": v for k, v in said(context["gossip_said"]).items()})
    intro = parts["intro"].substitute(
        probe=question.kind,
        round=context.get("round"),
        you=values.get("you"),
        gossip_lines="\n".join(lines) or "(none)",
    )
    body = parts[question.kind].substitute(values)
    return f"{intro}\n\n{body}\n\n{parts['form'].template}"


def parse_probe_reply(kind: str, text: str) -> str:
    """The reply's answer: a probe word or an abstention ("unknown", kept as such); anything
    else raises :class:`AnswerParseError`."""
    try:
        value = json.loads(text.strip())
    except ValueError:
        value = text
    if isinstance(value, Mapping):
        value = value.get("answer")
    if not isinstance(value, str):
        raise AnswerParseError(f'no "answer" string in the reply {text[:80]!r}')
    word = value.strip().strip(".").casefold()
    if word in tom.ANSWERS[kind] or word == "unknown":
        return word
    raise AnswerParseError(f"{value!r} is not one of {', '.join(tom.ANSWERS[kind])} (or unknown)")


async def answer_probe(agent: Any, question: Question) -> str | None:
    """``agent``'s answer (a :class:`~socialsim.agents.llm.gossip.GossipLLMAgent`), asked in a
    side chat of its system prompt and the question."""
    if question.kind not in tom.ANSWERS:
        raise NotImplementedError(
            f"the LLM gossip player answers {', '.join(tom.GOSSIP_PROBES)}, not {question.kind!r}"
        )
    if agent.notebook.rules is None:  # asked before its first decision: the rules are unread
        unread: Sequence[Mapping[str, Any]] = question.context.get("unread", ())
        agent.notebook.read([Message.from_json(m) for m in unread if m["kind"] == "rules"])
    chat = [
        {"role": "system", "content": agent.prompts.system()},
        {"role": "user", "content": question_prompt(question, agent.prompts.name)},
    ]
    form = templates()["form"].template
    agent.count("tom_questions")
    outcome = await agent.ask(
        chat,
        lambda text: parse_probe_reply(question.kind, text),
        decision=f"tom:{question.kind}",
        correction=lambda reason: f"Your last reply was not a valid answer: {reason}. {form}",
        fallback=lambda: None,
    )
    # this question's invalid answers and fallback go to the side-question counters
    invalid = outcome.attempts if outcome.fallback else outcome.attempts - 1
    agent.counters["invalid_answers"] = agent.counters.get("invalid_answers", 0) - invalid
    agent.count("tom_invalid_answers", invalid)
    if outcome.fallback:
        agent.counters["fallbacks"] = agent.counters.get("fallbacks", 0) - 1
        agent.count("tom_fallbacks")
    return outcome.value
