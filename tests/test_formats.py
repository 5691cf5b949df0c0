"""Output formats: every format carries the same findings, positions 1-based."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

from support import ROOT, run_cli

EXAMPLE = str(ROOT / "examples")


def output(fmt, *extra):
    code, out = run_cli("check", "--output-format", fmt, *extra, EXAMPLE)
    assert code == 1
    return out


def findings():
    return [(d["code"], d["location"]["row"], d["location"]["column"]) for d in json.loads(output("json"))]


def test_sarif_has_rules_results_regions_and_fixes():
    document = json.loads(output("sarif"))
    assert document["version"] == "2.1.0"
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {"id", "name", "shortDescription", "fullDescription", "helpUri"} <= set(rules[0])
    results = run["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
             r["locations"][0]["physicalLocation"]["region"]["startColumn"]) for r in results] == findings()
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    assert {r["level"] for r in results} == {"error", "warning"}
    fixed = [r for r in results if "fixes" in r]
    assert fixed and fixed[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"]
    assert not any("partialFingerprints" in r or "fingerprints" in r for r in results)


def test_github_annotations():
    lines = output("github").splitlines()
    assert len(lines) == len(findings())
    assert lines[0].startswith("::error file=") and ",title=MSL030::MSL030 " in lines[0]
    assert any(line.startswith("::warning ") for line in lines)


def test_gitlab_code_quality():
    issues = json.loads(output("gitlab"))
    assert [(i["check_name"], i["location"]["lines"]["begin"]) for i in issues] == [(c, r) for c, r, _ in findings()]
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert {i["severity"] for i in issues} <= {"major", "minor", "info"}


def test_junit_is_valid_xml_with_one_failure_per_finding():
    root = ElementTree.fromstring(output("junit"))
    failures = root.findall(".//failure")
    assert len(failures) == len(findings()) == int(root.get("failures"))
    assert failures[0].get("type") == "MSL030"


def test_text_marks_fixable_findings_and_statistics_count_per_rule():
    text = output("text")
    assert "MSL030 [error] Python list of Cells" in text and "4 more with `--fix --unsafe-fixes`." in text
    code, unsafe = run_cli("check", "--unsafe-fixes", EXAMPLE)
    assert "MSL030 [error] [*] Python list of Cells" in unsafe and "[*] 4 fixable with `--fix`." in unsafe
    code, stats = run_cli("check", "--statistics", EXAMPLE)
    assert code == 1 and stats.splitlines()[0].split()[:2] == ["2", "MSL040"]
