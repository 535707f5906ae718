"""Request bodies into hook events: in place when that is cheap, else on a worker thread.

Decoding JSON costs by the values a body holds, not its bytes (see
:mod:`ai_memory.core.json_bodies`), so a body over :data:`IN_PLACE_BYTES` is decoded on
the thread that sanitizes it and is let go there too: the event loop only ever holds
the bounded event that comes out of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ai_memory.core.errors import AiMemoryError, InvalidInput
from ai_memory.core.json_bodies import check_values, json_body
from ai_memory.hooks.capture_filter import CaptureFilter
from ai_memory.hooks.ingest import IN_PLACE_BYTES, HookEvent, ParamsMemo, parse_event
from ai_memory.hooks.ingest import parse_in_place as parse_small
from ai_memory.hooks.project_aliases import ProjectAliases

if TYPE_CHECKING:
    from ai_memory.hooks.sanitize import Sanitizer

MAX_BATCH = 256
# JSON values a hook body may hold, by its commas and brackets (text included): 10-30 ms
# of decoding at most. An agent's event holds tens to thousands, the text a tool prints
# a few per hundred bytes (a megabyte of code ~100,000), of which the server keeps
# 16 KiB a field; the hook client splits a refused batch and shrinks a refused event.
MAX_VALUES = 250_000


@dataclass(frozen=True, slots=True)
class ItemResult:
    index: int
    status: int
    error: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"index": self.index, "status": self.status}
        if self.error is not None:
            data["error"] = self.error
        return data


@dataclass(frozen=True, slots=True)
class Undecided:
    """A ``/hook`` body left to :meth:`EventParser.parse` on a worker thread, with what
    :meth:`EventParser.in_place` decoded of it already (None: not decoded, a large one)."""

    raw: bytes
    body: object = None


class EventParser:
    """Hook events from request bodies (raw bytes) or already-decoded items: checked,
    sanitized, under the project's current name; None for an event capture drops."""

    def __init__(
        self,
        sanitizer: Callable[[], Sanitizer],
        capture: CaptureFilter,
        aliases: ProjectAliases,
    ) -> None:
        self._sanitizer = sanitizer
        self.capture = capture
        self.aliases = aliases

    def in_place(self, params: Mapping[str, str], raw: bytes) -> HookEvent | Undecided | None:
        """:meth:`parse` on the calling thread for a small body with nothing to redact;
        :class:`Undecided` for any other, which :meth:`parse` takes on a worker thread."""
        if len(raw) > IN_PLACE_BYTES:
            return Undecided(raw)
        body = json_body(raw, {})
        event = parse_small(params, body, self._sanitizer(), len(raw))
        if event is None:
            return Undecided(raw, body)
        return self._kept(event, body)

    def parse(self, params: Mapping[str, str], undecided: Undecided) -> HookEvent | None:
        """One ``/hook`` body, for a worker thread."""
        body = undecided.body
        if body is None:
            check_values(undecided.raw, MAX_VALUES)
            body = json_body(undecided.raw, {})
        return self._kept(parse_event(params, body, self._sanitizer()), body)

    def _kept(self, event: HookEvent, body: object) -> HookEvent | None:
        """``event`` under its project's current name; None when capture drops it."""
        return None if self.capture.drops(event, body) else self.aliases.event(event)

    def items(
        self, items: object, results: list[ItemResult | None], received: str | None = None
    ) -> list[tuple[int, HookEvent]]:
        """The valid items of a batch (its raw body, or the decoded list), parsed; each
        invalid or dropped one gets its answer in ``results`` (one slot per item).
        ``received``: when the batch arrived (see :func:`parse_event`)."""
        if isinstance(items, bytes):
            check_values(items, MAX_VALUES)
            items = json_body(items, None)
        if not isinstance(items, list):
            raise InvalidInput("the batch body must be a JSON array of {params, body} items")
        if len(items) > MAX_BATCH:
            raise InvalidInput(f"a batch holds at most {MAX_BATCH} items, got {len(items)}")
        results.extend([None] * len(items))
        parsed: list[tuple[int, HookEvent]] = []
        memo: ParamsMemo = {}
        for index, item in enumerate(items):
            try:
                event = self._item(item, memo, received)
            except AiMemoryError as exc:
                results[index] = ItemResult(index, exc.http_status, exc.to_dict())
                continue
            if self.capture.drops(event, item.get("body") if isinstance(item, dict) else None):
                results[index] = ItemResult(index, 202)
            else:
                parsed.append((index, event))
        return parsed

    def _item(self, item: object, memo: ParamsMemo, received: str | None) -> HookEvent:
        if not isinstance(item, dict):
            raise InvalidInput("a batch item must be an object {params, body}")
        params = item.get("params") or {}
        if not isinstance(params, dict):
            raise InvalidInput("params must be an object")
        body = item.get("body")
        body = {} if body is None else body
        event = parse_event(params, body, self._sanitizer(), memo=memo, received=received)
        return self.aliases.event(event)
