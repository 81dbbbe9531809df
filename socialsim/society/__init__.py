"""Population models of the gossip donation game: no PettingZoo adapter, no bus, no text.

=================  ==============================================================================
Mesa model         :mod:`socialsim.society.mesa_model`: :class:`SocietyModel` (a ``mesa.Model``),
                   :func:`run_society`; the rules of a round are in its docstring
Numpy engine       :mod:`socialsim.society.vectorised`: :class:`VectorSociety`, the same model on
                   arrays for 10^5 agents, with the same statistics for the same seed
Replicates         :class:`ReplicatedSociety`: many seeds of one population as one array
                   program; replicate ``r`` is the run seeded ``seeds[r]``
Evolution          :mod:`socialsim.society.evolution`: the rules between generations (selection
                   with mutation, Fermi imitation), exact draws; :mod:`.generations`:
                   :class:`EvolvingSociety`, generations of a ReplicatedSociety;
                   :mod:`.episodes`: the same generations played through ``donation_v0``
Vocabulary         :mod:`socialsim.society.population`: the strategies, the checked arguments
                   and the statistics' columns, shared by both engines
Norms and tones    :mod:`socialsim.envs.gossip.norms`, shared with the gossip envs
=================  ==============================================================================
"""

from socialsim import lazy

#: where each name lives: imported when first asked for, so that a run of evolution
#: experiments (which needs only the rules) does not import Mesa
_HOMES = {
    "Evolution": "socialsim.society.evolution",
    "EvolvingSociety": "socialsim.society.generations",
    "SocietyModel": "socialsim.society.mesa_model",
    "run_society": "socialsim.society.mesa_model",
    "ReplicatedSociety": "socialsim.society.vectorised",
    "VectorSociety": "socialsim.society.vectorised",
}

__all__ = sorted(_HOMES)
__getattr__ = lazy.attributes(__name__, _HOMES)
