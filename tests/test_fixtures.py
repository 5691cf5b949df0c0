"""Every fixture: the `# expect:` lines fire, nothing else does, and the CLI, flake8 and pylint agree."""
from __future__ import annotations

import pytest
from support import expected_findings, fixture_files, fixture_params

FIXTURES = fixture_files()


@pytest.mark.parametrize("fixture", fixture_params(FIXTURES))
def test_cli_matches_expectations(fixture, front_end_findings):
    found = {(row, code) for row, _, code in front_end_findings["cli"].get(fixture.name, set())}
    expected = expected_findings(fixture)
    assert expected, f"{fixture.name} has no `# expect:` line"
    assert sorted(found - expected) == [], "fired on lines not marked `# expect:`"
    assert sorted(expected - found) == [], "did not fire on lines marked `# expect:`"


@pytest.mark.parametrize("front_end", ["flake8", "pylint"])
@pytest.mark.parametrize("fixture", fixture_params(FIXTURES))
def test_front_ends_agree(fixture, front_end, front_end_findings):
    cli = front_end_findings["cli"].get(fixture.name, set())
    other = front_end_findings[front_end].get(fixture.name, set())
    if fixture.stem == "MSL099":
        # flake8 (E999) and pylint (syntax-error) parse files themselves and report the error before plugins run.
        cli = {(row, code) for row, _, code in cli}
        other = {(row, code) for row, _, code in other}
    assert other == cli
