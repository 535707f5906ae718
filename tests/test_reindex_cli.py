"""``ai-memory reindex`` run straight from the entry point prints what the Typer command prints.

Real command lines against real data dirs: the direct run (no Typer, Click or Rich
loaded) and the same command through Typer, compared line for line.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ai_memory.cli.rebuild import direct_data_dir
from tests.conftest import clean_env
from tests.test_reindex_stream import PAGES, loaded_modules, write_wiki

THROUGH_TYPER = (
    "import sys\nfrom ai_memory.cli.app import run_app\n"
    "sys.argv = ['ai-memory', *sys.argv[1:]]\nrun_app()\n"
)
TIMING = re.compile(r"in \d+\.\d\d s \([\d,]+ files/s\)")


def run(*argv: str, typer: bool = False) -> subprocess.CompletedProcess[str]:
    head = [sys.executable, "-c", THROUGH_TYPER] if typer else [sys.executable, "-m", "ai_memory"]
    return subprocess.run(
        [*head, *argv], capture_output=True, text=True, env=clean_env(), timeout=120
    )


def test_the_direct_run_loads_no_typer_click_or_rich(data_dir: Path) -> None:
    write_wiki(data_dir)
    loaded = loaded_modules("reindex", "--data-dir", str(data_dir))
    assert loaded & {"typer", "click", "rich", "pygit2", "httpx"} == set()


def test_direct_and_typer_runs_print_the_same(tmp_path: Path) -> None:
    from ai_memory.config import Config
    from ai_memory.maintenance.init import initialise

    outputs = []
    for name, typer in (("direct", False), ("typer", True)):
        data_dir = tmp_path / name
        initialise(Config.load(data_dir, {}))
        root = write_wiki(data_dir)
        (root / "notes" / "bell\x07.md").write_text("odd name\n")  # a warning to escape
        done = run("reindex", f"--data-dir={data_dir}", typer=typer)
        assert done.returncode == 0, done.stderr
        outputs.append((TIMING.sub("in T", done.stdout), done.stderr.replace(str(data_dir), "D")))
    assert outputs[0] == outputs[1]
    summary, warnings = outputs[0]
    # The badly named file is skipped with a warning that shows its name escaped.
    assert summary == f"reindexed {PAGES + 2} files: {PAGES + 1} added, 0 updated, 0 removed, " + (
        "0 unchanged in T\n"
    )
    assert "\x07" not in warnings and "bell\\x07.md" in warnings
    assert all(line.startswith("warning: ") for line in warnings.splitlines())


def test_a_refused_direct_run_prints_one_error_line(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    direct = run("reindex", "--data-dir", str(missing))
    typer = run("reindex", "--data-dir", str(missing), typer=True)
    assert direct.returncode == typer.returncode == 1
    assert direct.stderr == typer.stderr
    assert direct.stderr.startswith("error: ") and len(direct.stderr.splitlines()) == 1
    assert not missing.exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], (True, None)),
        (["--data-dir", "d"], (True, Path("d"))),
        (["--data-dir=d"], (True, Path("d"))),
        (["--data-dir"], (False, None)),
        (["--data-dir="], (False, None)),
        (["--data-dir", "--help"], (False, None)),
        (["--help"], (False, None)),
        (["--data-dir", "d", "extra"], (False, None)),
    ],
)
def test_only_the_commands_own_options_run_directly(
    argv: list[str], expected: tuple[bool, Path | None]
) -> None:
    assert direct_data_dir(argv) == expected


def test_anything_else_goes_through_typer(data_dir: Path) -> None:
    helped = run("reindex", "--help")
    assert helped.returncode == 0 and "--data-dir" in helped.stdout
    wrong = run("reindex", "--data-dir")
    assert wrong.returncode == 2 and "requires an argument" in wrong.stderr
