"""python -m pipeline.cli"""

import sys

from pipeline.cli import entry

sys.exit(entry())
