"""`python -m ms_lint`: the same as the `ms-lint` command."""
import sys

from ms_lint.cli import main

sys.exit(main())
