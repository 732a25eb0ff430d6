"""`python -m tui_agent.demo_site [--port P]`: serve the demo shop until Ctrl+C."""

import argparse

from tui_agent.demo_site.server import serve

parser = argparse.ArgumentParser(prog="python -m tui_agent.demo_site")
parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free)")
serve(parser.parse_args().port)
