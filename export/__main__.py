"""`python -m codemap.export MODEL --out DIR [--int8] [--fp16] [--optimize]`: same as `codemap export`."""
from __future__ import annotations

import sys

from codemap.cli import app


def main() -> None:
    app(args=["export", *sys.argv[1:]], prog_name="python -m codemap.export")


if __name__ == "__main__":
    main()
