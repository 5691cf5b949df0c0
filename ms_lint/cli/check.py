"""`ms-lint check` (and `validate`): settings, the files, linting and judging, the report, the exit code.

Standard output carries the report only; what the run itself has to say (missing paths, progress, `-v`) goes to
standard error, so `--output-format json > out.json` stays valid JSON.
"""
from __future__ import annotations

import json
import os
import sys
import time
from typing import Dict, List

from ms_lint import config, formats
from ms_lint.cli.run import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, Run, lint_and_judge, print_fixes, report
from ms_lint.cli.terminal import Progress
from ms_lint.config import ConfigError
from ms_lint.files import discover
from ms_lint.formats import fixable
from ms_lint.rule import Diagnostic

STDIN = "-"


def check(args) -> int:
    started = time.monotonic()
    run = _prepare(args)
    if args.show_settings:
        return _show_settings(run)
    if args.show_files:
        sys.stdout.writelines(f"{path}\n" for path in run.files)
        return EXIT_ERROR if run.missing else EXIT_CLEAN
    if args.validate and not (args.fix or args.fix_only or args.diff):
        raise ConfigError("--validate checks fixes: use it with --fix, --fix-only or --diff (or run `ms-lint "
                          "validate`)")
    if args.add_noqa and (args.fix or args.fix_only or args.diff):
        raise ConfigError("--add-noqa cannot be combined with --fix, --fix-only or --diff")
    if args.fix or args.fix_only or args.diff:
        from ms_lint.cli.fix import fix

        return fix(run)
    results, diagnostics = lint_and_judge(run)
    run.note(f"linted {len(run.files)} file{'s' if len(run.files) != 1 else ''} in "
             f"{time.monotonic() - started:.2f} s")
    if args.add_noqa:
        from ms_lint.cli.fix import add_noqa

        return add_noqa(run, results, diagnostics)
    if args.write_baseline or args.baseline:
        diagnostics = _apply_baseline(args, results, diagnostics)
        if args.write_baseline:
            return EXIT_CLEAN
    report(run, diagnostics, results)
    if args.show_fixes:
        print_fixes("Available fixes", [d for d in diagnostics if fixable(d, run.applicabilities)])
    internal = [message for result in results for message in result.internal_errors]
    for message in internal:
        print(f"ms-lint: {message}", file=sys.stderr)
    if run.missing or internal:
        return EXIT_ERROR
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _prepare(args) -> Run:
    """Settings (the nearest pyproject.toml of the first path, then the flags) and the files to lint."""
    stdin = None
    paths = list(args.paths)
    if STDIN in paths:
        if paths != [STDIN]:
            raise ConfigError("`-` (standard input) cannot be combined with other paths")
        paths = [args.stdin_filename or "<stdin>"]
        stdin = sys.stdin.buffer.read()
    elif args.stdin_filename:
        raise ConfigError("--stdin-filename names the code read from standard input: pass `-` as the path")
    settings = config.load(args.stdin_filename or (paths[0] if paths else "."), args.config)
    settings = config.override(settings, **_flags(args))
    progress = Progress(enabled=not args.quiet and args.output_format in formats.HUMAN_FORMATS)
    if stdin is not None:
        files = [] if args.force_exclude and not discover(paths, settings, force_exclude=True) else paths
        return Run(args, settings, files, [], progress, stdin)
    missing = [path for path in paths if not os.path.exists(path)]
    for path in missing:
        print(f"ms-lint: error: {path}: no such file or directory", file=sys.stderr)
    progress.start("finding files")
    files = discover([p for p in paths if p not in missing], settings, force_exclude=args.force_exclude)
    run = Run(args, settings, files, missing, progress)
    run.note(f"configuration: {settings.config_path or 'none found (defaults)'}")
    return run


def _flags(args) -> Dict[str, object]:
    return {"select": args.select, "extend_select": args.extend_select, "ignore": args.ignore,
            "syntax_level": args.syntax_level, "target": args.target, "mode": args.mode,
            "respect_gitignore": args.respect_gitignore}


def _show_settings(run: Run) -> int:
    """Each setting, its value and where it came from; then the files (as ruff's --show-settings does)."""
    origins = config.origins(run.settings, **_flags(run.args))
    values = config.setting_values(run.settings)
    if run.args.output_format == "json":
        print(json.dumps({"config_path": run.settings.config_path, "settings": {
            key: {"value": values[key], "source": origins[key]} for key in values}, "files": run.files}, indent=2))
        return EXIT_CLEAN
    print(f"Configuration: {run.settings.config_path or 'none (defaults)'}")
    print(f"Root: {run.settings.root}")
    width = max(len(key) for key in values)
    for key, value in values.items():
        print(f"  {key:<{width}} = {json.dumps(value)}  # {origins[key]}")
    print(f"Files ({len(run.files)}):")
    for path in run.files:
        print(f"  {path}")
    return EXIT_CLEAN


def _apply_baseline(args, results, diagnostics: List[Diagnostic]) -> List[Diagnostic]:
    from ms_lint import baseline

    lines = {r.path: r.source for r in results}
    entries = [(d, lines[d.path].line(d.row) if lines.get(d.path) else "") for d in diagnostics]
    if args.write_baseline:
        count = baseline.write(args.write_baseline, entries)
        print(f"Wrote {count} finding{'s' if count != 1 else ''} to the baseline {args.write_baseline}.",
              file=sys.stderr)
        return []
    try:
        recorded = baseline.load(args.baseline)
    except baseline.BaselineError as error:
        raise ConfigError(str(error)) from None
    return baseline.new_findings(args.baseline, recorded, entries)


