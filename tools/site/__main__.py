"""`python -m tools.site build|sources`: see `tools.site.build`."""

import sys

from tools.site.build import main

sys.exit(main())
