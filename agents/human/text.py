"""Text shown to a person in a terminal: another player's words made safe to print, and the
rule between screens. The view modules (:mod:`.decrypto`, :mod:`.gossip`) write a seat's view
and its ending with these; :mod:`socialsim.play.terminal` prints them."""

from __future__ import annotations

from typing import Any

RULE = "=" * 72


def clean(text: Any) -> str:
    """Another player's text, safe to print: no escape sequences or control characters."""
    return "".join(c if c.isprintable() else "?" for c in str(text))
