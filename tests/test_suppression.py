from __future__ import annotations

import ast
import textwrap

import pytest

from ms_lint import lint_source, suppression

HEADER = "import numpy as np\nfrom mindspore import nn\n\n"


def codes(body):
    return [(d.row, d.code) for d in lint_source(HEADER + textwrap.dedent(body), "m.py")]


def test_line_suppressions():
    found = codes("""
        class N(nn.Cell):
            def construct(self, x):
                a = np.exp(x)  # noqa
                b = np.exp(x)  # NOQA: MSL001
                c = np.exp(x)  # noqa: MSL0
                d = np.exp(x)  # noqa: MSL040
                e = np.exp(x)  # ms-lint: ignore
                f = np.exp(x)  # pylint: disable=W8701
                g = "# noqa"; h = np.exp(x)
                return a, b, c, d, e, f, g, h
    """)
    assert found == [(10, "MSL001"), (13, "MSL001")]


def test_pylint_block_disable_and_enable():
    found = codes("""
        class N(nn.Cell):
            def construct(self, x):
                # pylint: disable=numpy-in-graph
                a = np.exp(x)
                # pylint: enable=numpy-in-graph
                b = np.exp(x)
                # pylint: disable-next=numpy-in-graph
                c = np.exp(x)
                return a, b, c
    """)
    assert found == [(10, "MSL001")]


def test_disable_on_a_def_line_covers_the_function():
    found = codes("""
        class N(nn.Cell):
            def construct(self, x):  # pylint: disable=numpy-in-graph
                return np.exp(x)
    """)
    assert found == []


def test_skip_file():
    for marker in ("# ms-lint: skip-file", "# flake8: noqa", "# pylint: skip-file"):
        assert codes(f"""
            {marker}
            class N(nn.Cell):
                def construct(self, x):
                    return np.exp(x)
        """) == []


# Comments are found from the lines and the tree's string literals, not by tokenizing: these are the cases where
# a `#` and a marker sit in or between string literals, and the rows a tokenizer would count differently.
TRICKY_SOURCES = {
    "docstring": 'def f():\n    """Example:\n\n        x = 1  # noqa: E501\n    """\n    return 1  # noqa\n',
    "hash in a string": 'x = "#"  # noqa: MSL001\ny = "# noqa"\n',
    "concatenated parts": 'x = (\n    "a"  # noqa: E501\n    "b#"  # pylint: disable=foo\n    f"{1}"\n)\n',
    "continued string": 'x = "a \\\n# noqa" # ms-lint: ignore[MSL001]\n',
    "raw and bytes": 'x = (rb"\\"#"  # noqa\n      br"x")\n',
    "decorator": '@d("#")  # noqa\n@e(  # pylint: disable=x\n    "y")\ndef f():\n    pass\n',
    "non-ascii": 'x = "é#ü"  # noqa: MSL001\n',
    "crlf": 'x = 1  # noqa\r\ny = "#" # noqa: E1\r\n',
    "lone cr": 'x = 1  # noqa\ry = 2  # noqa: E1\n',
    "form feed": '\x0cx = 1  # noqa\n',
    "triple in concatenation": 'x = ("""a\n# noqa\n"""  # noqa: E2\n     "b")\n',
}


@pytest.mark.parametrize("name", sorted(TRICKY_SOURCES))
def test_comments_found_without_tokenizing_are_the_tokenizers(name):
    text = TRICKY_SOURCES[name]
    lines = text.split("\n")
    marked = [row for row, line in enumerate(lines, 1) if "#" in line and suppression._MARKERS.search(line)]
    tokenized = [c for c in suppression._tokenized_comments(text, lines, marked[-1]) if c[0] in marked]
    assert tokenized, name  # each case has a comment to find
    assert suppression._marked_comments(text, ast.parse(text)) == tokenized
