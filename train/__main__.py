"""`python -m codemap.train [--config PRESET] [--key value ...]`; see loop.py for examples."""
from __future__ import annotations

import json
import logging
import sys

from codemap.errors import CodemapError

from .config import parse_overrides
from .loop import train


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:
        summary = train(parse_overrides(sys.argv[1:] if argv is None else argv))
    except CodemapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
