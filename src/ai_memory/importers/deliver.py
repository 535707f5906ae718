"""Where replayed sessions go: the store in this process, or a running server over HTTP.

Both take the path live hooks take. In process: :func:`parse_event` (the sanitizer),
the ``[ingest]`` drop lists, :func:`store_command` (idempotent on ``ingest_key``) and
:func:`end_session` (the session page). Over HTTP: ``POST /hook/batch``, then
``/api/v1/sessions/flush``.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ai_memory.core.errors import AiMemoryError
from ai_memory.hookclient.deliver import BATCH_BYTES
from ai_memory.hookclient.shrink import SMALL_FIELD_CAP, shrink
from ai_memory.hooks.capture_filter import CaptureFilter
from ai_memory.hooks.ingest import HookEvent, parse_event, store_command
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.hooks.sessions import SessionKey, end_session, page_unwritten
from ai_memory.importers.replay import Planned, Tally

if TYPE_CHECKING:
    from ai_memory.cli.client import ApiClient
    from ai_memory.runtime import Runtime

BATCH = 256  # the most /hook/batch takes at once
RETRIES = 50  # a saturated server answers 429: wait and resend, up to this many times
T = TypeVar("T")


class Sink(Protocol):
    def send(self, plan: Planned, tally: Tally) -> None: ...

    def finish(self) -> None: ...


class LocalSink:
    """Stores each session, then writes its page, before the next session starts."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.sanitizer = Sanitizer(runtime.config.hooks.redact_patterns)
        self.capture = CaptureFilter(runtime.config.ingest)

    def send(self, plan: Planned, tally: Tally) -> None:
        events: list[HookEvent] = []
        for item in plan.items:
            try:
                event = parse_event(item["params"], item["body"], self.sanitizer)
            except AiMemoryError as exc:
                _reject(tally, plan, exc.message)
                continue
            if self.capture.drops(event, item["body"]):
                tally.dropped += 1
            else:
                events.append(event)
        ended = False
        timeout = self.runtime.config.store.write_timeout_s
        for chunk in chunks(events, BATCH):
            for outcome in self.runtime.writer.call(store_command(chunk), timeout=timeout):
                if outcome.refused is not None:  # a session another user captured
                    _reject(tally, plan, outcome.refused)
                    continue
                tally.stored += outcome.stored
                tally.duplicates += not outcome.stored
                ended = ended or outcome.ended
        if not events:
            return
        last = events[-1]
        key = SessionKey(plan.scope.workspace, plan.scope.project, last.observation.session_id)
        # Already ended but no page: an import killed between the two; write it now.
        if ended or self.runtime.readers.read(lambda conn: page_unwritten(conn, key)):
            self._end(key, last)

    def _end(self, key: SessionKey, last: HookEvent) -> None:
        """The session page, dated (like its handoff) when the session ended, not today."""
        ended = last.occurred_at
        wiki = self.runtime.wiki
        if ended is not None:
            wiki = copy.copy(wiki)
            wiki.clock = lambda: ended
        limit = self.runtime.config.hooks.page_observations
        end_session(wiki, key, recent_limit=limit, clock=wiki.clock)

    def finish(self) -> None:
        return None


class HttpSink:
    """Sends each session to a running server; its pages are written by the server."""

    def __init__(self, client: ApiClient) -> None:
        self.client = client

    def send(self, plan: Planned, tally: Tally) -> None:
        for chunk in sized_chunks(plan.items):
            waiting: Sequence[dict[str, Any]] = chunk
            for attempt in range(RETRIES):
                answer = self.client.request("POST", "/hook/batch", json=list(waiting))
                busy = []
                for result, item in zip(answer["results"], waiting, strict=True):
                    if result["status"] == 202:
                        tally.accepted += 1
                    elif result["status"] == 429 and attempt < RETRIES - 1:
                        busy.append(item)
                    else:
                        _reject(tally, plan, str((result.get("error") or {}).get("message")))
                if not busy:
                    break
                waiting = busy
                time.sleep(0.2)

    def finish(self) -> None:
        """Wait until the server has written every imported session's page."""
        self.client.request("POST", "/api/v1/sessions/flush", params={"timeout": 600}, timeout=660)


def _reject(tally: Tally, plan: Planned, message: str) -> None:
    tally.rejected += 1
    tally.note(f"{plan.transcript.source}: {message}")


def chunks(values: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def sized_chunks(items: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """Batches of at most :data:`BATCH` items and about :data:`BATCH_BYTES` of JSON, like the
    hook client's, well under the server's request limit; an item larger than that alone
    is cut further first, as the hook client cuts one the server refused as too large."""
    chunk: list[dict[str, Any]] = []
    size = 0
    for item in items:
        length = len(json.dumps(item))
        if length > BATCH_BYTES:
            item = {**item, "body": shrink(item["body"], SMALL_FIELD_CAP)}
        if chunk and (len(chunk) >= BATCH or size + length > BATCH_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(item)
        size += length
    if chunk:
        yield chunk
