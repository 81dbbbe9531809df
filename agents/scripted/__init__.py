"""Scripted agents: fixed rules, no model. One module per game family."""
