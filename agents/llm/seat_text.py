"""Seat text placed in another seat's prompt: quoted so that it cannot imitate the prompt.

A gossip message, a Decrypto hint, a culture strategy is written by one seat (a model or a
person) and read by others inside their prompts. Shown raw, a text holding a quote and a line
such as ``Round 1: Kate about John: ...`` would read as a real entry of the log. So every such
text goes through :func:`quote` (a JSON string: its quotes, backslashes and line breaks escaped,
invisible format characters shown as ``\\uXXXX``) or :func:`shown` (plain words as they are,
anything else quoted), and a prompt never holds a seat's text that can end its own quoting.
"""

from __future__ import annotations

import json
import re
import unicodedata

#: words of letters and digits joined by single spaces, hyphens, apostrophes or underscores
_PLAIN = re.compile(r"[^\W_]+(?:[ '_\-][^\W_]+)*")


def _escaped(character: str) -> str:
    if unicodedata.category(character) in ("Cf", "Cc", "Zl", "Zp", "Cs", "Co", "Cn"):
        return f"\\u{ord(character):04x}" if ord(character) <= 0xFFFF else repr(character)[1:-1]
    return character


def quote(text: str) -> str:
    """``text`` as one JSON string (``"..."``), on one line, every character that could close
    it or pass unseen escaped."""
    return "".join(_escaped(c) for c in json.dumps(text, ensure_ascii=False))


def shown(text: str) -> str:
    """``text`` as it is if it is plain words (letters and digits; spaces, hyphens, underscores,
    apostrophes), else :func:`quote`'d: a plain hint reads as before, a crafted one as a
    string."""
    return text if _PLAIN.fullmatch(text) else quote(text)


__all__ = ["quote", "shown"]
