"""`ms-lint check --fix / --fix-only / --diff` and `ms-lint validate`.

The files are linted once (through the cache) and the project rules judged once; only files with a fix to apply
are fixed, and the project rules judge the fixed files together once more at the end (`_judged_again`).
"""
from __future__ import annotations

import difflib
import sys
from typing import Dict, List, Tuple

from ms_lint import runner
from ms_lint.analysis import projects
from ms_lint.cli.run import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, Run, lint_and_judge, print_fixes, report
from ms_lint.engine import FileResult, Linter
from ms_lint.fixing.passes import FileFix, Linted, WriteError, fix_source, new_findings, write_atomically
from ms_lint.formats import fixable
from ms_lint.rule import Diagnostic
from ms_lint.source import SourceError, decode


def fix(run: Run) -> int:
    from ms_lint.validation import validate_fixes

    args = run.args
    results, diagnostics = lint_and_judge(run)
    linter = Linter(run.settings)
    linter.index.judged_together = True
    for path in run.files:
        linter.index.add_file(path)
    by_path: Dict[str, List[Diagnostic]] = {}
    for d in diagnostics:
        by_path.setdefault(d.path, []).append(d)
    groups = _groups(results)
    remaining: List[Diagnostic] = []
    applied: List[Diagnostic] = []
    problems = bool(run.missing)
    fixed: List[Tuple[bytes, FileFix]] = []
    to_fix = [r for r in results if any(fixable(d, run.applicabilities) for d in by_path.get(r.path, ()))]
    remaining.extend(d for r in results if r not in to_fix for d in by_path.get(r.path, ()))
    run.progress.start("fixing", len(to_fix))
    with runner.few_collections():  # each verified pass parses and lints a large module again
        for result in to_fix:
            original = run.stdin if run.stdin is not None else _read(result.path)
            try:
                source = decode(original, result.path) if original is not None else None
            except SourceError:
                source = None
            if source is None or source.text != (result.source.text if result.source else None):
                remaining.extend(by_path.get(result.path, ()))  # changed or unreadable since it was linted
                problems = problems or original is None
                run.progress.advance()
                continue
            judged = [d for d in by_path.get(result.path, ()) if d not in result.diagnostics]
            if any(fixable(d, run.applicabilities) for d in judged):
                # a project rule's fix: judged again after every pass (its finding must go once it is fixed)
                fixed.append((original, fix_source(linter, source, run.applicabilities, groups.get(result.path, []))))
            else:
                linted = Linted(by_path.get(result.path, []), result.facts, judged)
                fixed.append((original, fix_source(linter, source, run.applicabilities, linted=linted)))
            run.progress.advance()
    run.progress.start("judging the fixed files")
    fixed = _judged_again(linter, run, results, fixed, by_path, groups)
    run.progress.done()
    validation_failed, validated = False, {}
    if args.validate:
        outcome = validate_fixes(linter, [f for _, f in fixed], run.applicabilities, results,
                                 stream=sys.stdout if args.dry_run else sys.stderr)
        fixed = [(original, outcome.replacements.get(f.source.path, f)) for original, f in fixed]
        validation_failed, validated = outcome.failed, outcome.per_fix
    diff_found = False
    for original, result in fixed:
        path, source = result.source.path, result.source
        for diagnostic, reason in result.rejected:
            print(f"{path}:{diagnostic.row}:{diagnostic.column + 1}: {diagnostic.code} fix not applied: {reason}",
                  file=sys.stderr)
        if not result.converged:
            print(f"ms-lint: {path}: fixes did not converge after repeated passes; the file was left as the last "
                  "consistent pass produced it", file=sys.stderr)
        if run.stdin is not None:
            if args.diff:
                diff_found = diff_found or result.changed
                sys.stdout.writelines(_diff(source.text, result.text, path))
            elif not args.dry_run:
                sys.stdout.write(_as_file(result.source, result.text))  # a fixed buffer goes back where it came from
            applied.extend(result.applied)
            remaining.extend(result.remaining)
            continue
        if args.diff or args.dry_run:
            if result.changed and args.diff:
                diff_found = True
                sys.stdout.writelines(_diff(source.text, result.text, path))
            continue
        if result.changed:
            try:
                write_atomically(source, result.text, original)
            except WriteError as error:
                print(f"ms-lint: {error}", file=sys.stderr)
                problems = True
                remaining.extend(by_path.get(path, ()))
                continue
        applied.extend(result.applied)
        remaining.extend(result.remaining)
    if run.stdin is not None and not fixed and not args.diff and not args.dry_run:
        sys.stdout.write(run.stdin.decode("utf-8", errors="surrogateescape") if run.stdin else "")
    remaining.sort(key=Diagnostic.sort_key)
    if args.dry_run:  # `ms-lint validate`: the report is the result
        return EXIT_ERROR if problems else (EXIT_FINDINGS if validation_failed else EXIT_CLEAN)
    if args.diff:
        return EXIT_ERROR if problems else (EXIT_FINDINGS if diff_found else EXIT_CLEAN)
    if not args.fix_only and run.stdin is None and (remaining or not applied):  # "Fixed ..." says the rest
        report(run, remaining, results)
    elif not args.fix_only:  # standard output holds the fixed code: the findings go to standard error
        for d in remaining:
            print(f"{d.path}:{d.row}:{d.column + 1}: {d.code} [{d.severity}] {d.message}", file=sys.stderr)
    if args.show_fixes:
        print_fixes("Fixed", applied, validated)
    if args.output_format in ("full", "concise", "text") and not args.quiet:
        print(f"Fixed {len(applied)} finding{'s' if len(applied) != 1 else ''}"
              + (f", {len(remaining)} remaining." if not args.fix_only else "."), file=sys.stderr)
    if problems:
        return EXIT_ERROR
    if args.exit_non_zero_on_fix and applied:
        return EXIT_FINDINGS
    if args.fix_only or args.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if remaining else EXIT_CLEAN


def add_noqa(run: Run, results: List[FileResult], diagnostics: List[Diagnostic]) -> int:
    """`--add-noqa`: `# noqa: CODES` on every line with a finding, written like a fix (atomically, refusing a file
    that changed since it was read). Running it again changes nothing."""
    from ms_lint.noqa import apply_line_edits, noqa_edits

    by_path: Dict[str, Dict[int, List[str]]] = {}
    for d in diagnostics:
        if d.code != "MSL099":  # a file that cannot be read or parsed takes no comment
            by_path.setdefault(d.path, {}).setdefault(d.row, []).append(d.code)
    sources = {r.path: r.source for r in results if r.source is not None}
    added, problems = 0, bool(run.missing)
    for path, rows in by_path.items():
        source = sources.get(path)
        edits = noqa_edits(source.text, rows) if source is not None else []
        if not edits or source is None:
            continue
        text = apply_line_edits(source.text, edits)
        if run.stdin is not None:
            sys.stdout.write(_as_file(source, text))
            added += len(edits)
            continue
        original = _read(path)
        try:
            write_atomically(source, text, original if original is not None else b"")
        except WriteError as error:
            print(f"ms-lint: {error}", file=sys.stderr)
            problems = True
            continue
        added += len(edits)
    if run.stdin is not None and not added:
        sys.stdout.write(sources[run.files[0]].text if run.files and run.files[0] in sources else "")
    if not run.args.quiet:
        print(f"Added {added} noqa comment{'s' if added != 1 else ''}.", file=sys.stderr)
    return EXIT_ERROR if problems else EXIT_CLEAN


def _judged_again(linter: Linter, run: Run, results: List[FileResult], fixed: List[Tuple[bytes, FileFix]],
                  by_path: Dict[str, List[Diagnostic]], groups: Dict[str, List[FileResult]]):
    """The project rules judge the fixed files with the others, once. A file where a fix raised a new project
    finding is fixed again the careful way (judged after every pass, so the fix that raises it is rejected); the
    others' remaining findings get the project rules' findings of the fixed code."""
    changed = {f.source.path: f for _, f in fixed if f.changed}
    if not changed:
        return fixed
    after = [FileResult(r.path, facts=changed[r.path].facts) if r.path in changed else r for r in results]
    judged: Dict[str, List[Diagnostic]] = {}
    for d in linter.judge(after):
        judged.setdefault(d.path, []).append(d)
    project_codes = {rule.code for rule in linter.rules if hasattr(rule, "judge")}
    redone = []
    for original, result in fixed:
        path = result.source.path
        if path not in changed:
            redone.append((original, result))
            continue
        before = [d for d in by_path.get(path, ()) if d.code in project_codes]
        now = judged.get(path, [])
        if new_findings(before, now):
            result = fix_source(linter, result.source, run.applicabilities, groups.get(path, []))
        else:
            result.remaining = sorted([d for d in result.remaining if d.code not in project_codes] + now,
                                      key=Diagnostic.sort_key)
        redone.append((original, result))
    return redone


def _groups(results: List[FileResult]) -> Dict[str, List[FileResult]]:
    """path -> the results of the other files in its import-connected group (what the project rules judge it
    with)."""
    facts = {r.path: r.facts.get(projects.IMPORTS, []) for r in results if r.facts}
    by_path = {r.path: r for r in results}
    found: Dict[str, List[FileResult]] = {}
    for group in projects.connected_groups(facts):  # type: ignore[arg-type]
        members = [by_path[path] for path in group]
        for path in group:
            found[path] = [r for r in members if r.path != path]
    return found


def _as_file(source, text: str) -> str:
    """What a file holding `text` (the code as linted) contains: a notebook's JSON for a notebook (unchanged,
    with the reason on standard error, when the fixed cells cannot be written back)."""
    from ms_lint.notebook import NotebookError

    if source.notebook is None:
        return text
    try:
        return source.notebook.updated(text)
    except NotebookError as error:
        print(f"ms-lint: {source.path}: {error}", file=sys.stderr)
        return source.notebook.raw


def _read(path: str):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _diff(before: str, after: str, path: str):
    return difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                fromfile=path, tofile=path)
