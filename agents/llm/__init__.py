"""LLM-backed agents: ``base.py`` holds the answer loop they share; one module per game family
(``decrypto.py``, ``gossip.py``) with its prompt templates under ``prompts/<game>/``."""

#: Declared here, not in the family modules, so that listing kinds imports no LLM code.
KINDS = {
    "llm_gossip": "socialsim.agents.llm.gossip:GossipLLMAgent",
    "llm_decrypto": "socialsim.agents.llm.decrypto:DecryptoLLMAgent",
    "llm_culture": "socialsim.agents.llm.culture:CultureLLMAgent",
}
