"""socialsim: a multi-agent social simulation environment for gossip and theory-of-mind games."""

__version__ = "0.1.0"

# The Gymnasium seat views (socialsim/Donation-v0, ...): ids and entry-point strings only.
from socialsim.rl.registration import register as _register_views

_register_views()
