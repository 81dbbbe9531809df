"""The agent protocol, re-exported for agent authors: its types live in the engine
(:mod:`socialsim.agent`) so that neither the runner nor any env imports ``socialsim.agents``."""

from socialsim.agent import Agent, Question, RunContext

__all__ = ["Agent", "Question", "RunContext"]
