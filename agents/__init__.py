"""Agents, installed as ``socialsim.agents``: the protocol in ``base.py``, one folder a family."""
