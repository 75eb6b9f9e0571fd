"""`python -m servelint` runs the command line."""

import sys

from servelint.cli import main

sys.exit(main())
