"""Which files are linted: gitignore-style `exclude` patterns, .gitignore files, virtualenvs and site-packages."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import run_cli

from ms_lint.config import ConfigError, load
from ms_lint.files import discover
from ms_lint.pathspec import PathSpec
from ms_lint.settings import Settings

BAD = ("import numpy as np\nfrom mindspore import nn\n\nclass N(nn.Cell):\n    def construct(self, x):\n"
       "        return np.exp(x)\n")
GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="the git executable is not installed")


def ignored(patterns, path: str) -> bool:
    """What a walk from the base skips: the path or one of its directories is excluded (git's rule: nothing inside
    an excluded directory can be included again). A path ending in "/" is a directory."""
    spec = PathSpec(patterns)
    parts = path.rstrip("/").split("/")
    is_dir = path.endswith("/")
    return any(spec.excludes("/".join(parts[:depth]), is_dir or depth < len(parts))
               for depth in range(1, len(parts) + 1))


# (patterns, path, ignored): each gitignore rule, with paths it must match and paths it must not
CASES = [
    # a pattern without a slash matches a name at any depth (files and directories)
    (["foo"], "foo", True),
    (["foo"], "a/b/foo", True),
    (["foo"], "a/foo/x.py", True),
    (["foo"], "foobar", False),
    (["foo"], "a/xfoo", False),
    (["*.py"], "a/b/c.py", True),
    (["*.py"], "c.pyi", False),
    (["*.egg-info"], "src/ms_lint.egg-info/", True),
    # a leading slash anchors to the base directory
    (["/foo"], "foo", True),
    (["/foo"], "foo/x.py", True),
    (["/foo"], "a/foo", False),
    # so does a slash in the middle
    (["a/foo"], "a/foo", True),
    (["a/foo"], "x/a/foo", False),
    (["a/*.py"], "a/b.py", True),
    (["a/*.py"], "a/b/c.py", False),
    (["a/*.py"], "x/a/b.py", False),
    # a trailing slash matches directories only (and does not anchor)
    (["gen/"], "gen/", True),
    (["gen/"], "gen", False),
    (["gen/"], "a/gen/x.py", True),
    (["/gen/"], "a/gen/", False),
    # *, ? and [...] never match "/"
    (["x/a*b"], "x/acccb", True),
    (["x/a*b"], "x/a/b", False),
    (["x/a?b"], "x/acb", True),
    (["x/a?b"], "x/a/b", False),
    (["x/a?b"], "x/ab", False),
    (["[a-c].py"], "b.py", True),
    (["[a-c].py"], "d.py", False),
    (["[!a-c].py"], "d.py", True),
    (["[!a-c].py"], "b.py", False),
    (["[]x].py"], "].py", True),
    (["x[.py"], "x[.py", False),  # an unclosed bracket matches nothing (git's wildmatch)
    # ** matches across directories
    (["**/gen/*.py"], "gen/a.py", True),
    (["**/gen/*.py"], "x/y/gen/a.py", True),
    (["**/gen/*.py"], "x/gen/sub/a.py", False),
    (["**/gen/*.py"], "x/gen.py", False),
    (["a/**/b"], "a/b", True),
    (["a/**/b"], "a/x/b", True),
    (["a/**/b"], "a/x/y/b", True),
    (["a/**/b"], "x/a/b", False),
    (["a/**/b"], "a/bc", False),
    (["docs/**"], "docs/", False),  # everything inside docs, not docs itself
    (["docs/**"], "docs/a.py", True),
    (["docs/**"], "docs/x/y/z.py", True),
    (["docs/**"], "x/docs/a.py", False),
    (["a**b.py"], "a/b.py", False),  # ** inside a segment is *
    (["a**b.py"], "axxb.py", True),
    # ! includes again; the last matching pattern wins
    (["*.py", "!keep.py"], "keep.py", False),
    (["*.py", "!keep.py"], "a/keep.py", False),
    (["*.py", "!keep.py"], "other.py", True),
    (["!keep.py", "*.py"], "keep.py", True),
    (["build/*", "!build/keep.py"], "build/keep.py", False),
    (["build/*", "!build/keep.py"], "build/other.py", True),
    (["docs/**", "!docs/x/"], "docs/x/", False),
    # ... but nothing inside an excluded directory can be included again
    (["build/", "!build/keep.py"], "build/keep.py", True),
    (["build", "!build/sub/"], "build/sub/m.py", True),
    # comments, blank lines, escapes and trailing spaces
    (["# comment", "", "\\#hash.py"], "#hash.py", True),
    (["# comment"], "# comment", False),
    (["\\!bang.py"], "!bang.py", True),
    (["trail.py   "], "trail.py", True),
    (["space\\ "], "space ", True),
    (["a\\*.py"], "ab.py", False),
    (["a\\*.py"], "a*.py", True),
]


@pytest.mark.parametrize("patterns, path, expected", CASES, ids=[f"{'|'.join(p)}~{path}" for p, path, _ in CASES])
def test_gitignore_pattern_semantics(patterns, path, expected):
    assert ignored(patterns, path) is expected


def _git_ignored(repository: Path, lines, paths):
    """The paths git itself ignores with `lines` as the repository's .gitignore (the paths exist on disk)."""
    (repository / ".gitignore").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    result = subprocess.run([GIT, "-c", "core.excludesFile=", "check-ignore", "--no-index", "--stdin"],
                            cwd=repository, input="\n".join(paths) + "\n", capture_output=True, text=True,
                            env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"})
    assert result.returncode in (0, 1), result.stderr
    return set(result.stdout.splitlines())


def _make_paths(root: Path, paths):
    for path in paths:
        target = root / path.rstrip("/")
        if path.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("")


@needs_git
def test_the_table_agrees_with_git(tmp_path):
    for number, (patterns, path, expected) in enumerate(CASES):
        repository = tmp_path / str(number)
        repository.mkdir()
        subprocess.run([GIT, "init", "-q"], cwd=repository, check=True)
        _make_paths(repository, [path])
        assert (path.rstrip("/") in _git_ignored(repository, patterns, [path.rstrip("/")])) is expected, \
            (patterns, path)


# A fixed tree (directories end in "/"), and random patterns over its names: ms_lint must ignore what git ignores.
TREE = [f"{a}/" for a in "ab"] + ["ab", "ba.py"] + [f"{a}/{b}/" for a in "ab" for b in "ab"] + \
       [f"{a}/{n}" for a in "ab" for n in ("ab", "ba.py")] + \
       [f"{a}/{b}/{n}" for a in "ab" for b in "ab" for n in ("a", "b", "ab", "ba.py")]
SEGMENTS = st.sampled_from(["a", "b", "ab", "*", "?", "**", "a*", "*.py", "[ab]", "[!a]", "b?", "*b"])
PATTERNS = st.builds(
    lambda negated, leading, segments, trailing: ("!" if negated else "") + ("/" if leading else "")
    + "/".join(segments) + ("/" if trailing else ""),
    st.booleans(), st.booleans(), st.lists(SEGMENTS, min_size=1, max_size=3), st.booleans())


@pytest.fixture(scope="module")
def git_tree():
    directory = Path(tempfile.mkdtemp(prefix="ms-lint-gitignore-"))
    subprocess.run([GIT, "init", "-q"], cwd=directory, check=True)
    _make_paths(directory, TREE)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@needs_git
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PATTERNS, min_size=1, max_size=4))
def test_random_patterns_agree_with_git(git_tree, patterns):
    paths = [p.rstrip("/") for p in TREE]
    by_git = _git_ignored(git_tree, patterns, paths)
    by_us = {p.rstrip("/") for p in TREE if ignored(patterns, p)}
    assert by_us == by_git, patterns


# ----- discovery and the CLI on real trees -------------------------------------------------------------------------
def make_tree(root: Path, files: dict) -> Path:
    """Files by relative path ("dir/" makes a directory); .py files get code with a finding."""
    for path, content in files.items():
        target = root / path
        if path.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(BAD if content is None else content, encoding="utf-8")
    return root


def found(root: Path, paths=None, **options) -> set:
    """Discovered files relative to `root`, `/`-separated."""
    settings = options.pop("settings", None) or load(str(root))
    files = discover([str(p) for p in (paths or [root])], settings, **options)
    return {Path(os.path.abspath(f)).relative_to(root).as_posix() for f in files}


def linted(root: Path, *args) -> set:
    code, out = run_cli("check", "--no-cache", "--output-format", "json", *args, cwd=root)
    assert code in (0, 1), out
    return {Path(os.path.abspath(root / d["filename"])).relative_to(root).as_posix() for d in json.loads(out)}


def outside_any_repository(path: Path) -> bool:
    return not any((parent / ".git").exists() for parent in (path, *path.parents))


@pytest.fixture
def repository(tmp_path):
    """A git repository (only `.git` matters for discovery) with .gitignore files at several levels."""
    root = tmp_path / "project"
    make_tree(root, {
        ".git/info/exclude": "# local excludes\nlocal_*.py\n",
        "pyproject.toml": "[tool.ms_lint]\n",
        ".gitignore": "generated/\n*.gen.py\n/top_only.py\n",
        "keep.py": None,
        "top_only.py": None,
        "local_notes.py": None,
        "generated/a.py": None,
        "pkg/top_only.py": None,
        "pkg/x.gen.py": None,
        "pkg/.gitignore": "!special.gen.py\n",
        "pkg/special.gen.py": None,
        "pkg/sub/.gitignore": "*.py\n!keep_me.py\n",
        "pkg/sub/drop.py": None,
        "pkg/sub/keep_me.py": None,
    })
    return root


KEPT = {"keep.py", "pkg/top_only.py", "pkg/special.gen.py", "pkg/sub/keep_me.py"}
EVERYTHING = KEPT | {"top_only.py", "local_notes.py", "generated/a.py", "pkg/x.gen.py", "pkg/sub/drop.py"}


def test_gitignore_files_are_respected(repository):
    assert found(repository) == KEPT
    assert linted(repository, ".") == KEPT


def test_gitignore_files_of_parent_directories_apply_up_to_the_repository_root(repository):
    # linting pkg/ alone still reads the root .gitignore (*.gen.py) and .git/info/exclude
    assert found(repository, [repository / "pkg"]) == {"pkg/top_only.py", "pkg/special.gen.py", "pkg/sub/keep_me.py"}
    make_tree(repository, {"pkg/local_x.py": None})
    assert "pkg/local_x.py" not in found(repository, [repository / "pkg"])


def test_no_respect_gitignore_flag_and_key(repository):
    assert linted(repository, "--no-respect-gitignore", ".") == EVERYTHING
    (repository / "pyproject.toml").write_text("[tool.ms_lint]\nrespect-gitignore = false\n", encoding="utf-8")
    assert found(repository) == EVERYTHING
    assert linted(repository, ".") == EVERYTHING


def test_respect_gitignore_must_be_a_boolean(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nrespect-gitignore = "no"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="`respect-gitignore` must be true or false, got 'no'"):
        load(str(tmp_path))
    assert run_cli("check", str(tmp_path))[0] == 2
    assert "respect-gitignore" in capsys.readouterr().err


def test_explicit_files_are_linted_unless_force_exclude(repository):
    named = ["generated/a.py", "pkg/x.gen.py", "local_notes.py", "keep.py"]
    assert linted(repository, *named) == set(named)
    assert linted(repository, "--force-exclude", *named) == {"keep.py"}
    assert found(repository, [repository / "generated"]) == {"generated/a.py"}  # a directory named explicitly
    assert found(repository, [repository / "generated"], force_exclude=True) == set()


def test_force_exclude_checks_the_directories_of_a_named_file(repository):
    make_tree(repository, {"generated/deep/b.py": None, "legacy/old.py": None})
    (repository / "pyproject.toml").write_text('[tool.ms_lint]\nextend-exclude = ["legacy/"]\n', encoding="utf-8")
    named = [repository / "generated/deep/b.py", repository / "legacy/old.py"]
    assert found(repository, named) == {"generated/deep/b.py", "legacy/old.py"}
    assert found(repository, named, force_exclude=True) == set()


def test_a_nested_repository_has_its_own_gitignore(repository):
    make_tree(repository, {"vendor/lib/.git/": None, "vendor/lib/y.gen.py": None, "vendor/lib/.gitignore": "drop.py\n",
                           "vendor/lib/drop.py": None, "vendor/z.gen.py": None})
    assert found(repository, [repository / "vendor"]) == {"vendor/lib/y.gen.py"}


def test_gitignore_outside_a_repository_is_not_read(tmp_path):
    if not outside_any_repository(tmp_path):
        pytest.skip("the temporary directory is inside a git repository")
    make_tree(tmp_path, {".gitignore": "*.py\n", "m.py": None})
    assert found(tmp_path, settings=Settings()) == {"m.py"}  # as with git and ruff


def test_exclude_patterns_follow_gitignore_semantics(tmp_path):
    make_tree(tmp_path, {
        "pyproject.toml": '[tool.ms_lint]\nextend-exclude = ["/legacy/", "**/gen/*.py", "docs/**", "tests/*.py", '
                          '"!tests/test_keep.py"]\n',
        "legacy/a.py": None, "src/legacy/b.py": None, "src/gen/c.py": None, "gen/d.py": None, "src/gen/sub/e.py": None,
        "docs/conf.py": None, "docs/api/f.py": None, "tests/test_a.py": None, "tests/test_keep.py": None,
        "tests/unit/test_b.py": None, "build/lib/g.py": None, "pkg.egg-info/h.py": None,
    })
    assert found(tmp_path) == {"src/legacy/b.py", "src/gen/sub/e.py", "tests/test_keep.py", "tests/unit/test_b.py"}


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(tmp_path):
    make_tree(tmp_path, {"pyproject.toml": '[tool.ms_lint]\nextend-exclude = ["old"]\n', "build/a.py": None,
                         "old/b.py": None, "c.py": None, "__pycache__/d.py": None})
    assert found(tmp_path) == {"c.py"}
    (tmp_path / "pyproject.toml").write_text('[tool.ms_lint]\nexclude = ["old"]\n', encoding="utf-8")
    assert found(tmp_path) == {"build/a.py", "c.py", "__pycache__/d.py"}


def test_patterns_outside_the_project_root_match_names_only(tmp_path):
    make_tree(tmp_path, {"project/pyproject.toml": '[tool.ms_lint]\nextend-exclude = ["skip_me.py", "/other/"]\n',
                         "other/skip_me.py": None, "other/m.py": None})
    settings = load(str(tmp_path / "project"))
    files = discover([str(tmp_path / "other")], settings)
    assert sorted(os.path.basename(f) for f in files) == ["m.py"]


def test_virtualenvs_and_site_packages_are_never_walked_unless_named(tmp_path):
    packages = "env/lib/python3.11/site-packages"
    make_tree(tmp_path, {
        "pyproject.toml": '[tool.ms_lint]\nexclude = ["nothing-matches-this"]\n',  # no default excludes
        "env/pyvenv.cfg": "home = /usr/bin\n", "env/bin/tool.py": None, f"{packages}/pkg/m.py": None,
        "vendored/site-packages/n.py": None, "vendored/dist-packages/o.py": None, "app.py": None,
    })
    assert found(tmp_path) == {"app.py"}
    assert found(tmp_path, [tmp_path / "env"]) == {"env/bin/tool.py"}  # its site-packages stays skipped
    assert found(tmp_path, [tmp_path / packages]) == {f"{packages}/pkg/m.py"}
    assert found(tmp_path, [tmp_path / packages / "pkg" / "m.py"]) == {f"{packages}/pkg/m.py"}
    assert found(tmp_path, [tmp_path / "vendored" / "site-packages"]) == {"vendored/site-packages/n.py"}


@needs_git
def test_discovery_lists_what_git_lists(repository):
    shutil.rmtree(repository / ".git")
    subprocess.run([GIT, "init", "-q"], cwd=repository, check=True)
    (repository / ".git" / "info").mkdir(exist_ok=True)
    (repository / ".git" / "info" / "exclude").write_text("local_*.py\n", encoding="utf-8")
    listed = subprocess.run([GIT, "-c", "core.excludesFile=", "ls-files", "--others", "--exclude-standard"],
                            cwd=repository, capture_output=True, text=True, check=True).stdout.splitlines()
    assert found(repository) == {p for p in listed if p.endswith(".py")} == KEPT
