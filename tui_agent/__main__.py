"""`python -m tui_agent` runs the `tui-agent` command."""

import sys

from tui_agent.cli import main

sys.exit(main())
