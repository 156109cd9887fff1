"""``python -m tui [--home DIR] [--demo] [--root DIR] [--pattern GLOB]``.

The real entry point is ``relay-search`` (``core.front.cli``); this one is for working on
the app itself. ``--demo`` writes the demo corpus into a temporary HOME first.
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import datetime
from pathlib import Path

from .app import make_app


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments, with ``--pattern -home-me-work*`` accepted as relay-search accepts it."""
    import sys

    from core.front.cli import join_dash_values

    parser = argparse.ArgumentParser(prog="python -m tui", description=__doc__)
    parser.add_argument("--home", type=Path, help="use only this HOME (transcripts and cache)")
    parser.add_argument("--demo", action="store_true", help="write the demo corpus into HOME (a temp dir by default)")
    parser.add_argument("--now", help="pin 'now' (ISO 8601) for relative times")
    parser.add_argument("--root", help="a Claude projects dir to read instead")
    parser.add_argument("--pattern", help="glob over project dir names")
    return parser.parse_args(join_dash_values(parser, list(sys.argv[1:] if argv is None else argv)))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    now = datetime.fromisoformat(args.now) if args.now else None
    home = args.home
    if args.demo:
        from core.fixtures.demo import write_demo_corpus

        home = home or Path(tempfile.mkdtemp(prefix="relay-search-demo-"))
        write_demo_corpus(home, now=now)
    config = None
    if args.root or args.pattern:
        from core.config import Config

        env = {"HOME": str(home)} if home else None
        config = Config.from_env(env, root=args.root, pattern=args.pattern)
    make_app(home, config=config, now=now).run()


if __name__ == "__main__":
    main()
