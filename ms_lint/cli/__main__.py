"""`python -m ms_lint.cli`: the same as `ms-lint`."""
import sys

from ms_lint.cli import main

sys.exit(main())
