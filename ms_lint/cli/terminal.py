"""What only a person at a terminal sees: colour and progress. Machine formats and pipes never get either.

Colour follows the usual conventions: `NO_COLOR` (any value) turns it off, `FORCE_COLOR` (any value but "0")
turns it on, else it is on when the stream is a terminal (and `TERM` is not "dumb").
"""
from __future__ import annotations

import os
import sys
import time
from typing import Optional, TextIO

_CODES = {"bold": "1", "dim": "2", "red": "31", "yellow": "33", "blue": "34", "cyan": "36", "green": "32"}


def wants_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    force = os.environ.get("FORCE_COLOR")
    if force is not None and force != "0":
        return True
    return is_terminal(stream) and os.environ.get("TERM") != "dumb"


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream (tests capture stdout)
        return False


class Paint:
    """`paint("red", text)`: `text` in ANSI colour when colour is on, unchanged when it is off."""

    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, style: str, text: str) -> str:
        if not self.enabled or not text:
            return text
        codes = ";".join(_CODES[name] for name in style.split("+"))
        return f"\033[{codes}m{text}\033[0m"


class Progress:
    """`files done / total` and the current phase on one stderr line, redrawn at most ten times a second, shown
    only once a run has taken `delay` seconds and only on a terminal; `done()` erases it."""

    def __init__(self, enabled: bool, delay: float = 1.0, stream: Optional[TextIO] = None):
        self.stream = stream or sys.stderr
        self.enabled = enabled and is_terminal(self.stream)
        self.started = time.monotonic()
        self.delay = delay
        self.drawn_at = 0.0
        self.width = 0
        self.phase, self.total, self.count = "", 0, 0

    def start(self, phase: str, total: int = 0) -> None:
        self.phase, self.total, self.count = phase, total, 0
        self._draw(force=True)

    def advance(self, count: int = 1) -> None:
        self.count += count
        self._draw()

    def done(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < self.delay or (not force and now - self.drawn_at < 0.1):
            return
        self.drawn_at = now
        line = f"ms-lint: {self.phase}" + (f" {self.count}/{self.total} files" if self.total else "")
        self.stream.write("\r" + line.ljust(self.width))
        self.stream.flush()
        self.width = max(self.width, len(line))
