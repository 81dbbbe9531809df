"""Analysis: pure functions from episode records to numbers, then tables, figures and pages.

Nothing here re-runs a game. The package imports nothing itself, so that reading the metrics
does not load pandas or matplotlib. Undefined values follow one rule everywhere
(:mod:`~socialsim.analysis.stats`).

| module | job |
|---|---|
| :mod:`~socialsim.analysis.interactions` | a gossip record read through the protocol's typed interaction records |
| :mod:`~socialsim.analysis.cooperation` | the gossip games' metrics: records -> numbers |
| :mod:`~socialsim.analysis.entrant` | cooperation among residents, towards and by the entrant, apart |
| :mod:`~socialsim.analysis.dynamics` | resources, Gini, reputation accuracy and reputations round by round |
| :mod:`~socialsim.analysis.tom` | Decrypto's outcomes, grids and theory-of-mind scores |
| :mod:`~socialsim.analysis.decrypto_tricks` | each Decrypto ToM score beside its tricks (constant, rules, abstaining, random) and the oracle |
| :mod:`~socialsim.analysis.baselines` | the best trick, and a score normalised between it and the oracle |
| :mod:`~socialsim.analysis.health` | LLM health per seat, failures by reason |
| :mod:`~socialsim.analysis.stats` | undefined values, strict JSON, printed numbers, mean / SEM / bootstrap CI |
| :mod:`~socialsim.analysis.tables` | numbers -> tables per episode, agent, round and grid cell |
| :mod:`~socialsim.analysis.figures`, :mod:`~socialsim.analysis.decrypto_figures` | tables -> PNG figures |
| :mod:`~socialsim.analysis.report` | ``socialsim report DIR``: the text, CSV, JSON and PNG files, report.html |
| :mod:`~socialsim.analysis.page`, :mod:`~socialsim.analysis.transcript` | report.html and transcripts.html |
| :mod:`~socialsim.analysis.compare` | ``socialsim report A B``: runs side by side |
"""
