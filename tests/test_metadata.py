"""Rule metadata: the docs/RULES.md contract, pylint message ids, docs pages and their index."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ms_lint.catalog import all_rules, pylint_id
from ms_lint.docs import index_path, page_path, render, render_index
from ms_lint.rule import DECLARED_SEVERITIES, SCOPES

ROOT = Path(__file__).resolve().parent.parent
RULES_MD = ROOT / "docs" / "RULES.md"
RULES = all_rules()


def contract():
    """{code: (symbol, severity column, fix column)} from docs/RULES.md."""
    rows = {}
    for line in RULES_MD.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\|\s*(MSL\d{3})\s*\|\s*([a-z0-9-]+)\s*\|\s*([^|]+?)\s*\|.*\|\s*([^|]*?)\s*\|\s*$", line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(3), match.group(4))
    return rows


def test_every_rule_has_a_row_in_the_contract_and_every_row_is_a_rule():
    assert sorted(contract()) == [rule.code for rule in RULES]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_code_symbol_severity_and_fix_follow_the_contract(rule):
    symbol, severity, fix = contract()[rule.code]
    assert rule.name == symbol
    assert rule.severity == severity.split()[0], f"docs/RULES.md says {severity!r}"
    applicability = re.match(r"[a-z-]+", fix).group(0)  # "safe: ...", "unsafe: ...", "none (...)"
    assert (rule.fix_applicability or "none") == applicability, f"docs/RULES.md says {fix!r}"


def test_the_compiled_only_rules_are_the_contracts():
    text = RULES_MD.read_text(encoding="utf-8")
    paragraph = re.search(r"\*\*Compiled-only\.\*\*(.+?)\n\*\*", text, re.S).group(1)
    listed = sorted(set(re.findall(r"MSL\d{3}", paragraph)))
    assert listed == [rule.code for rule in RULES if rule.compiled_only]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_declares_what_the_engine_needs(rule):
    assert rule.severity in DECLARED_SEVERITIES and rule.scope in SCOPES
    for heading in ("## What it does", "## Why it matters in graph mode", "## Example", "## Use instead", "## Fix"):
        assert heading in rule.docs(), f"{rule.code} docstring lacks {heading!r}"
    assert rule.summary() and rule.message
    assert (rule.fix_applicability is None) or rule.fix_applicability in ("safe", "unsafe", "display-only")


def test_the_rules_index_is_fresh():
    index = Path(index_path(str(ROOT)))
    assert index.exists() and index.read_text(encoding="utf-8") == render_index(RULES), \
        "stale: run `python -m ms_lint.docs`"


def test_codes_symbols_and_pylint_ids_are_unique():
    for values in ([r.code for r in RULES], [r.name for r in RULES], [pylint_id(r) for r in RULES]):
        assert len(values) == len(set(values))


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_docs_page_is_fresh(rule):
    page = Path(page_path(str(ROOT), rule))
    assert page.exists(), "run `python -m ms_lint.docs`"
    assert page.read_text(encoding="utf-8") == render(rule), "stale: run `python -m ms_lint.docs`"


def test_no_message_id_clash_with_pylint_bundled_extensions(tmp_path):
    """pylint refuses to load two checkers declaring one id; load every bundled extension next to ms_lint."""
    import pylint.extensions

    extensions = sorted(p.stem for p in Path(pylint.extensions.__file__).parent.glob("*.py")
                        if not p.stem.startswith("_"))
    target = tmp_path / "empty.py"
    target.write_text("x = 1\n")
    plugins = ",".join([f"pylint.extensions.{name}" for name in extensions] + ["ms_lint"])
    run = subprocess.run([sys.executable, "-m", "pylint", f"--load-plugins={plugins}", "--list-msgs-enabled"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "numpy-in-graph (E8701)" in run.stdout or "numpy-in-graph (W8701)" in run.stdout
    assert "InvalidMessageError" not in run.stderr and "conflict" not in run.stderr.lower()


def test_hooks_on_unwalked_singleton_nodes_are_rejected():
    from ms_lint.rule import Rule

    class AddHook(Rule):
        code, name, severity, message = "MSL998", "add-hook", "error", "x"

        def visit_add(self, node, ctx):
            return ()

    with pytest.raises(TypeError, match="does not walk Add"):
        list(AddHook.hooks())
