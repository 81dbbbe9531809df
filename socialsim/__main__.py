"""``python -m socialsim``: the ``socialsim`` command."""

import sys

from socialsim.cli import main

if __name__ == "__main__":
    sys.exit(main())
