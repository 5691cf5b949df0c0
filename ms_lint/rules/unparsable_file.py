from __future__ import annotations

from ms_lint.rule import Diagnostic, Rule
from ms_lint.source import SourceError


class UnparsableFile(Rule):
    """
    ## What it does
    Reports a file that cannot be read, decoded or parsed as Python: a syntax error, bytes that are not valid in
    the file's encoding, a null byte, or nesting too deep for the parser.

    ## Why it matters in graph mode
    MindSpore cannot import such a file either. ms_lint reports it as a diagnostic and goes on with the other
    files, instead of crashing or silently skipping it: a file it could not read is a file nothing was checked in.

    ## Example
    ```python
    def construct(self, x)
        return x
    ```

    ## Use instead
    ```python
    def construct(self, x):
        return x
    ```

    ## Fix
    None.

    ## Front ends
    flake8 and pylint parse the file themselves before plugins run: they report their own `E999` and
    `syntax-error` (E0001) instead of MSL099.
    """

    code = "MSL099"
    name = "unparsable-file"
    severity = "error"
    scope = "module"
    message = "cannot lint this file: {reason}"

    def for_source_error(self, error: SourceError, path: str) -> Diagnostic:
        return Diagnostic(code=self.code, symbol=self.name, message=self.message.format(reason=error),
                          severity=self.severity, path=path, row=error.row, column=error.column,
                          end_row=error.row, end_column=error.column)
