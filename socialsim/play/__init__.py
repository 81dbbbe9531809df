"""The terminal front end (``socialsim play``) and the one-game sessions it shares with the web
front end: people in some seats of a game, agents in the others, logged like any run."""
