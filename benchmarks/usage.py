"""The usage guard of the benchmark scripts that read bare positional arguments: `--help` (or
too few arguments) prints the script's docstring instead of becoming an output folder."""

from __future__ import annotations

import sys


def positional(doc: str, least: int = 1) -> list[str]:
    """sys.argv[1:], once it is sure to hold at least `least` values before any option (later
    arguments may be options a script passes on)."""
    args = sys.argv[1:]
    asked = any(a in ("-h", "--help") for a in args)
    if asked or len(args) < least or any(a.startswith("-") for a in args[:least]):
        print(doc.strip())
        sys.exit(0 if asked else 2)
    return args
