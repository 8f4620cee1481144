"""``python -m gpuroof`` runs the `gpuroof` command (handy where the script is not installed)."""

import sys

from ._main import main

sys.exit(main())
