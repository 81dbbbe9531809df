"""Analysis: pure functions from episode records to numbers, then tables and figures.

Nothing here re-runs a game. The package imports nothing itself, so that reading the metrics
does not load pandas or matplotlib.

| module | job |
|---|---|
| :mod:`~socialsim.analysis.interactions` | a gossip record read through the protocol's typed interaction records |
| :mod:`~socialsim.analysis.cooperation` | the gossip games' metrics: records -> numbers |
| :mod:`~socialsim.analysis.tom` | Decrypto's outcomes, grids and theory-of-mind scores |
| :mod:`~socialsim.analysis.tables` | numbers -> tables per episode, agent and grid cell |
| :mod:`~socialsim.analysis.figures` | tables -> PNG figures |
| :mod:`~socialsim.analysis.report` | ``socialsim report DIR``: the text, the CSV and PNG files |
"""
