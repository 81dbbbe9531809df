"""The browser front end (``socialsim serve``): sessions with people in some seats, one join
link per person, live seat pages. Needs the ``web`` extra."""
