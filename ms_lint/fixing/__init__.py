"""Fixes: the edits rules build, applying them to a text, and the passes of `--fix` (re-lint, validate, write)."""
