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

from socialsim.society.evolution import Evolution
from socialsim.society.generations import EvolvingSociety
from socialsim.society.mesa_model import SocietyModel, run_society
from socialsim.society.vectorised import ReplicatedSociety, VectorSociety

__all__ = [
    "Evolution",
    "EvolvingSociety",
    "ReplicatedSociety",
    "SocietyModel",
    "VectorSociety",
    "run_society",
]
