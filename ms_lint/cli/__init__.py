"""`ms-lint`: the command-line front end. Exit codes: 0 clean, 1 findings, 2 usage or internal error, 130
interrupted (Ctrl-C).

This module holds the parser and the commands that only print; `check` (and `validate`) live in
`ms_lint.cli.check`, fixing in `ms_lint.cli.fix`, what only a terminal sees (colour, progress) in
`ms_lint.cli.terminal`.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional, Sequence

from ms_lint import __version__, formats
from ms_lint.catalog import all_rules, pylint_id, rule_by_code
from ms_lint.config import ConfigError
from ms_lint.rule import DOCS_URL
from ms_lint.settings import MODES, SYNTAX_LEVELS, TARGETS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


def _codes(value: str) -> List[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def _add_selectors(command: argparse.ArgumentParser) -> None:
    """--select/--extend-select/--ignore: repeated flags and comma-separated lists accumulate (as in ruff)."""
    command.add_argument("--select", type=_codes, action="extend",
                         help="rule codes or prefixes to enable (ALL for every rule); repeatable, comma-separated")
    command.add_argument("--extend-select", type=_codes, action="extend",
                         help="codes or prefixes to enable on top of the selection")
    command.add_argument("--ignore", type=_codes, action="extend", help="rule codes or prefixes to disable")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ms-lint", description="Find MindSpore GRAPH_MODE pitfalls before the "
                                                                 "compiler does.")
    parser.add_argument("--version", action="version", version=f"ms-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="lint files and directories")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    check.set_defaults(dry_run=False)
    check.add_argument("--output-format", choices=formats.FORMATS, default="full",
                       help="full: each finding with its source lines (the default; `text` is the same); concise: "
                            "one line per finding")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    _add_selectors(check)
    check.add_argument("--syntax-level", choices=SYNTAX_LEVELS, help="the jit_syntax_level graph code compiles at")
    check.add_argument("--target", choices=TARGETS, help="the device target (ascend rules fire for ascend/any)")
    check.add_argument("--mode", choices=MODES,
                       help="how the project runs its Cells (default: detected; pitfalls of compiled code are "
                            "lowered a step in a project that runs in PyNative)")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude patterns and .gitignore to files named on the command line too "
                            "(for pre-commit)")
    check.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", default=None,
                       help="lint files that .gitignore files ignore too")
    check.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of the nearest one")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("-q", "--quiet", action="store_true",
                       help="print the findings and nothing else (no summary, no progress)")
    check.add_argument("-v", "--verbose", action="store_true",
                       help="also print the configuration used, the files linted and the time each phase took")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings and where each came from, then exit")
    check.add_argument("--show-files", action="store_true", help="print the files that would be linted, then exit")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="the path of the code read from standard input (`-`): for configuration, excludes and "
                            "the project around it")
    check.add_argument("--add-noqa", action="store_true",
                       help="add `# noqa: MSLxxx` to every line with a finding (merging with a noqa comment there)")
    check.add_argument("-j", "--jobs", type=int, default=None, metavar="N",
                       help="lint with N worker processes (0: one per CPU; default: one per CPU when there are files "
                            "enough to share, else one); output order does not change")
    check.add_argument("--no-cache", action="store_true", help="do not read or write the cache")
    check.add_argument("--cache-dir", metavar="DIR", help="where the cache lives (default: .ms_lint_cache next to "
                                                         "pyproject.toml, else in the current directory)")
    check.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in this baseline")
    check.add_argument("--write-baseline", metavar="FILE", help="record the current findings as a baseline")
    fixing = check.add_argument_group("fixes")
    fixing.add_argument("--fix", action="store_true", help="apply safe fixes, then report what is left")
    fixing.add_argument("--unsafe-fixes", action="store_true", help="also apply (or show) unsafe fixes")
    fixing.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change nothing")
    fixing.add_argument("--fix-only", action="store_true", help="apply fixes and report nothing else")
    fixing.add_argument("--show-fixes", action="store_true", help="list the fixes applied (or available)")
    fixing.add_argument("--exit-non-zero-on-fix", action="store_true", help="exit 1 when something was fixed")
    fixing.add_argument("--validate", action="store_true",
                        help="compile the Cells the fixes change with MindSpore (GRAPH_MODE, CPU) before and after, "
                             "compare with PyNative, and keep only fixes that do no harm (needs ms-lint[validate])")

    validate = commands.add_parser(
        "validate", help="show what `check --fix --validate` would do: validate the fixes, change nothing")
    validate.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    validate.add_argument("--unsafe-fixes", action="store_true", help="validate the unsafe fixes too")
    _add_selectors(validate)
    validate.add_argument("--syntax-level", choices=SYNTAX_LEVELS)
    validate.add_argument("--target", choices=TARGETS)
    validate.add_argument("--mode", choices=MODES)
    validate.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of the nearest one")
    validate.add_argument("--no-cache", action="store_true", help="do not read or write the lint cache")
    validate.add_argument("--cache-dir", metavar="DIR", help="where the lint cache lives (as for `check`)")
    validate.set_defaults(fix=True, validate=True, dry_run=True, diff=False, fix_only=True, show_fixes=False,
                          force_exclude=False, jobs=1, output_format="full",
                          exit_non_zero_on_fix=False, exit_zero=False, statistics=False, baseline=None,
                          write_baseline=None, respect_gitignore=None, quiet=False, verbose=False,
                          show_settings=False, show_files=False, stdin_filename=None, add_noqa=False)

    rule = commands.add_parser("rule", help="print the documentation of a rule")
    rule.add_argument("code", help="a rule code (MSL001) or symbol (numpy-in-graph)")
    rule.add_argument("--output-format", choices=("text", "json"), default="text")

    rules = commands.add_parser("rules", help="list every rule")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")

    server = commands.add_parser("server", help="run the language server over stdio (needs ms-lint[lsp])")
    server.add_argument("--stdio", action="store_true", help="accepted for LSP clients that pass it (stdio is the "
                                                             "only transport)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command is None:  # bare `ms-lint`
            parser.print_help()
            return EXIT_CLEAN
        if args.command == "rule":
            return _print_rule(args.code, args.output_format)
        if args.command == "rules":
            return _print_rules(args.output_format)
        if args.command == "server":
            return _serve()
        from ms_lint.cli.check import check

        return check(args)  # `check` and `validate`
    except ConfigError as error:
        print(f"ms-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN
    except KeyboardInterrupt:
        print("\nms-lint: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _serve() -> int:
    try:
        from ms_lint import lsp
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] not in ("pygls", "lsprotocol"):
            raise
        print("ms-lint: error: the language server needs pygls: install ms-lint[lsp] "
              "(pip install 'ms-lint[lsp]')", file=sys.stderr)
        return EXIT_ERROR
    return lsp.main()


def _print_rule(code: str, output_format: str = "text") -> int:
    rule = rule_by_code(code.upper()) or rule_by_code(code)
    if rule is None:
        print(f"ms-lint: error: unknown rule {code!r}; `ms-lint rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    from ms_lint.docs import render

    if output_format == "json":
        print(json.dumps(_rule_json(rule, render(rule)), indent=2))
    else:
        print(render(rule))
    return EXIT_CLEAN


def _print_rules(output_format: str = "text") -> int:
    if output_format == "json":
        from ms_lint.docs import render

        print(json.dumps([_rule_json(rule, render(rule)) for rule in all_rules()], indent=2))
        return EXIT_CLEAN
    for rule in all_rules():
        fix = rule.fix_applicability or "-"
        print(f"{rule.code}  {rule.name:<38} {rule.severity:<8} {pylint_id(rule)}  fix: {fix:<7} {rule.summary()}")
    return EXIT_CLEAN


def _rule_json(rule, explanation: str) -> dict:
    """ruff's `rule --output-format json` fields, with ms-lint's severity, pylint id and scope."""
    return {"code": rule.code, "name": rule.name, "severity": rule.severity, "scope": rule.scope,
            "pylint_id": pylint_id(rule), "fix": rule.fix_applicability, "summary": rule.summary(),
            "url": DOCS_URL.format(code=rule.code), "explanation": explanation}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
