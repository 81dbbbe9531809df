"""The shipped reference pools of ``socialsim rate``, one TOML file per version."""
