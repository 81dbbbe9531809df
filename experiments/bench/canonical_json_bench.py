"""Benchmark: what :func:`socialsim.plain_json.canonical_json` pays to keep the standard encoder's
text (floats below 1e-4 written ``1e-05``, where orjson writes ``1e-5`` or ``0.00001``) by
sniffing orjson's bytes, against the simple rules that would replace the sniff.

Each record of a scripted run is encoded, as its line of ``episodes.jsonl`` is, by:

* ``orjson_text``: today's path, orjson's bytes, the sniff (``b"0.0000"``, then a digit before
  ``e-``), the decode; the sniff's own cost is this less ``orjson.dumps``;
* a walk of the value for small floats first (the standard encoder for a value that has one,
  orjson for the others): the rule stated on the values instead of the text;
* a walk that copies the value with each small float as an ``orjson.Fragment`` of its ``repr``
  (the standard encoder's text for a float), then orjson: one encoder, no fallback for floats
  (the script checks that it gives ``canonical_json``'s text for every record);
* the standard library's ``json`` alone.

orjson has no option that writes floats as ``repr`` does (its options sort keys, indent, pass
types through, serialise numpy), so a rule on the values has to walk them in Python. Figures are
per line and as a share of what ``socialsim run`` spends per episode (its CPU time over the
episodes, the records' encoding included).

    python experiments/bench/canonical_json_bench.py [--experiment align_donation_grid]
        [--trials 5] [--set KEY=VALUE ...]

The lines are those of one episode per cell; ``socialsim run``'s CPU per episode is that of a
run of three episodes per cell less one of one.

Measured 2026-12-05, ``align_donation_grid`` (54 lines of about 32 KB), on 2 cores shared
with five other helpers' jobs. By instruction count (valgrind callgrind, three passes over the
lines of one run less one pass, the lines taken as ``Episode.line`` encodes them), against
18.06 M instructions per episode of ``socialsim run`` (the same grid, ``--set episodes=3``
less ``episodes=1``), independent of the load:

| encoding | instructions per line | share of an episode |
|---|---|---|
| ``orjson.dumps`` | 0.76 M | 4.2% |
| ``orjson_text`` (dumps, sniff, decode) | 0.99 M | 5.5% |
| of which the sniff | 0.16 M | **0.9%** |
| walk for small floats, then orjson | 4.11 M | 22.7% (+17.2 points) |
| small floats as ``orjson.Fragment``, then orjson | 4.75 M | 26.3% (+20.8 points) |
| ``json`` alone | 4.94 M | 27.3% (+21.8 points) |

By CPU time, this script, default options, load average 5.2 (two runs, 2.98 and 2.75 ms of
``socialsim run`` CPU per episode):

| encoding | us per line | share of an episode |
|---|---|---|
| ``orjson.dumps`` | 43.4; 45.4 | 1.5%; 1.6% |
| ``orjson_text`` (dumps, sniff, decode) | 87.0; 87.3 | 2.9%; 3.2% |
| of which the sniff and decode | 43.6; 41.9 | **1.5%; 1.5%** |
| walk for small floats, then orjson | 265.4; 266.3 | 8.9%; 9.7% |
| small floats as ``orjson.Fragment``, then orjson | 343.7; 339.4 | 11.6%; 12.3% |
| ``json`` alone | 403.9; 414.9 | 13.6%; 15.1% |

A rule on the values costs 6-17 points of an episode where the sniff costs 1-1.5, so the sniff
stays. (No line of this grid holds a small float, nor a false alarm: every line takes orjson's
text; the fingerprints of ``record_hashes.py`` would be the same under either rule.)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from types import MappingProxyType
from typing import Any

import orjson

import socialsim
from socialsim.plain_json import _ORJSON, _encodable, _standard, canonical_json, orjson_text

_SCALARS = (str, int, bool, type(None))


def has_small_float(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return 0.0 < abs(value) < 1e-4
    if kind is dict or kind is MappingProxyType:
        return any(has_small_float(v) for v in value.values() if type(v) not in _SCALARS)
    if kind is list or kind is tuple:
        return any(has_small_float(v) for v in value if type(v) not in _SCALARS)
    return False


def small_floats_as_fragments(value: Any) -> Any:
    kind = type(value)
    if kind is float:
        return orjson.Fragment(repr(value)) if 0.0 < abs(value) < 1e-4 else value
    if kind is dict or kind is MappingProxyType:
        return {
            k: v if type(v) in _SCALARS else small_floats_as_fragments(v) for k, v in value.items()
        }
    if kind is list or kind is tuple:
        return [v if type(v) in _SCALARS else small_floats_as_fragments(v) for v in value]
    return value


def dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_encodable, option=_ORJSON)


def fragments_text(value: Any) -> str:
    return dumps(small_floats_as_fragments(value)).decode()


CASES = {
    "orjson.dumps": dumps,
    "orjson_text (dumps, sniff, decode)": orjson_text,
    "walk for small floats, then orjson": lambda v: (
        _standard(v) if has_small_float(v) else dumps(v).decode()
    ),
    "small floats as orjson.Fragment, then orjson": fragments_text,
    "json alone": _standard,
}


def played(experiment: str, overrides: list[str], episodes: int) -> tuple[float, list]:
    """``socialsim run`` of ``experiment``, ``episodes`` per cell, into a temporary directory:
    its CPU time and its records."""
    with tempfile.TemporaryDirectory() as out:
        cpu = time.process_time()
        results = socialsim.run(experiment, out=out, overrides=[*overrides, f"episodes={episodes}"])
        return time.process_time() - cpu, results.records()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", default="align_donation_grid")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--set", action="append", default=[], help="overrides, as in socialsim run")
    args = parser.parse_args()
    overrides = ["workers=1", *args.set]
    values = [record.to_json() for record in played(args.experiment, overrides, 1)[1]]
    # socialsim run's CPU per episode: a run of 3 episodes per cell less one of 1 (imports and
    # the fixed costs cancel)
    cpu, records = played(args.experiment, overrides, 1)
    cpu3, records3 = played(args.experiment, overrides, 3)
    per_episode = (cpu3 - cpu) / (len(records3) - len(records))
    for value in values:  # the Fragment rule is exact: the standard encoder's text
        assert fragments_text(value) == canonical_json(value)
    size = sum(len(dumps(v)) for v in values) / len(values)
    print(
        f"{args.experiment}: {len(values)} lines of {size / 1000:.1f} KB; socialsim run "
        f"{per_episode * 1e3:.2f} ms CPU per episode; best of {args.trials}"
    )
    best = {}
    for _ in range(args.trials):  # interleaved, so a busy spell is shared out
        for name, encode in CASES.items():
            start = time.process_time()
            for value in values:
                encode(value)
            spent = (time.process_time() - start) / len(values)
            best[name] = min(best.get(name, spent), spent)
    for name, spent in best.items():
        print(f"  {name:46s} {spent * 1e6:8.1f} us per line, {spent / per_episode:6.1%}")
    sniff = best["orjson_text (dumps, sniff, decode)"] - best["orjson.dumps"]
    print(
        f"  {'of which the sniff and decode':46s} {sniff * 1e6:8.1f} us, {sniff / per_episode:6.1%}"
    )


if __name__ == "__main__":
    main()
