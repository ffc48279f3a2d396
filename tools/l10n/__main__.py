"""`python -m tools.l10n extract|build|check|report`: see `tools.l10n.cli`."""

import sys

from tools.l10n.cli import main

sys.exit(main())
