"""Headless Chromium for the tests of HTML pages: a screenshot and the DOM after
rendering (Debian's `chromium`; tests skip with `needs_chromium` where it is absent)."""

import shutil
import subprocess

import pytest

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None, reason="chromium not installed"
)

_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _run(args, profile):
    done = subprocess.run(
        ["chromium", *_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def screenshot(path, shot, profile, size=(900, 500)):
    """Renders the page file `path` into the PNG `shot`; returns its size in bytes."""
    _run(
        [
            f"--screenshot={shot}",
            f"--window-size={size[0]},{size[1]}",
            f"file://{path}",
        ],
        profile,
    )
    return shot.stat().st_size


def dump_dom(path, profile):
    """The DOM of the page file `path` once rendered, as HTML text."""
    return _run(["--dump-dom", f"file://{path}"], profile)
