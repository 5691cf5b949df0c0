"""Reading the settings: `[tool.ms_lint]` in the nearest pyproject.toml, overridden by command-line flags.

`[tool.ms-lint]` (the command's spelling) is read the same way; a file with both tables is an error, since
which one wins would be a guess.

Every front end builds its Settings here, so the CLI, pylint and flake8 read one configuration the same way.
Rule codes are checked against the catalog, so a typo is an error that names the nearest code.
"""
from __future__ import annotations

import difflib
import os
import sys
from dataclasses import replace
from typing import Dict, Mapping, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

from ms_lint import catalog
from ms_lint.settings import MODES, SYNTAX_LEVELS, TARGETS, Settings


class ConfigError(Exception):
    """A configuration problem, worded for the user (names the file and the key)."""


# key in pyproject -> (Settings field, converter)
def _codes(value, key: str) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of rule codes or prefixes, got {value!r}")
    for code in value:
        _check_selector(code, key)
    return tuple(value)


def _check_selector(code: str, key: str) -> None:
    problem = catalog.selector_problem(code)
    if problem:
        raise ConfigError(f"`{key}`: {problem}")


def _choice(choices):
    def convert(value, key):
        if not isinstance(value, str) or value.lower() not in choices:
            raise ConfigError(f"`{key}` must be one of {', '.join(choices)}, got {value!r}")
        return value.lower()

    return convert


def _per_file_ignores(value, key):
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table of glob = [codes], got {value!r}")
    return tuple((pattern, _codes(codes, f"{key}.{pattern}")) for pattern, codes in value.items())


def _severities(value, key):
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table of CODE = \"error\" | \"warning\" | \"info\", got {value!r}")
    result = []
    for code, severity in value.items():
        problem = catalog.code_problem(code)
        if problem:
            raise ConfigError(f"`{key}`: {problem}")
        if severity not in ("error", "warning", "info"):
            raise ConfigError(f"`{key}.{code}` must be \"error\", \"warning\" or \"info\", got {severity!r}")
        result.append((code, severity))
    return tuple(result)


def _globs(value, key):
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of glob patterns, got {value!r}")
    return tuple(value)


def _boolean(value, key):
    if not isinstance(value, bool):
        raise ConfigError(f"`{key}` must be true or false, got {value!r}")
    return value


def _validate_table(value, key):
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table, got {value!r}")
    return tuple(value.items())


_KEYS = {
    "select": ("select", _codes),
    "extend-select": ("extend_select", _codes),
    "ignore": ("ignore", _codes),
    "per-file-ignores": ("per_file_ignores", _per_file_ignores),
    "syntax-level": ("syntax_level", _choice(SYNTAX_LEVELS)),
    "target": ("target", _choice(TARGETS)),
    "mode": ("mode", _choice(MODES)),
    "severity": ("severity", _severities),
    "exclude": ("exclude", _globs),
    "extend-exclude": ("extend_exclude", _globs),
    "respect-gitignore": ("respect_gitignore", _boolean),
    "validate": ("validate", _validate_table),
}
KEYS = tuple(_KEYS)


def from_mapping(table: Mapping, origin: str, base: Settings = Settings()) -> Settings:
    """Settings from a `[tool.ms_lint]`-shaped mapping; unknown keys and bad values raise ConfigError."""
    values = {}
    for key, value in table.items():
        if key not in _KEYS:
            hint = difflib.get_close_matches(key, KEYS, n=1)
            raise ConfigError(f"{origin}: unknown key `{key}` in [tool.ms_lint]"
                              + (f" (did you mean `{hint[0]}`?)" if hint else "")
                              + f"; known keys: {', '.join(KEYS)}")
        name, convert = _KEYS[key]
        try:
            values[name] = convert(value, key)
        except ConfigError as exc:
            raise ConfigError(f"{origin}: [tool.ms_lint] {exc}") from None
    return replace(base, **values)


def find_pyproject(start: str) -> Optional[str]:
    """The nearest pyproject.toml at or above `start` that has a [tool.ms_lint] table, else the nearest one."""
    directory = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    nearest = None
    while True:
        candidate = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(candidate):
            nearest = nearest or candidate
            if _has_table(candidate):
                return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return nearest
        directory = parent


TABLES = ("ms_lint", "ms-lint")


def _has_table(path: str) -> bool:
    try:
        tool = _read_toml(path).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return True  # let load() report the problem
    return isinstance(tool, dict) and any(name in tool for name in TABLES)


def _table(document: dict, path: str) -> Mapping:
    """The `[tool.ms_lint]` (or `[tool.ms-lint]`) table of a parsed pyproject.toml; {} when there is none."""
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        return {}
    present = [name for name in TABLES if name in tool]
    if len(present) > 1:
        raise ConfigError(f"{path}: both [tool.ms_lint] and [tool.ms-lint] are present; keep one (they are the "
                          "same table)")
    table = tool[present[0]] if present else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{present[0]}] must be a table")
    return table


_toml_cache: dict = {}


def _read_toml(path: str) -> dict:
    """A parsed TOML file, re-read only when its size or modification time changes (the pylint and flake8
    plugins load the configuration for every module)."""
    status = os.stat(path)
    key = (os.path.abspath(path), status.st_mtime_ns, status.st_size)
    document = _toml_cache.get(key)
    if document is None:
        with open(path, "rb") as handle:
            document = _toml_cache[key] = tomllib.load(handle)
    return document


def formatter_line_length(config_path: Optional[str]) -> Optional[int]:
    """The line length the project's formatter keeps (`[tool.ruff] line-length`, else `[tool.black]`), if its
    pyproject.toml says; fixes wrap what they write to it."""
    if not config_path:
        return None
    try:
        tool = _read_toml(config_path).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    for name in ("ruff", "black"):
        length = tool.get(name, {}).get("line-length") if isinstance(tool.get(name), dict) else None
        if isinstance(length, int) and not isinstance(length, bool) and length > 0:
            return length
    return None


def load(start: str = ".", config_path: Optional[str] = None) -> Settings:
    """Settings from `config_path`, or from the nearest pyproject.toml above `start` (defaults if none)."""
    path = config_path or find_pyproject(start)
    if path is None:
        return Settings()
    try:
        document = _read_toml(path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    return from_mapping(_table(document, path), path, Settings(config_path=path))


def override(settings: Settings, **flags) -> Settings:
    """Apply command-line values (None means "not given"); they are validated like the file's values."""
    table = _flag_table(flags)
    return from_mapping(table, "command line", settings) if table else settings


def _flag_table(flags: Mapping) -> dict:
    return {key.replace("_", "-"): value for key, value in flags.items() if value is not None}


def origins(settings: Settings, **flags) -> Dict[str, str]:
    """Where each setting of `settings` (built by `load` then `override(**flags)`) came from: "command line",
    the pyproject.toml's path, or "default"; by pyproject key (`--show-settings`)."""
    given = _flag_table(flags)
    table: Mapping = {}
    if settings.config_path:
        table = _table(_read_toml(settings.config_path), settings.config_path)
    path = settings.config_path or ""
    return {key: "command line" if key in given else path if key in table else "default" for key in KEYS}


def setting_values(settings: Settings) -> Dict[str, object]:
    """The value of each setting by pyproject key, as TOML would write it (tables as dicts, tuples as lists)."""
    values: Dict[str, object] = {}
    for key, (name, _) in _KEYS.items():
        value = getattr(settings, name)
        if name in _TABLE_FIELDS:
            value = {k: list(v) if isinstance(v, tuple) else v for k, v in value}
        elif isinstance(value, tuple):
            value = list(value)
        values[key] = value
    return values


_TABLE_FIELDS = ("per_file_ignores", "severity", "validate")
