""".gitignore-style path patterns, for `exclude`/`extend-exclude` and for `.gitignore` files.

The rules are git's (`man gitignore`):

* a blank line matches nothing; a line starting with `#` is a comment (`\\#` for a literal `#`); trailing spaces
  are dropped unless escaped with a backslash;
* `!` negates: a path a previous pattern excluded is included again (`\\!` for a literal `!`); the last pattern
  that matches a path decides. A file inside an excluded directory cannot be included again: the walk never goes
  into the directory (that is the caller's part, see `ms_lint.files`);
* a trailing `/` matches directories only;
* a pattern with a `/` at its start or in its middle is anchored: it matches paths relative to its base (the
  directory of the `.gitignore`, or the project root for configuration patterns). Otherwise it matches a name at
  any depth;
* `*` matches anything but `/`, `?` any one character but `/`, `[a-z]`/`[!a-z]` one character of (not of) a set,
  never `/` (a pattern with an unclosed `[` matches nothing); `\\` escapes the next character;
* `**` as a whole path segment matches across directories: `**/gen` (`gen` at any depth), `docs/**` (everything
  inside `docs`), `a/**/b` (`a/b`, `a/x/b`, `a/x/y/b`). Elsewhere `**` is the same as `*`.

Matching is case-sensitive, as git's is by default. POSIX character classes (`[[:digit:]]`) are not supported.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional, Pattern


@dataclass(frozen=True)
class Rule:
    pattern: str  # the line as written
    regex: Pattern
    negated: bool
    directory_only: bool
    anchored: bool

    def matches(self, path: str, is_dir: bool) -> bool:
        return (is_dir or not self.directory_only) and self.regex.fullmatch(path) is not None


@functools.lru_cache(maxsize=1024)  # the default excludes, parsed again for each project root a run scans
def parse(line: str) -> Optional[Rule]:
    """A .gitignore line as a Rule; None for a blank line, a comment or a pattern that matches nothing."""
    text = line.rstrip("\r\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    text = _strip_trailing_spaces(text)
    if not text or text.startswith("#"):
        return None
    negated = text.startswith("!")
    if negated:
        text = text[1:]
    elif text.startswith(("\\!", "\\#")):
        text = text[1:]
    directory_only = text.endswith("/")
    text = text.rstrip("/") if directory_only else text
    anchored = "/" in text  # at the start or in the middle (a trailing one is gone)
    text = text.lstrip("/")
    if not text or _dangling_backslash(text):
        return None  # "/", "!" or a pattern git rejects
    segments = [segment for segment in text.split("/") if segment]
    if not anchored:
        segments.insert(0, "**")
    regex = re.compile(_translate(segments), re.DOTALL)
    return Rule(line.rstrip("\r\n"), regex, negated, directory_only, anchored)


class PathSpec:
    """Ordered patterns relative to one base directory; the last matching pattern decides."""

    def __init__(self, lines: Iterable[str]):
        self.rules: List[Rule] = [rule for rule in map(parse, lines) if rule is not None]

    @classmethod
    def from_file(cls, path: str) -> "PathSpec":
        """The patterns of a .gitignore-style file; an unreadable file has none (git ignores it too)."""
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as handle:
                return cls(handle.read().splitlines())
        except (OSError, ValueError):
            return cls(())

    def __bool__(self) -> bool:
        return bool(self.rules)

    def match(self, path: str, is_dir: bool = False, anchored: bool = True) -> Optional[bool]:
        """True if `path` (relative to the base, `/`-separated) is excluded, False if a `!` pattern includes it
        again, None if no pattern matches. `anchored=False` tries only the patterns that match at any depth (for a
        path outside the base directory, matched by its name)."""
        for rule in reversed(self.rules):
            if (anchored or not rule.anchored) and rule.matches(path, is_dir):
                return not rule.negated
        return None

    def excludes(self, path: str, is_dir: bool = False, anchored: bool = True) -> bool:
        return bool(self.match(path, is_dir, anchored))


def _strip_trailing_spaces(text: str) -> str:
    stripped = text.rstrip(" ")
    if len(stripped) < len(text) and _dangling_backslash(stripped):
        stripped += " "  # "foo\ " keeps one escaped space
    return stripped


def _dangling_backslash(text: str) -> bool:
    """The text ends with an odd number of backslashes (the last one escapes nothing)."""
    return (len(text) - len(text.rstrip("\\"))) % 2 == 1


def _translate(segments: List[str]) -> str:
    collapsed: List[str] = []
    for segment in segments:
        if not (segment == "**" and collapsed and collapsed[-1] == "**"):  # "**/**" is "**"
            collapsed.append(segment)
    last = len(collapsed) - 1
    parts = []
    for index, segment in enumerate(collapsed):
        if segment == "**":
            if index == 0:
                parts.append(".+" if index == last else "(?:.+/)?")  # "**" alone, or "**/x": any leading dirs
            elif index == last:
                parts.append("/.+")  # "x/**": everything inside x
            else:
                parts.append("(?:/.+)?")  # "x/**/y": zero or more directories between
            continue
        if index > 0 and not (index == 1 and collapsed[0] == "**"):
            parts.append("/")
        parts.append(_translate_segment(segment))
    return "".join(parts)


def _translate_segment(segment: str) -> str:
    """One path segment: `*`, `?`, `[...]` and `\\` escapes, never matching `/`."""
    out = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "\\" and i + 1 < n:
            out.append(re.escape(segment[i + 1]))
            i += 2
            continue
        if char == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            translated, end = _translate_class(segment, i)
            if translated is None:
                return "(?!)"  # no closing "]": git's wildmatch matches nothing
            out.append(translated)
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _translate_class(segment: str, start: int):
    """`[...]` starting at `start` as a regex, and the index of its `]`; (None, start) if it is not closed."""
    i = start + 1
    negated = i < len(segment) and segment[i] in "!^"
    if negated:
        i += 1
    members: list = []
    first = True
    while i < len(segment):
        char = segment[i]
        if char == "]" and not first:
            body = "".join(members)
            if not body:  # only reversed ranges ("[z-a]"): no character is in the set
                return ("[^/]" if negated else "(?!)"), i
            return (f"[^/{body}]" if negated else f"(?!/)[{body}]"), i
        first = False
        if char == "\\" and i + 1 < len(segment):
            i += 1
            char = segment[i]
        if i + 2 < len(segment) and segment[i + 1] == "-" and segment[i + 2] != "]":
            high = segment[i + 2]
            if high == "\\" and i + 3 < len(segment):
                high = segment[i + 3]
                i += 1
            if high >= char:
                members.append(f"{re.escape(char)}-{re.escape(high)}")
            i += 3
            continue
        members.append(re.escape(char))
        i += 1
    return None, start
