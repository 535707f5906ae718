"""Posting spooled events: batches bounded by count and bytes, a refused size never a dead end.

Standard library only. The server refuses bodies over its request limit (413): a
batch that is too big is split and its items sent one by one; one event that is
still too big is shrunk in the spool and kept, never thrown away.
"""

from __future__ import annotations

import time

from ai_memory.hookclient import fs, spool
from ai_memory.hookclient.shrink import SMALL_FIELD_CAP, shrink
from ai_memory.hookclient.transport import Transport, Unreachable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ai_memory.hookclient.spool import Folder

# Well under the server's default 4 MiB request limit.
BATCH_BYTES = 1024 * 1024
LOG_CAP = 1024 * 1024
TOO_LARGE = 413
UNAUTHORIZED = 401
_KEEP = (401, 403, 404, 408, 413, 429)
# How far past ``limit`` a retry looks for events its credential captured.
SCAN_FACTOR = 8
# How much of the spool an end reads looking for its session's events.
SCAN_BYTES = 2 * 1024 * 1024
KEY_START, KEY_ID_CHARS, KEY_CHARS = "aim_", 10, 58


def key_id(token: str | None) -> str | None:
    """The public id of an API key (``aim_<id>_<secret>``), None for the root token or
    none: stored with each spooled event, so the event is delivered with the credential
    that captured it and owned by that key's user, never by whoever drains the spool."""
    if token is None or len(token) != KEY_CHARS or not token.startswith(KEY_START):
        return None
    end = len(KEY_START) + KEY_ID_CHARS
    return token[len(KEY_START) : end] if token[end] == "_" else None


class Item:
    """One spooled event on its way: its key, the batch item, its size on disk."""

    def __init__(self, key: str, item: dict[str, Any], size: int) -> None:
        self.key = key
        self.item = item
        self.size = size
        self.key_id: str | None = None  # the API key that captured it (None: the operator)

    def posted(self, now_ns: int) -> dict[str, Any]:
        """The batch item as it is posted at ``now_ns``: with how long it has waited."""
        return {**self.item, "params": queued(self.item["params"], self.key, now_ns)}


class Tally:
    """What a delivery round did: delivered, refused for good, still spooled, answered 429."""

    def __init__(self) -> None:
        self.delivered = 0
        self.rejected = 0
        self.kept = 0
        self.saturated = 0
        self.shrunk = 0

    @property
    def settled(self) -> int:
        return self.delivered + self.rejected


def deliver(
    transport: Transport,
    folder: Folder,
    params: dict[str, str],
    payload: dict[str, Any],
    data_dir: Folder,
    backlog: int,
    captured_by: str | None,
    ends: bool,
) -> None:
    """Post the run's own event and up to ``backlog`` spooled ones: the event first (its
    agent is waiting), unless it ``ends`` a session.

    An end goes after a batch of its session's own spooled events: a session whose work
    was all spooled would end empty, and be dropped, before its work arrived. It waits in
    the spool when none of them got through; the rest of them follow it as late events.
    Other sessions' backlog comes after the end."""
    skip = {params["ingest_key"]}
    if not ends:
        if send_one(transport, folder, params, payload, data_dir):
            retry_spooled(transport, folder, backlog, data_dir, skip=skip, captured_by=captured_by)
        return
    keys = spool.pending(folder, skip=frozenset(skip))  # listed once for both parts
    own = session_backlog(folder, keys, params, backlog, captured_by)
    tally = post_items(transport, folder, own, data_dir)
    if transport.down or (tally.kept and not tally.delivered):
        return
    left = backlog - len(own)
    if send_one(transport, folder, params, payload, data_dir) and left > 0:
        sent = {item.key for item in own}
        others = [key for key in keys if key not in sent][: left * SCAN_FACTOR]
        retry_spooled(transport, folder, left, data_dir, captured_by=captured_by, keys=others)


def session_backlog(
    folder: Folder, keys: list[str], params: dict[str, str], limit: int, captured_by: str | None
) -> list[Item]:
    """The oldest spooled events of ``keys`` (the spool, oldest first), up to ``limit`` and
    one batch's bytes, of the session of ``params`` that ``captured_by`` captured. A
    session that is ending is recent however much else waits: they are looked for among
    the newest entries, at most ``limit * SCAN_FACTOR`` of them and :data:`SCAN_BYTES`
    read, so a spool of big events cannot hold the run. Without a session id, the
    session is the agent's events without one (the server names them alike)."""
    wanted = _session_of(params)
    found: list[Item] = []
    read = 0
    for item in each_item(folder, keys[-limit * SCAN_FACTOR :][::-1]):
        read += item.size
        if item.key_id == captured_by and _session_of(item.item["params"]) == wanted:
            found.append(item)
        if read >= SCAN_BYTES:
            break
    chosen: list[Item] = []
    size = 0
    for item in found[::-1]:
        size += item.size
        if len(chosen) == limit or (chosen and size > BATCH_BYTES):
            break
        chosen.append(item)
    return chosen


def _session_of(params: dict[str, Any]) -> tuple[object, ...]:
    place = (params.get("workspace"), params.get("project"))
    session = params.get("session_id")
    return (*place, "session", session) if session else (*place, "agent", params.get("agent"))


def send_one(
    transport: Transport,
    folder: Folder,
    params: dict[str, str],
    payload: dict[str, Any],
    data_dir: Folder,
) -> bool:
    """Post the event; True when the server has it (202), False when it stays spooled."""
    try:
        status, answer = transport.request("POST", "/hook", params, payload)
    except Unreachable as exc:
        log_error(data_dir, f"event spooled, server unreachable: {exc}")
        return False
    tally = Tally()
    settle(folder, params["ingest_key"], status, answer, data_dir, tally)
    return tally.settled > 0


def retry_spooled(
    transport: Transport,
    folder: Folder,
    limit: int,
    data_dir: Folder,
    skip: set[str] | None = None,
    max_bytes: int = BATCH_BYTES,
    captured_by: str | None = None,
    keys: list[str] | None = None,
) -> Tally:
    """Post up to ``limit`` of the oldest spooled events that the credential with key id
    ``captured_by`` captured (see :func:`key_id`), in batches of at most ``max_bytes``;
    another credential's events stay spooled for it (or for the server's own drain).
    ``keys``: the spool as the caller listed it (an entry gone since is passed over)."""
    if keys is None:
        keys = spool.pending(folder, limit * SCAN_FACTOR, frozenset(skip or ()))
    items: list[Item] = []
    for item in each_item(folder, keys):
        if item.key_id == captured_by:
            items.append(item)
            if len(items) >= limit:
                break
    return post_items(transport, folder, items, data_dir, max_bytes)


def post_items(
    transport: Transport,
    folder: Folder,
    items: list[Item],
    data_dir: Folder,
    max_bytes: int = BATCH_BYTES,
) -> Tally:
    """Post ``items`` in batches of at most ``max_bytes``, in order;
    ``kept`` counts those still spooled after. A batch that leaves any of its events
    spooled (429, a shrunk event) stops the rest: no event overtakes one captured before
    it, a session's end its work above all."""
    tally = Tally()
    posted = 0
    for batch in batches(items, max_bytes):
        try:
            post_batch(transport, folder, batch, data_dir, tally)
        except Unreachable as exc:
            log_error(data_dir, f"retry stopped: {exc}")
            break
        posted += len(batch)
        if tally.settled < posted:  # one of them is still spooled
            break
    tally.kept = sum(1 for item in items if spool.exists(folder, item.key))
    return tally


def load(folder: Folder, keys: list[str]) -> list[Item]:
    return list(each_item(folder, keys))


def each_item(folder: Folder, keys: list[str]) -> Iterator[Item]:
    """The spooled events of ``keys`` still there, read one at a time."""
    for key in keys:
        entry, size = spool.read_sized(folder, key)
        if entry is not None and isinstance(entry.get("params"), dict):
            body = entry.get("body") or {}
            item = Item(key, {"params": entry["params"], "body": body}, size)
            captured = entry.get("key_id")
            item.key_id = captured if isinstance(captured, str) else None
            yield item


def queued(params: dict[str, Any], key: str, now_ns: int) -> dict[str, Any]:
    """A retried event's parameters with how long it waited since it was captured
    (``queued_s``), so the server dates it then and not at its delivery. The wait is
    measured on this machine's clock alone: another machine's clock, the server's,
    cannot move it. An event that carries its own time already keeps that."""
    captured = spool.captured_ns(key)
    if captured is None or "occurred_at" in params or "queued_s" in params:
        return params
    return {**params, "queued_s": f"{max(0, now_ns - captured) / 1e9:.3f}"}


def batches(items: list[Item], max_bytes: int) -> list[list[Item]]:
    """Consecutive groups, each under ``max_bytes`` (an item over it goes alone)."""
    groups: list[list[Item]] = []
    size = 0
    for item in items:
        if not groups or size + item.size > max_bytes:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += item.size + 2
    return groups


def post_batch(
    transport: Transport, folder: Folder, batch: list[Item], data_dir: Folder, tally: Tally
) -> None:
    """Post ``batch``; on 413 split it, down to single events, which are shrunk and kept.
    A second half waits while the first leaves any of its events spooled, as a batch
    waits behind the one before. Each event says how long it has waited by the time it
    is posted."""
    now = time.time_ns()
    status, answer = transport.request("POST", "/hook/batch", {}, [i.posted(now) for i in batch])
    if status == TOO_LARGE:
        if len(batch) == 1:
            shrink_spooled(folder, batch[0].key, data_dir)
            tally.shrunk += 1
            return
        half = len(batch) // 2
        before = tally.settled
        post_batch(transport, folder, batch[:half], data_dir, tally)
        if tally.settled - before == half:
            post_batch(transport, folder, batch[half:], data_dir, tally)
        return
    if status != 200 or not isinstance(answer, dict):
        log_error(data_dir, f"retry refused ({status}): {_why(status, answer)}")
        if status == 429:
            tally.saturated += len(batch)
        return
    answered = set()
    for result in answer.get("results") or []:
        index = result.get("index") if isinstance(result, dict) else None
        if isinstance(index, int) and 0 <= index < len(batch) and index not in answered:
            answered.add(index)
            status_i = int(result.get("status", 0))
            settle(folder, batch[index].key, status_i, result.get("error"), data_dir, tally)


def settle(
    folder: Folder, key: str, status: int, answer: Any, data_dir: Folder, tally: Tally
) -> None:
    """Act on the server's answer for one spooled event."""
    if status == 202:
        spool.remove(folder, key)
        tally.delivered += 1
    elif status == TOO_LARGE:
        shrink_spooled(folder, key, data_dir)
        tally.shrunk += 1
    elif (400 <= status < 500 and status not in _KEEP) or _forbidden(status, answer):
        spool.reject(folder, key)
        log_error(data_dir, f"event {key} refused ({status}): {answer}")
        tally.rejected += 1
    else:
        log_error(data_dir, f"event {key} kept in the spool ({status}): {_why(status, answer)}")
        if status == 429:
            tally.saturated += 1


def _why(status: int, answer: Any) -> str:
    """The server's answer; for a 401, which credential it refused and how to replace it."""
    if status != UNAUTHORIZED:
        return f"{answer}"
    from ai_memory.hookclient.refusal import advice

    return f"{answer}; {advice(fs.environ())}"


def _forbidden(status: int, answer: Any) -> bool:
    """The server refused this event for good: its key may not write to that project or
    session. (Another 403, such as a refused Origin, is the request's, and kept.)"""
    return status == 403 and isinstance(answer, dict) and answer.get("error") == "forbidden"


def shrink_spooled(folder: Folder, key: str, data_dir: Folder) -> None:
    """The server found this event too big: keep it, with every field cut much shorter.

    An event refused again after that is set aside, so it cannot block the spool.
    """
    entry = spool.read(folder, key)
    if entry is None:
        return
    if entry.get("shrunk"):
        spool.reject(folder, key)
        log_error(data_dir, f"event {key} is too large for the server even when shrunk")
        return
    body = entry.get("body")
    entry["body"] = shrink(body if isinstance(body, dict) else {}, SMALL_FIELD_CAP)
    entry["shrunk"] = True
    spool.write(folder, key, entry)
    log_error(data_dir, f"event {key} was too large for the server; shrunk and kept")


def log_error(data_dir: Folder | None, message: str) -> None:
    """Append to ``logs/hook.log``; past its size cap the log starts over (one old copy kept)."""
    if data_dir is None:
        return
    try:
        logs = fs.join(data_dir, "logs")
        fs.makedirs(logs, exist_ok=True)
        path = fs.join(logs, "hook.log")
        try:
            if fs.stat(path).st_size > LOG_CAP:
                fs.replace(path, fs.join(logs, "hook.log.1"))
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} pid={fs.getpid()} {message[:2000]}\n")
    except OSError:
        pass
