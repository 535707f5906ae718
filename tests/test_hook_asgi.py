"""The hook ingest handler ahead of the router answers as the framework's routes did."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl

from ai_memory.hooks.service import ItemResult
from ai_memory.web.errors import ErrorJSON
from ai_memory.web.hook_asgi import batch_answer, query_params
from tests.hooks_support import app_client

QUERY = "workspace=default&project=shop&agent=claude-code&session_id=s1"


def stored(data_dir: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        return conn.execute("SELECT ingest_key, body FROM observations ORDER BY id").fetchall()
    finally:
        conn.close()


def test_other_methods_on_the_hook_paths_still_get_the_routers_answer(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        for path in ("/hook", "/hook/batch"):
            answer = client.get(path)
            assert answer.status_code == 405, answer.text
            assert answer.json()["error"] == "method_not_allowed"
        unknown = client.post("/hook/other", json={})
        assert unknown.status_code == 404


def test_a_body_sent_in_pieces_is_read_whole_and_the_last_repeated_key_wins(
    data_dir: Path,
) -> None:
    def pieces() -> Iterator[bytes]:
        yield b'{"hook_event_name": "UserPromptSubmit", '
        yield b'"prompt": "split across chunks"}'

    with app_client(data_dir) as client:
        answer = client.post(f"/hook?{QUERY}&ingest_key=first&ingest_key=k-2", content=pieces())
        empty = client.post(f"/hook?{QUERY}&ingest_key=k-3&event=UserPromptSubmit", content=b" ")
    assert answer.status_code == 202, answer.text
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {"status": "accepted", "duplicate": False}
    assert empty.status_code == 202, empty.text
    assert stored(data_dir)[0] == ("k-2", "split across chunks")


def test_errors_keep_their_shape_and_text_that_cannot_be_encoded_still_answers(
    data_dir: Path,
) -> None:
    with app_client(data_dir) as client:
        not_json = client.post(f"/hook?{QUERY}", content=b"{nope")
        not_list = client.post("/hook/batch", content=b'{"params": {}}')
        surrogate = client.post(
            "/hook/batch",
            content=b'[{"params": {"project": "shop", "ingest_key": "bad \\ud800"}, "body": {}}]',
        )
    assert not_json.status_code == 400
    assert not_json.json()["error"] == "invalid_input"
    assert "not valid JSON" in not_json.json()["message"]
    assert not_list.status_code == 400 and "JSON array" in not_list.json()["message"]
    assert surrogate.status_code == 200, surrogate.text
    (result,) = surrogate.json()["results"]
    assert result["status"] == 400 and result["error"]["error"] == "invalid_input"
    assert stored(data_dir) == []


def test_the_query_string_reads_as_parse_qsl_reads_it() -> None:
    rng = random.Random(15)
    alphabet = b"ab=&%+;2Ce\xe9 "
    corpus = [b"", b"a", b"=b", b"a=1&a=2", b"a+b=c%2Bd", b"a=%zz", b"a=%e2%82%ac", b"a=\xe9"]
    corpus += [bytes(rng.choice(alphabet) for _ in range(rng.randrange(14))) for _ in range(3000)]
    for raw in corpus:
        query = raw.decode("latin-1")
        assert query_params(raw) == dict(parse_qsl(query, keep_blank_values=True)), raw


def test_a_batch_answer_is_encoded_as_the_error_answers_encode_it() -> None:
    refusal = {"error": "invalid_input", "message": "bad key \ud800 ü"}
    results = [ItemResult(0, 202), ItemResult(1, 400, refusal), ItemResult(2, 429)]
    results.append(ItemResult(3, 202))
    whole = ErrorJSON({"results": [r.to_dict() for r in results]}).body
    assert batch_answer(results) == whole
    assert batch_answer([]) == b'{"results":[]}'
