"""Ratings against a frozen reference population (``socialsim rate``, ``socialsim leaderboard``).

An entrant (an agent spec, a Decrypto team, a policy) plays a versioned pool shipped with the
package (:mod:`.pool`, built by ``experiments/make_rating_pool.py``) in ordinary results
directories (:mod:`.play`), in every seat position and composition the pool's members played;
its scores and its Bradley–Terry rating (:mod:`.model`), each with a 95% cluster bootstrap
interval over the pool's seeds, come from the records (:mod:`.scores`), the rating beside its
held-out log-loss and the per-opponent win rates (:mod:`.held_out`), and accumulate in a
ratings file that :mod:`.leaderboard` turns into a page. From pool v2 on, a pool member rated
as an entrant on the pool's seeds gets its own frozen rating back.
"""
