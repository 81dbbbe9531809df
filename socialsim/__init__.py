"""socialsim: a multi-agent social simulation environment for gossip and theory-of-mind games."""

__version__ = "0.1.0"
