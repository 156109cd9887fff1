"""The app paints at up to 120 frames a second (tui/__init__.py): a keystroke's hits wait
for the next frame, 8 ms on average at Textual's default 60. TEXTUAL_FPS still wins."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROBE = "import tui.app; from textual import constants, screen; print(constants.MAX_FPS, round(1 / screen.UPDATE_PERIOD))"


def _frames(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    base["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-c", PROBE], env={**base, **env}, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_app_paints_at_120_frames_a_second():
    assert _frames() == "120 120"


def test_a_frame_rate_the_person_set_wins():
    assert _frames(TEXTUAL_FPS="30") == "30 30"
