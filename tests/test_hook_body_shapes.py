"""Bodies whose cost lies in their shape, not their size: many JSON values, deep nesting.

Decoding holds the interpreter lock on whichever thread it runs, so a hook body that
could hold more values than a bounded decode allows is refused before it is decoded,
with the 413 the hook client answers by splitting a batch and shrinking an event.
The bound counts commas and brackets in text too, so it sits well above what a
megabyte of printed code holds.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ai_memory.hooks.event_parser import MAX_VALUES
from ai_memory.hooks.tool_text import response_text
from tests.hooks_support import app_client

QUERY = "workspace=default&project=shop&agent=claude-code&session_id=s1&event=PostToolUse"


def stored_keys(data_dir: Path) -> list[str]:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        return [r[0] for r in conn.execute("SELECT ingest_key FROM observations ORDER BY id")]
    finally:
        conn.close()


def tool_call(response: object) -> dict[str, object]:
    return {"tool_name": "Bash", "tool_input": {"command": "make"}, "tool_response": response}


def test_a_body_of_too_many_values_is_refused_before_decoding_and_nothing_is_stored(
    data_dir: Path,
) -> None:
    many = json.dumps(tool_call({"stdout": [[] for _ in range(MAX_VALUES + 1)]})).encode()
    batch = json.dumps(
        [{"params": {"project": "shop", "agent": "generic"}, "body": {"x": [1] * MAX_VALUES}}]
    ).encode()
    with app_client(data_dir) as client:
        one = client.post(f"/hook?{QUERY}&ingest_key=many", content=many)
        items = client.post("/hook/batch", content=batch)
    assert one.status_code == 413, one.text
    assert one.json()["error"] == "too_large"
    assert f"the limit is {MAX_VALUES:,}" in one.json()["message"]
    assert items.status_code == 413, items.text
    assert "many" not in stored_keys(data_dir)


def test_a_megabyte_of_printed_code_is_stored(data_dir: Path) -> None:
    code = "def pair(a, b):\n    return [a, b], {'a': a, 'b': b}\n"
    body = json.dumps(tool_call({"stdout": code * (1024 * 1024 // len(code))})).encode()
    with app_client(data_dir) as client:
        answer = client.post(f"/hook?{QUERY}&ingest_key=long", content=body)
        bad = client.post(f"/hook?{QUERY}&ingest_key=bad", content=b'{"x": "' + b"y" * 20000)
        bad_batch = client.post("/hook/batch", content=b"[" + b'{"params": {}},' * 2000)
    assert answer.status_code == 202, answer.text
    assert bad.status_code == 400 and "not valid JSON" in bad.json()["message"], bad.text
    assert bad_batch.status_code == 400 and "not valid JSON" in bad_batch.json()["message"]
    assert stored_keys(data_dir) == ["long"]


def test_deeply_nested_tool_output_costs_what_its_bytes_do(data_dir: Path) -> None:
    nested: object = "printed"
    for _ in range(60):  # each level looked at once: 2**60 steps if looked at twice
        nested = [nested]
    assert response_text({"stdout": [["shallow"]]}) == "shallow"
    assert response_text({"stdout": nested}) == ""  # deeper than any tool prints
    with app_client(data_dir) as client:
        answer = client.post(
            f"/hook?{QUERY}&ingest_key=deep", content=json.dumps(tool_call({"stdout": nested}))
        )
    assert answer.status_code == 202, answer.text
    assert stored_keys(data_dir) == ["deep"]
