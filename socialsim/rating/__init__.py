"""Ratings against a frozen reference population (``socialsim rate``, ``socialsim leaderboard``).

An entrant (an agent spec, a Decrypto team, a policy) plays a versioned pool shipped with the
package (:mod:`.pool`, built by ``experiments/make_rating_pool.py``) in an ordinary results
directory (:mod:`.play`); its scores and its Bradley–Terry rating (:mod:`.model`), each with a
95% bootstrap interval over the pool's seeds, come from the records (:mod:`.scores`) and
accumulate in a ratings file that :mod:`.leaderboard` turns into a page.
"""
