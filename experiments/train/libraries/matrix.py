"""What the library scripts beside it share: their command line and the JSON line they print
(``{"library", "donation": {"steps", "cooperation": [first, last]}, "decrypto": {...}}``), which
tests/test_marl_libraries.py reads. Each script puts this folder first on ``sys.path`` when run.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def steps(argv: list[str] | None, description: str, default: int) -> int:
    """The ``--steps`` of the command line: the training budget on the donation game."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=default)
    return parser.parse_args(argv).steps


def report(library: str, steps: int, cooperation: list[float], decrypto: Any) -> dict:
    """Print and return the script's result."""
    result = {
        "library": library,
        "donation": {"steps": steps, "cooperation": [float(c) for c in cooperation]},
        "decrypto": decrypto,
    }
    print(json.dumps(result))
    return result
