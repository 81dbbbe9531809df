"""LLM-backed agents: ``base.py`` holds the answer loop they share; one module per game family
(``decrypto.py``, ``gossip.py``) with its prompt templates under ``prompts/<game>/``."""
