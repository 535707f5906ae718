"""``ai-memory serve`` run straight from the entry point, against the same command through Typer.

Real servers on real data dirs: the direct run (no Typer, Click or Rich loaded
before the server answers) prints the lines the Typer command prints, refuses
with the same one error line, and leaves every other command line to Typer.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ai_memory.cli.serving import direct_args
from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess, clean_env, free_port

THROUGH_TYPER = (
    "import sys\nfrom ai_memory.cli.app import run_app\n"
    "sys.argv = ['ai-memory', *sys.argv[1:]]\nrun_app()\n"
)
# The modules a server loaded, in the order it imported them, seen from inside it.
MODULES_AT_EXIT = (
    "import atexit, sys\n"
    "out = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(out, 'w').write(' '.join(sys.modules)))\n"
    "sys.argv = ['ai-memory', *sys.argv[1:]]\n"
    "from ai_memory.cli.entry import main\nmain()\n"
)


@dataclass
class Served(ServerProcess):
    """A server started by ``head`` (the console entry, or Typer's app), stopped by SIGINT
    as a terminal's Ctrl-C stops it, its output kept apart."""

    head: list[str] = field(default_factory=lambda: [sys.executable, "-m", "ai_memory"])

    def start(self) -> ServerProcess:
        argv = [*self.head, "serve", "--data-dir", str(self.data_dir)]
        self.process = subprocess.Popen(
            [*argv, "--bind", f"127.0.0.1:{self.port}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
        )
        deadline = time.monotonic() + 60
        with self.client(timeout=1) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited with {self.process.returncode}")
                if self.listening() and self.healthy(client):
                    return self
                time.sleep(0.02)
        raise RuntimeError("server did not become healthy in 60 s")

    def interrupt(self) -> tuple[int, str, str]:
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=60)
        return self.process.returncode, out.decode(), err.decode()


def fresh(root: Path) -> Path:
    initialise(Config.load(root, {}))
    return root


def run(*argv: str, typer: bool = False) -> subprocess.CompletedProcess[str]:
    head = [sys.executable, "-c", THROUGH_TYPER] if typer else [sys.executable, "-m", "ai_memory"]
    return subprocess.run(
        [*head, *argv], capture_output=True, text=True, env=clean_env(), timeout=120
    )


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], {}),
        (["--data-dir", "d"], {"--data-dir": "d"}),
        (["--bind=127.0.0.1:1", "--data-dir=d"], {"--bind": "127.0.0.1:1", "--data-dir": "d"}),
        (["--bind", "[::1]:8080"], {"--bind": "[::1]:8080"}),
        (["--bind"], None),
        (["--bind="], None),
        (["--data-dir", "--bind", "x:1"], None),
        (["--data-dir", "a", "--data-dir", "b"], None),
        (["--allow-remote"], None),
        (["--help"], None),
        (["--bind", "x:1", "extra"], None),
        (["--bnid", "x:1"], None),
    ],
)
def test_only_the_commands_plain_options_run_directly(
    argv: list[str], expected: dict[str, str] | None
) -> None:
    assert direct_args(argv) == expected


def test_direct_and_typer_runs_print_the_same_lines(tmp_path: Path) -> None:
    outputs = []
    for name, head in (
        ("direct", [sys.executable, "-m", "ai_memory"]),
        ("typer", [sys.executable, "-c", THROUGH_TYPER]),
    ):
        # A long path: the lines are never wrapped, so an address or a path copies whole.
        data_dir = fresh(tmp_path / name / ("long-" * 16 + "data"))
        server = Served(data_dir, head=head).start()
        with server.client() as client:
            assert client.get("/api/v1/status").json()["pages"] == 0
        code, out, _ = server.interrupt()
        outputs.append((code, out.replace(str(data_dir), "D").replace(str(server.port), "PORT")))
    assert outputs[0] == outputs[1]
    assert outputs[0][1].splitlines() == [
        "ai-memory serving D",
        "  API:      http://127.0.0.1:PORT/api/v1",
        "  MCP:      http://127.0.0.1:PORT/mcp",
        "  health:   http://127.0.0.1:PORT/healthz",
        "  web UI:   http://127.0.0.1:PORT/web",
        "  sign in:  http://127.0.0.1:PORT/web/login (token file below)",
        "  token:    D/auth-tokens/default",
    ]


def test_the_direct_run_answers_without_typer_or_the_other_commands(tmp_path: Path) -> None:
    """Typer, the other commands and their Rich consoles are never loaded; Click comes
    with uvicorn, and Rich only with the MCP SDK, built once the server answers."""
    modules = tmp_path / "modules.txt"
    data_dir = fresh(tmp_path / "data")
    head = [sys.executable, "-c", MODULES_AT_EXIT, str(modules)]
    server = Served(data_dir, head=head).start()
    with server.client() as client:
        assert client.get("/api/v1/status").status_code == 200
    code, _, err = server.interrupt()
    assert code == 0, err
    loaded = modules.read_text().split()  # in the order they were imported
    assert "fastapi" in loaded and "uvicorn" in loaded
    assert {"typer", "ai_memory.cli.app", "ai_memory.cli.output"} & set(loaded) == set()
    rich = [at for at, name in enumerate(loaded) if name.split(".")[0] == "rich"]
    assert all(at > loaded.index("ai_memory.mcp.server") for at in rich)


@pytest.mark.parametrize("bind", ["0.0.0.0:9", "nonsense"])
def test_a_refused_direct_run_prints_the_typer_run_s_error_line(tmp_path: Path, bind: str) -> None:
    data_dir = fresh(tmp_path / "data")
    direct = run("serve", "--bind", bind, "--data-dir", str(data_dir))
    typer = run("serve", "--bind", bind, "--data-dir", str(data_dir), typer=True)
    assert direct.returncode == typer.returncode == 1
    assert direct.stderr == typer.stderr and direct.stdout == typer.stdout == ""
    assert direct.stderr.startswith("error: ") and len(direct.stderr.splitlines()) == 1


def test_anything_else_goes_through_typer(tmp_path: Path) -> None:
    helped = run("serve", "--help")
    assert helped.returncode == 0
    assert "--allow-remote" in helped.stdout and "--bind" in helped.stdout
    missing = run("serve", "--bind")
    assert missing.returncode == 2 and "requires an argument" in missing.stderr
    typo = run("serve", "--bnid", f"127.0.0.1:{free_port()}")
    assert typo.returncode == 2 and "No such option" in typo.stderr
