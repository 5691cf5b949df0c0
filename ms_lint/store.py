"""Entries of the on-disk caches (lint results, the project scan's facts), written whole or not at all."""
from __future__ import annotations

import json
import os


def write_json(path: str, value: object) -> None:
    """Write `value` as JSON to `path` through a temporary file renamed over it: a reader (another process of a
    `-j` run) never sees half an entry. Raises OSError; callers treat an unwritable cache as no cache."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
    os.replace(temporary, path)
