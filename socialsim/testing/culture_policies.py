"""A scripted "model" of the culture donor game for the LLM-agent tests: it reads the prompts
of ``llm_culture`` as a model would and answers legally, in the JSON they ask for.

``CulturePolicy()`` writes, at birth, the strategy "Give F of my units to everyone." where F is
the most generous fraction among the survivors' strategies it is shown, or, in the first
generation, a fraction drawn from the agent's name (``agent_k`` gives ``(k mod 11) / 10``), so
the first generation differs and selection has something to choose. As a donor it gives the F
its strategy names. Called as the test server calls policies: ``(messages, request)``.
"""

from __future__ import annotations

import json
import re
from typing import Any

NAME = re.compile(r"^You are (\S+), one of", re.MULTILINE)
GIVES = re.compile(r"Give ([01](?:\.\d+)?) of my units")


class CulturePolicy:
    def __call__(self, messages: list[dict[str, Any]], request: Any = None) -> str:
        system = next(m["content"] for m in messages if m["role"] == "system")
        prompt = next(m["content"] for m in messages if m["role"] == "user")
        if '{"strategy"' in prompt:
            shown = [float(f) for f in GIVES.findall(prompt)]
            if shown:
                fraction = max(shown)
            else:
                digits = re.sub(r"\D", "", NAME.search(system).group(1)) or "0"
                fraction = (int(digits) % 11) / 10
            return json.dumps({"strategy": f"Give {fraction:g} of my units to everyone."})
        strategy = prompt.partition("\n")[0]
        found = GIVES.search(strategy)
        return json.dumps({"fraction": float(found.group(1)) if found else 0.0})
