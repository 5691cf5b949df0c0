from __future__ import annotations

import textwrap

from ms_lint import lint_source

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
