"""``python -m validate`` runs the `gpuroof` command (handy where the script is not installed)."""

import sys

from ._cli import main

sys.exit(main())
