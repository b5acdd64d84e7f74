"""`python -m flowedit.cli …`: the same as the `flowedit` console script (editors start the server so)."""

import sys

from flowedit.cli import main

sys.exit(main())
