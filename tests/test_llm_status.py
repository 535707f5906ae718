"""A real ``ai-memory serve`` with a provider: status and doctor show the candidates,
and a missing key stops the server at start-up."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx

from tests.conftest import AI_MEMORY, ServerProcess, clean_env, free_port, run_cli
from tests.fake_llm import FakeLlm, fake_llm
from tests.llm_support import llm_env

__all__ = ["fake_llm"]


def test_status_and_doctor_show_each_candidate(fake_llm: FakeLlm, data_dir: Path) -> None:
    fallbacks = [{"provider": "gemini", "model": "g", "base_url": fake_llm.gemini_url}]
    env = clean_env(
        **llm_env("openai-compat", fake_llm.openai_url, model="local"),
        AI_MEMORY_LLM_FALLBACKS=json.dumps(fallbacks),
        GEMINI_API_KEY="gm-status-secret",
    )
    server = ServerProcess(data_dir, env=env).start()
    try:
        shown = run_cli("status", "--server", server.url, data_dir=data_dir, env=env)
        assert shown.returncode == 0, shown.stderr
        text = shown.stdout.decode()
        assert "openai-compat local (closed)" in text and "gemini g (closed)" in text
        doctor_env = env | {"AI_MEMORY_SERVER__URL": server.url}
        doctor = run_cli("doctor", "--json", data_dir=data_dir, env=doctor_env)
        findings = [f for f in json.loads(doctor.stdout)["findings"] if f["check"] == "llm"]
        assert [f["severity"] for f in findings] == ["ok", "ok"]
        assert "not called yet" in findings[0]["message"]
        assert b"gm-status-secret" not in shown.stdout + doctor.stdout
        headers = {"Authorization": f"Bearer {server.token}"}
        page = httpx.get(server.url + "/web/health", headers=headers, timeout=10)
        assert page.status_code == 200
        table = page.text.split('id="llm-candidates"', 1)[1].split("</table>", 1)[0]
        assert "openai-compat" in table and "<code>local</code>" in table
        assert "gemini" in table and "<code>g</code>" in table
        assert table.count('class="circuit-closed"') == 2
        assert "gm-status-secret" not in page.text
    finally:
        server.stop()


def test_serve_stops_at_start_up_without_the_key(data_dir: Path) -> None:
    env = clean_env(AI_MEMORY_LLM__PROVIDER="anthropic", AI_MEMORY_LLM__MODEL="c")
    env.pop("ANTHROPIC_API_KEY", None)
    argv = [*AI_MEMORY, "serve", "--data-dir", str(data_dir), "--bind", f"127.0.0.1:{free_port()}"]
    proc = subprocess.run(argv, env=env, capture_output=True, timeout=120)
    assert proc.returncode != 0
    assert b"ANTHROPIC_API_KEY is not set" in proc.stdout + proc.stderr
