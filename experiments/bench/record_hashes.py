"""Fingerprints of the records of a few bundled experiments at fixed seeds, to check that a
change to the runner, the log or a backend leaves every record as it was.

Each experiment is run into a fresh temporary directory through :func:`socialsim.run`; its
fingerprint is the SHA-256 of the records' canonical JSON without ``timing``
(:meth:`EpisodeRecord.content`), in key order, so the same seeds must print the same digests on
every backend and worker count. Run it before a change and after, and compare::

    python experiments/bench/record_hashes.py [--workers 2] [--backend ray]

Printed on 2026-12-01 with main's runner (ceacdcd, 1 and 2 workers) before the rework and after
it (1 and 2 workers, and Ray with 2 CPUs for the donation grid and decrypto_quickstart), equal
on every backend; printed again, the same, with 1 and 2 workers after the pool was made one per
run with its workers forked from the run, and the bus's thaw made to go by type:

| experiment | records | fingerprint |
|---|---|---|
| matching_pennies | 8 | 90da416e343dc0d4 |
| align_quickstart | 12 | 715070ee3b6c5f64 |
| align_donation_grid | 54 | 9fa6bdd9a4aca997 |
| align_trust | 16 | 2d304b03027d87fc |
| align_market | 12 | 57f93e0e6f8b63e5 |
| decrypto_quickstart | 6 | ef81add1519fe5b1 |
| decrypto_baselines | 16 | d01317cd1a520e63 |
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import time

import socialsim

EXPERIMENTS = {
    "matching_pennies": ["episodes=4"],
    "align_quickstart": ["episodes=2"],
    "align_donation_grid": ["episodes=1"],
    "align_trust": ["episodes=2"],
    "align_market": ["episodes=2"],
    "decrypto_quickstart": ["episodes=3"],
    "decrypto_baselines": ["episodes=2"],
}


def fingerprint(name: str, overrides: list[str]) -> tuple[str, int, float]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        results = socialsim.run(name, out=out, overrides=overrides)
        wall = time.perf_counter() - start
        digest = hashlib.sha256()
        records = results.records(include_failed=True)
        for record in records:
            digest.update(record.content().encode())
            digest.update(b"\n")
        return digest.hexdigest()[:16], len(records), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--backend", default="local")
    parser.add_argument("--only", nargs="*", help="experiment names (default: all)")
    args = parser.parse_args()
    extra = [f"workers={args.workers}", f"backend={args.backend}"]
    for name, overrides in EXPERIMENTS.items():
        if args.only and name not in args.only:
            continue
        digest, count, wall = fingerprint(name, [*overrides, *extra])
        print(f"{name:24s} {count:4d} records  {digest}  ({wall:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
