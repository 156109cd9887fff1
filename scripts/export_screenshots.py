"""Write the README's screenshots: the real app on the demo corpus, as SVG.

    .venv/bin/python scripts/export_screenshots.py [--out screenshots] [--size 120x40]

Each scene (``tui.testing.SCENES``: search with hits, the reader on a chain with a
compaction separator, the session list, help) runs the app headless on a fresh demo
corpus with a pinned clock, so the images only change when the app does.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.fixtures.demo import DEFAULT_NOW, write_demo_corpus  # noqa: E402
from tui.app import make_app  # noqa: E402
from tui.testing import SCENES  # noqa: E402


def embed_first(home: Path) -> None:
    """Index and embed the demo as ``relay-search index`` does, so the status line shows the settled
    state (not an embedding backlog that depends on how fast this machine is)."""
    import os

    from core.api import Archive
    from core.config import Config

    with Archive.open(Config.from_env({**os.environ, "HOME": str(home)})) as archive:
        archive.semantic.run_foreground()


async def shoot(name: str, out: Path, size: tuple[int, int]) -> Path:
    with tempfile.TemporaryDirectory(prefix="relay-search-shot-") as tmp:
        home = Path(tmp)
        write_demo_corpus(home, now=DEFAULT_NOW)
        embed_first(home)
        app = make_app(home, now=DEFAULT_NOW)
        async with app.run_test(size=size) as pilot:
            await SCENES[name](pilot)
            path = out / f"{name}.svg"
            app.save_screenshot(filename=path.name, path=str(out))
        return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--size", default="120x40", help="terminal WIDTHxHEIGHT")
    parser.add_argument("scenes", nargs="*", default=list(SCENES), help=f"any of {', '.join(SCENES)}")
    args = parser.parse_args(argv)
    width, height = (int(n) for n in args.size.lower().split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.scenes:
        if name not in SCENES:
            parser.error(f"unknown scene {name!r}")
        path = asyncio.run(shoot(name, args.out, (width, height)))
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
