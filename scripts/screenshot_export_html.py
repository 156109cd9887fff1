"""Write ``screenshots/export-html.png``: an exported HTML page rendered by headless Chromium.

    .venv/bin/python scripts/screenshot_export_html.py [--out screenshots] [--chromium chromium]

Exports session 1 of the demo corpus's chain (a subagent, tool calls, tokens) with the
real CLI into a temp dir, then has Chromium render it offline to PNG.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.fixtures.demo import CHAIN_SLUG, DEFAULT_NOW, write_demo_corpus  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    parser.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "chromium")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="relay-search-export-") as tmp:
        home = Path(tmp) / "home"
        write_demo_corpus(home, now=DEFAULT_NOW)
        page = Path(tmp) / "page.html"
        script = Path(sys.executable).with_name("relay-search")
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        subprocess.run([str(script), "export", f"{CHAIN_SLUG}#1", "--format", "html", "-o", str(page)], env=env, check=True)
        args.out.mkdir(parents=True, exist_ok=True)
        target = args.out / "export-html.png"
        subprocess.run(
            [args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1000,1250",
             f"--screenshot={target}", page.as_uri()],
            check=True, capture_output=True,
        )
        print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
