from __future__ import annotations

from typing import Iterator, List

from ms_lint import suppression
from ms_lint.rule import Diagnostic, Edit, Fix, Rule


class UnusedNoqa(Rule):
    """
    ## What it does
    Reports `# noqa: MSLxxx` comments that suppress nothing: a code whose rule is enabled but found nothing on
    that line, and a code that names no ms_lint rule (a typo such as `MSL0001`, or a rule that no longer
    exists). Codes of other tools (`E501`, `F401`) and bare `# noqa` comments are left alone.

    ## Why it matters in graph mode
    A `# noqa` outlives the finding it silenced: the line is fixed or moved, the comment stays, and the next real
    finding on that line is hidden without anyone having looked at it. A misspelt code suppresses nothing while
    it looks like it does. This is ruff's `RUF100` for ms_lint's own codes.

    Like `RUF100`, it is off by default (an info-level rule): enable it with `extend-select = ["MSL098"]` or
    `--extend-select MSL098`. A code whose rule is not enabled in the run (not selected, or switched off by
    `per-file-ignores` for the file) is not reported: with `--select MSL040`, a `# noqa: MSL001` is still needed.
    Findings of the project rules (MSL050-MSL055), judged after every file is linted, count as used too.

    ## Example
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return np.exp(x)  # noqa: MSL0001
    ```
    (a misspelt code; `return ops.exp(x)  # noqa: MSL001`, once the NumPy call is gone, is reported too)

    ## Use instead
    ```python
    class Net(nn.Cell):
        def construct(self, x):
            return np.exp(x)  # noqa: MSL001
    ```

    ## Fix
    Safe: removes the unused codes from the comment, or the whole `# noqa: ...` when none is left (text after
    it, such as `# reason`, stays).
    """

    code = "MSL098"
    name = "unused-noqa"
    severity = "info"
    scope = "module"
    message = "unused `noqa` directive ({problem})"
    fix_applicability = "safe"
    needles = ("noqa", "NOQA", "Noqa")
    # judged after the other project rules, with what their findings' suppressions used (`Linter.judge`)
    judges_suppressions = True

    def collect(self, ctx):
        """The module's `# noqa: CODES` comments and the (row, code) pairs the file's own findings used."""
        comments = suppression.noqa_comments(ctx.source.text, ctx.tree)
        if not comments:
            return None
        rows = {row for row, _, _, _ in comments}
        used = sorted([row, code] for row, code in ctx.suppressions_used if row in rows)
        return {"comments": [list(comment) for comment in comments], "used": used,
                "lines": {str(row): ctx.source.line(row) for row in rows}}

    def judge(self, project) -> Iterator[Diagnostic]:
        from ms_lint.catalog import rule_by_code, selector_problem  # the catalog imports every rule

        for path, facts in project.modules.items():
            used = {(row, code) for row, code in facts["used"]}
            for row, start, end, codes in facts["comments"]:
                unknown = [c for c in codes if c.startswith("MSL") and selector_problem(c)]
                unused = [c for c in codes if c.startswith("MSL") and c not in unknown and (row, c) not in used
                          and _enabled(project.settings, c, path, rule_by_code)]
                if not unknown and not unused:
                    continue
                problem = "; ".join(part for part in (
                    f"unused: {', '.join(f'`{c}`' for c in unused)}" if unused else "",
                    f"unknown: {', '.join(f'`{c}`' for c in unknown)}" if unknown else "") if part)
                kept = [c for c in codes if c not in unused and c not in unknown]
                fix = _fix(facts["lines"][str(row)], row, start, end, kept)
                yield self.report_at(project, path, ((row, start), (row, end)), fix=fix, problem=problem)


def _enabled(settings, code: str, path: str, rule_by_code) -> bool:
    """Whether any rule the code (or code prefix) names runs on `path`."""
    from ms_lint.catalog import all_rules

    rule = rule_by_code(code)
    rules = [rule] if rule is not None else [r for r in all_rules() if r.code.startswith(code)]
    return any(settings.is_selected(r.code, r.severity, path) for r in rules)


def _fix(line: str, row: int, start: int, end: int, kept: List[str]) -> Fix:
    if kept:
        return Fix("safe", "Remove the unused codes", (Edit(f"# noqa: {', '.join(kept)}", (row, start), (row, end)),))
    rest = line[end:]
    if rest.lstrip().startswith("#"):  # another comment follows: it moves up to the directive's place
        following = len(line) - len(rest.lstrip())
        return Fix("safe", "Remove the `noqa` directive", (Edit("", (row, start), (row, following)),))
    if rest.strip():  # the comment goes on after the directive (`# noqa: MSL001 -- why`): it stays a comment
        return Fix("safe", "Remove the `noqa` directive", (Edit("#", (row, start), (row, end)),))
    before = len(line[:start].rstrip())  # the spaces before the comment go with it
    return Fix("safe", "Remove the `noqa` directive", (Edit("", (row, before), (row, len(line))),))
