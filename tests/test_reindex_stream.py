"""``ai-memory reindex`` as one streaming pass: worker processes, one git checkpoint, a lean CLI.

Every test runs the real command line or the real pool against a real data dir.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ai_memory.config import Config
from ai_memory.core.text import fts_text
from ai_memory.runtime import Runtime
from ai_memory.wiki import bounded_yaml
from ai_memory.wiki.parse_pool import ParsePool
from ai_memory.wiki.reindex import CHUNK
from tests.conftest import clean_env, run_cli
from tests.test_wiki import snapshot

PAGES = 2 * CHUNK + 17  # more than two chunks, the last one short


def write_wiki(data_dir: Path) -> Path:
    """Hand-written files, some linking to each other, one broken and one not UTF-8."""
    root = data_dir / "wiki" / "default" / "bulk"
    for i in range(PAGES):
        folder = root / ("concepts" if i % 3 else "notes")
        folder.mkdir(parents=True, exist_ok=True)
        target = f"notes/n{(i + 3) // 3 * 3}.md"
        front = f"---\ntitle: Page {i}\nentities: [Entity {i % 5}]\ntags: [t{i % 4}]\n---\n"
        name = "notes/n" if i % 3 == 0 else "concepts/c"
        (root / f"{name}{i}.md").write_text(
            f"{front}# Page {i}\n\nalpha{i % 9} see [[{target}]].\n"
        )
    (root / "notes" / "broken.md").write_text("---\ntitle: [oops\n---\nquokka facts\n")
    (root / "notes" / "latin1.md").write_bytes(b"caf\xe9\n")
    return root


def test_the_pool_indexes_exactly_what_one_process_does(tmp_path: Path) -> None:
    from ai_memory.maintenance.init import initialise

    inline, pooled = tmp_path / "inline", tmp_path / "pooled"
    initialise(Config.load(inline, {}))
    write_wiki(inline)
    shutil.copytree(inline, pooled)
    reports = []
    for data_dir, pool in ((inline, None), (pooled, ParsePool(2))):
        config = Config.load(data_dir, {})
        runtime = Runtime.start(config, reconcile_wiki=False, search=False)
        try:
            reports.append(runtime.reindex(pool=pool))
        finally:
            runtime.stop()
            if pool is not None:
                pool.close()
    assert reports[0].files == reports[1].files == PAGES + 2
    assert reports[0].added == reports[1].added == PAGES + 1  # latin1.md is skipped
    assert reports[0].warnings == reports[1].warnings
    assert any("latin1.md: not UTF-8" in w for w in reports[1].warnings)
    assert snapshot(inline / "db" / "memory.sqlite") == snapshot(pooled / "db" / "memory.sqlite")


def test_cli_reindex_indexes_commits_and_sums_up(data_dir: Path) -> None:
    write_wiki(data_dir)
    result = run_cli("reindex", data_dir=data_dir)
    assert result.returncode == 0, result.stderr
    summary = result.stdout.decode()
    assert re.search(
        rf"reindexed {PAGES + 2} files: {PAGES + 1} added, 0 updated, 0 removed, 0 unchanged "
        r"in \d+\.\d\d s \([\d,]+ files/s\)",
        summary,
    ), summary
    # Not a terminal: no progress bar, only the warnings for the two bad files.
    assert [line.split(":")[0] for line in result.stderr.decode().splitlines()] == [
        "warning",
        "warning",
    ]
    repo = pygit2.Repository(str(data_dir / "wiki"))
    assert repo.status() == {}  # every file is in one checkpoint
    assert len(list(repo.walk(repo.head.target))) == 2  # the repository's first commit, and it
    again = run_cli("reindex", data_dir=data_dir)
    assert f"0 added, 0 updated, 0 removed, {PAGES + 1} unchanged" in again.stdout.decode()
    assert len(list(repo.walk(repo.head.target))) == 2


def test_cli_reindex_matches_an_index_built_at_server_start(tmp_path: Path) -> None:
    from ai_memory.maintenance.init import initialise

    by_cli, at_start = tmp_path / "cli", tmp_path / "start"
    initialise(Config.load(by_cli, {}))
    write_wiki(by_cli)
    shutil.copytree(by_cli, at_start)
    assert run_cli("reindex", data_dir=by_cli).returncode == 0
    Runtime.start(Config.load(at_start, {}), search=False).stop()  # reconciles at start
    assert snapshot(by_cli / "db" / "memory.sqlite") == snapshot(at_start / "db" / "memory.sqlite")


def loaded_modules(*argv: str) -> set[str]:
    """Top-level packages a CLI run loaded, seen from inside that process."""
    code = (
        "import sys\n"
        f"sys.argv = ['ai-memory', *{list(argv)!r}]\n"
        "from ai_memory.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(), timeout=120
    )
    return set(done.stdout.strip().splitlines()[-1].split())


def test_help_loads_no_config_http_client_git_or_server(data_dir: Path) -> None:
    heavy = {"httpx", "pygit2", "fastapi", "starlette", "uvicorn", "yaml", "mcp"}
    assert loaded_modules("--help") & {*heavy, "pydantic"} == set()
    # A command's own options are read by Typer through pydantic: that much it needs.
    assert loaded_modules("reindex", "--help") & heavy == set()


def test_reindex_loads_no_git_http_client_or_server_itself(data_dir: Path) -> None:
    write_wiki(data_dir)
    loaded = loaded_modules("reindex", "--data-dir", str(data_dir))
    assert loaded & {"pygit2", "httpx", "fastapi", "uvicorn", "mcp"} == set()
    repo = pygit2.Repository(str(data_dir / "wiki"))
    assert repo.status() == {}  # committed by a worker process


BLOCKS = [
    "title: Plain\ntags: [a, b]\n",
    '{"title": "flow", "entities": ["x", "y"]}\n',
    "created: 2026-01-01\nupdated: 2026-01-01T10:00:00Z\n",
    "a: &a [1, 2]\nb: *a\nc: {<<: {k: v}, d: 1}\n",
    "a: &a [*a]\n",
    "a: [1, 2\n",
    'tags: [ok, "\\ud800"]\n',
    "a: " + "[" * 30 + "]" * 30 + "\n",
    "a:\n\tb: 1\n",
    "- just\n- a list\n",
    "n: 0x1F\nf: 1e3\nb: yes\nnull_: ~\n",
]


@pytest.mark.parametrize("block", BLOCKS)
def test_libyaml_and_pure_python_read_a_block_alike(block: str) -> None:
    def outcome(loader: type[bounded_yaml._Bounds]) -> object:
        try:
            return bounded_yaml._load(loader, block)
        except bounded_yaml.FrontmatterRefused as exc:
            return ("refused", str(exc))
        except Exception as exc:
            return ("error", type(exc).__name__)

    if bounded_yaml._FAST is None:
        pytest.skip("PyYAML without libyaml")
    python = outcome(bounded_yaml.BoundedLoader)
    fast = outcome(bounded_yaml._FAST)
    assert fast == python or (isinstance(fast, tuple) and fast[0] == "error")
    try:  # what callers get: libyaml's refusals are read again by the pure-Python parser
        given_back: object = bounded_yaml.load(block)
    except bounded_yaml.FrontmatterRefused as exc:
        given_back = ("refused", str(exc))
    except Exception as exc:
        given_back = ("error", type(exc).__name__)
    assert given_back == python


EDGE_PUNCT = re.compile(r"(?<![\w])[-./]+|[-./]+(?![\w])")  # the pattern as first written


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"ab_1.-/ \n\tÄ²½٣·中", "\u0301"]), max_size=30))
def test_full_text_preparation_is_unchanged(text: str) -> None:
    assert fts_text(text) == EDGE_PUNCT.sub(" ", text)
