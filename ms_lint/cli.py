"""`ms-lint`: the command-line front end. Exit codes: 0 clean, 1 findings, 2 usage or internal error."""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from typing import List, Optional, Sequence

from ms_lint import __version__, formats, runner
from ms_lint.catalog import all_rules, pylint_id, rule_by_code
from ms_lint.config import ConfigError, load, override
from ms_lint.engine import Linter
from ms_lint.files import discover
from ms_lint.formats import fixable
from ms_lint.rule import Diagnostic
from ms_lint.settings import SYNTAX_LEVELS, TARGETS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str) -> List[str]:
    return [code.strip() for code in value.split(",") if code.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ms-lint", description="Find MindSpore GRAPH_MODE pitfalls before the "
                                                                 "compiler does.")
    parser.add_argument("--version", action="version", version=f"ms-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    check = commands.add_parser("check", help="lint files and directories")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH", help="files or directories (default: .)")
    check.set_defaults(dry_run=False)
    check.add_argument("--output-format", choices=formats.FORMATS, default="text")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per rule")
    check.add_argument("--select", type=_codes, help="rule codes or prefixes to enable (ALL for every rule)")
    check.add_argument("--extend-select", type=_codes, help="codes or prefixes to enable on top of the selection")
    check.add_argument("--ignore", type=_codes, help="rule codes or prefixes to disable")
    check.add_argument("--syntax-level", choices=SYNTAX_LEVELS, help="the jit_syntax_level graph code compiles at")
    check.add_argument("--target", choices=TARGETS, help="the device target (ascend rules fire for ascend/any)")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude patterns and .gitignore to files named on the command line too "
                            "(for pre-commit)")
    check.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false", default=None,
                       help="lint files that .gitignore files ignore too")
    check.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of the nearest one")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    check.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                       help="lint with N worker processes (0: one per CPU); output order does not change")
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
    for flag in ("--select", "--extend-select", "--ignore"):
        validate.add_argument(flag, type=_codes, help=f"as for `check {flag}`")
    validate.add_argument("--syntax-level", choices=SYNTAX_LEVELS)
    validate.add_argument("--target", choices=TARGETS)
    validate.add_argument("--config", metavar="PYPROJECT", help="use this pyproject.toml instead of the nearest one")
    validate.set_defaults(fix=True, validate=True, dry_run=True, diff=False, fix_only=True, show_fixes=False,
                          force_exclude=False, jobs=1, no_cache=False, cache_dir=None, output_format="text",
                          exit_non_zero_on_fix=False, exit_zero=False, statistics=False, baseline=None,
                          write_baseline=None, respect_gitignore=None)

    rule = commands.add_parser("rule", help="print the documentation of a rule")
    rule.add_argument("code", help="a rule code (MSL001) or symbol (numpy-in-graph)")

    commands.add_parser("rules", help="list every rule")

    server = commands.add_parser("server", help="run the language server over stdio (needs ms-lint[lsp])")
    server.add_argument("--stdio", action="store_true", help="accepted for LSP clients that pass it (stdio is the "
                                                             "only transport)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "rule":
            return _print_rule(args.code)
        if args.command == "rules":
            return _print_rules()
        if args.command == "server":
            return _serve()
        return _check(args)  # `check` and `validate`
    except ConfigError as error:
        print(f"ms-lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_CLEAN


def _check(args) -> int:
    start = args.paths[0] if args.paths else "."
    settings = load(start, args.config)
    settings = override(settings, select=args.select, extend_select=args.extend_select, ignore=args.ignore,
                        syntax_level=args.syntax_level, target=args.target,
                        respect_gitignore=args.respect_gitignore)
    missing = [path for path in args.paths if not os.path.exists(path)]
    for path in missing:
        print(f"ms-lint: error: {path}: no such file or directory", file=sys.stderr)
    linter = Linter(settings)
    linter.index.judged_together = True  # the project rules see every file linted
    files = discover([p for p in args.paths if p not in missing], settings, force_exclude=args.force_exclude)
    for path in files:
        linter.index.add_file(path)
    applicabilities = ("safe", "unsafe") if args.unsafe_fixes else ("safe",)
    if args.validate and not (args.fix or args.fix_only or args.diff):
        raise ConfigError("--validate checks fixes: use it with --fix, --fix-only or --diff "
                          "(or run `ms-lint validate`)")
    if args.fix or args.fix_only or args.diff:
        return _fix(args, linter, files, applicabilities, bool(missing))
    cache_directory = None if args.no_cache else (args.cache_dir or os.path.join(settings.root,
                                                                                 runner.CACHE_DIRECTORY))
    # judging too: else a full collection scans every result once linting ends (and a run from the cache may scan
    # the project for the judges' compile context)
    with runner.few_collections(), runner.context_facts_kept(cache_directory, settings):
        results = runner.lint_files(settings, files, jobs=args.jobs if args.jobs > 0 else (os.cpu_count() or 1),
                                    cache_directory=cache_directory)
        diagnostics = [d for result in results for d in result.diagnostics] + linter.judge(results)
    diagnostics.sort(key=Diagnostic.sort_key)
    if args.write_baseline or args.baseline:
        diagnostics = _apply_baseline(args, results, diagnostics)
        if args.write_baseline:
            return EXIT_CLEAN
    _report(args, diagnostics, files, applicabilities)
    if args.show_fixes:
        _print_fixes("Available fixes", [d for d in diagnostics if fixable(d, applicabilities)])
    internal = [message for result in results for message in result.internal_errors]
    for message in internal:
        print(f"ms-lint: {message}", file=sys.stderr)
    if missing or internal:
        return EXIT_ERROR
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _report(args, diagnostics: List[Diagnostic], files: List[str], applicabilities) -> None:
    if args.statistics:
        sys.stdout.write(formats.statistics(diagnostics, applicabilities))
    else:
        sys.stdout.write(formats.render(args.output_format, diagnostics, files, applicabilities))


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


def _fix(args, linter: Linter, files: List[str], applicabilities, missing: bool) -> int:
    from ms_lint.fixing.passes import WriteError, fix_source, write_atomically
    from ms_lint.source import SourceError, decode
    from ms_lint.validation import validate_fixes

    remaining: List[Diagnostic] = []
    applied: List[Diagnostic] = []
    problems = bool(missing)
    diff_found = False
    # project rules judge each file with the facts of the others (they may live in other modules)
    project = []
    if any(hasattr(r, "judge") and linter.settings.is_selected(r.code, r.severity) for r in linter.rules):
        project = runner.lint_files(linter.settings, files, jobs=args.jobs if args.jobs > 0 else (os.cpu_count() or 1),
                                    cache_directory=None if args.no_cache else (
                                        args.cache_dir or os.path.join(linter.settings.root, runner.CACHE_DIRECTORY)))
    fixed = []  # (original bytes, FileFix)
    for path in files:
        try:
            with open(path, "rb") as handle:
                original = handle.read()
            source = decode(original, path)
        except (OSError, SourceError):
            remaining.extend(linter.lint_path(path).diagnostics)  # reported as MSL099
            continue
        fixed.append((original, fix_source(linter, source, applicabilities, project)))
    validation_failed, validated = False, {}
    if args.validate:
        outcome = validate_fixes(linter, [result for _, result in fixed], applicabilities, project,
                                 stream=sys.stdout if args.dry_run else sys.stderr)
        fixed = [(original, outcome.replacements.get(result.source.path, result)) for original, result in fixed]
        validation_failed, validated = outcome.failed, outcome.per_fix
    for original, result in fixed:
        path, source = result.source.path, result.source
        for diagnostic, reason in result.rejected:
            print(f"{path}:{diagnostic.row}:{diagnostic.column + 1}: {diagnostic.code} fix not applied: {reason}",
                  file=sys.stderr)
        if not result.converged:
            print(f"ms-lint: {path}: fixes did not converge after repeated passes; the file was left as the last "
                  "consistent pass produced it", file=sys.stderr)
        if args.diff or args.dry_run:
            if result.changed and args.diff:
                diff_found = True
                sys.stdout.writelines(difflib.unified_diff(
                    source.text.splitlines(keepends=True), result.text.splitlines(keepends=True),
                    fromfile=path, tofile=path))
            continue
        if result.changed:
            try:
                write_atomically(source, result.text, original)
            except WriteError as error:
                print(f"ms-lint: {error}", file=sys.stderr)
                problems = True
                remaining.extend(linter.lint_source(source).diagnostics)
                continue
        applied.extend(result.applied)
        remaining.extend(result.remaining)
    if args.dry_run:  # `ms-lint validate`: the report is the result
        return EXIT_ERROR if problems else (EXIT_FINDINGS if validation_failed else EXIT_CLEAN)
    if args.diff:
        return EXIT_ERROR if problems else (EXIT_FINDINGS if diff_found else EXIT_CLEAN)
    if not args.fix_only:
        _report(args, remaining, files, applicabilities)
    if args.show_fixes:
        _print_fixes("Fixed", applied, validated)
    if args.output_format == "text":
        print(f"Fixed {len(applied)} finding{'s' if len(applied) != 1 else ''}"
              + (f", {len(remaining)} remaining." if not args.fix_only else "."), file=sys.stderr)
    if problems:
        return EXIT_ERROR
    if args.exit_non_zero_on_fix and applied:
        return EXIT_FINDINGS
    if args.fix_only or args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if remaining else EXIT_CLEAN


def _print_fixes(title: str, diagnostics: List[Diagnostic], validated=None) -> None:
    """`validated`: (path, row, column, code) -> what --validate found for that fix."""
    if not diagnostics:
        return
    print(f"{title}:")
    for d in diagnostics:
        note = (validated or {}).get((d.path, d.row, d.column, d.code))
        fix = d.fix
        assert fix is not None  # only diagnostics with fixes are listed
        print(f"  {d.path}:{d.row}:{d.column + 1}: {d.code} ({fix.applicability}) {fix.message}"
              + (f" [{note}]" if note else ""))


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


def _print_rule(code: str) -> int:
    rule = rule_by_code(code.upper()) or rule_by_code(code)
    if rule is None:
        print(f"ms-lint: error: unknown rule {code!r}; `ms-lint rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    from ms_lint.docs import render

    print(render(rule))
    return EXIT_CLEAN


def _print_rules() -> int:
    for rule in all_rules():
        fix = rule.fix_applicability or "-"
        print(f"{rule.code}  {rule.name:<38} {rule.severity:<8} {pylint_id(rule)}  fix: {fix:<7} {rule.summary()}")
    return EXIT_CLEAN


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
