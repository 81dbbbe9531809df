"""Scripted "models" of the gossip games for the LLM-agent tests: each reads the prompt the
agent sent, as a model would, and answers in the JSON the prompt asks for.

``GossipPolicy(defectors)`` plays every game and role by one rule: cooperate unless the public
log holds a criticism of the counterpart (a line with the tone ``criticism`` or, where the
prompt shows no tones, as the reference's donation, PD and trust prompts do, a message that
says "Beware of X."); the agents named in ``defectors`` always defect. It
gossips the truth: praising for a cooperative move, criticism otherwise. The policies take
``(messages, request)`` as the test server calls them (``ScriptedModel`` passes its settings as
the second argument, which they ignore too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

Policy = Callable[[list[dict[str, Any]], Any], str]

LOG_LINE = re.compile(r"^Round \d+: (\S+) about (\S+) \((\w+)\): ", re.MULTILINE)
WARNING = re.compile(r'^Round \d+: \S+ about (\S+): ".*\bBeware of \1\."$', re.MULTILINE)
NAME = re.compile(r"^You are (\S+), one of", re.MULTILINE)
REFLECTION = "So far everyone I met treated me as I treated them."


def first_prompt(messages: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """(system, first user message) of a chat: the state, whatever re-prompts follow. Sent
    with ``system_as_user``, the first user message holds the system text too, and is both."""
    user = next(m["content"] for m in messages if m["role"] == "user")
    system = next((m["content"] for m in messages if m["role"] == "system"), user)
    return system, user


def criticised(prompt: str, name: str) -> bool:
    if any(about == name and tone == "criticism" for _, about, tone in LOG_LINE.findall(prompt)):
        return True
    return name in WARNING.findall(prompt)


def answer(justification: str, **fields: Any) -> str:
    return json.dumps({"justification": justification, **fields})


class GossipPolicy:
    """Cooperate unless the log criticises the counterpart; ``defectors`` always defect."""

    def __init__(self, defectors: Iterable[str] = ()):
        self.defectors = set(defectors)

    def __call__(self, messages: list[dict[str, Any]], request: Any = None) -> str:
        system, prompt = first_prompt(messages)
        me = NAME.search(system).group(1)
        if prompt.startswith("Side question: "):
            return json.dumps({"answer": probe_answer(prompt, system)})
        if "plain text, summarise" in prompt:
            return f"{REFLECTION} ({me})"
        if '"tone"' in prompt:
            return self.gossip(prompt)
        if '"donor_action"' in prompt:
            other = re.search(r"You are the donor and (\S+) is your recipient", prompt).group(1)
            nice = me not in self.defectors and not criticised(prompt, other)
            return answer(
                f"{other} has a clean record" if nice else "no",
                donor_action="cooperate" if nice else "defect",
            )
        if '"player_action"' in prompt:
            other = re.search(r"You play against (\S+)\.", prompt).group(1)
            nice = me not in self.defectors and not criticised(prompt, other)
            return answer("reputation", player_action="C" if nice else "D")
        if '"investor_action"' in prompt:
            other = re.search(r"You are the investor and (\S+) is your responder", prompt).group(1)
            most = float(re.search(r"<a number between 0 and ([\d.]+)>", prompt).group(1))
            nice = me not in self.defectors and not criticised(prompt, other)
            return answer("trust", investor_action=most if nice else 0)
        if '"responder_action"' in prompt:
            invested = float(re.search(r"invested ([\d.]+), so you received", prompt).group(1))
            nice = me not in self.defectors
            return answer("fair share", responder_action=2 * invested if nice else 0)
        if '"seller_action"' in prompt:
            return answer("quality", seller_action="L" if me in self.defectors else "H")
        if '"buyer_action"' in prompt:
            other = re.search(r"You are a buyer and (\S+) is your seller", prompt).group(1)
            return answer("reviews", buyer_action="s" if criticised(prompt, other) else "c")
        raise AssertionError(f"the policy cannot tell the decision of: {prompt[-300:]}")

    def gossip(self, prompt: str) -> str:
        donation = re.search(r"^(\S+) (cooperated|defected): \1 paid", prompt, re.MULTILINE)
        if donation:
            who, good = donation.group(1), donation.group(2) == "cooperated"
        elif match := re.search(r"You chose [CD] and (\S+) chose ([CD]):", prompt):
            who, good = match.group(1), match.group(2) == "C"
        elif match := re.search(
            r"You invested ([\d.]+), so (\S+) received [\d.]+, and \2 returned ([\d.]+)", prompt
        ):
            who, good = match.group(2), float(match.group(3)) >= float(match.group(1))
        elif match := re.search(r"^(\S+) invested ([\d.]+), so you received", prompt, re.MULTILINE):
            who, good = match.group(1), float(match.group(2)) > 0
        elif match := re.search(r"and (\S+) delivered (high|low) quality", prompt):
            who, good = match.group(1), match.group(2) == "high"
        else:
            raise AssertionError(f"the policy cannot tell what happened in: {prompt[:400]}")
        if good:
            return answer("true", tone="praising", gossip=f"{who} treated me well.")
        return answer("true", tone="criticism", gossip=f"{who} exploited me. Beware of {who}.")


SIDE_QUESTION = re.compile(r"^Side question: (\w+)$", re.MULTILINE)
SEEN_LINE = re.compile(r'^Round \d+: (\S+) about (\S+) \((\w+)\): ".*" \[sent to (.*)\]$', re.M)
ASKED = re.compile(
    r"^This gossip reached you: round \d+, (\S+) about (\S+) .* Has (\S+) seen it\?$", re.M
)
TOWARDS = re.compile(r"^(\S+) is about to decide towards (\S+)\.", re.MULTILINE)


def probe_answer(prompt: str, system: str = "") -> str:
    """A side question of the gossip theory-of-mind probes, answered from what the question
    shows: a reputation is bad if a criticism of the agent was sent where the viewer could see
    it, good if other gossip was, unrated if none; whether someone saw a gossip, by the rules
    (everyone, or its author and subject when ``system``, the seat's system prompt, says gossip
    reaches only them). It trusts every gossip, expects everyone to cooperate and to praise it."""
    kind = SIDE_QUESTION.search(prompt).group(1)
    if kind in ("reputation", "will_help"):
        viewer, about = TOWARDS.search(prompt).groups()
        tones = [
            tone
            for _, whom, tone, to in SEEN_LINE.findall(prompt)
            if whom == about and (to == "everyone" or viewer in to.split(", "))
        ]
        bad = "criticism" in tones
        if kind == "will_help":
            return "defect" if bad else "cooperate"
        return "bad" if bad else "good" if tones else "unrated"
    if kind == "has_seen":  # the question leaves out the audience: the rules tell it
        author, about, viewer = ASKED.search(prompt).groups()
        limited = "a message reaches only its author" in system
        return "yes" if not limited or viewer in (author, about) else "no"
    return {"counterpart_move": "cooperate", "recipient_tone": "praising"}.get(kind, "true")


def attempts(messages: Sequence[dict[str, Any]]) -> int:
    """How many replies the chat already holds (0 for a first attempt)."""
    return sum(m["role"] == "assistant" for m in messages)


def bad_first(policy: Policy, bad: Sequence[str], decision_marker: str | None = None) -> Policy:
    """Answer with ``bad[k]`` at the k-th attempt while there are bad replies left, then as
    ``policy``; only for prompts holding ``decision_marker`` (all prompts if None)."""

    def wrapped(messages: list[dict[str, Any]], request: Any = None) -> str:
        _, prompt = first_prompt(messages)
        k = attempts(messages)
        if (decision_marker is None or decision_marker in prompt) and k < len(bad):
            return bad[k]
        return policy(messages, request)

    return wrapped
