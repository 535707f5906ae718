"""An agent's write must survive the file watcher picking up the previous version late."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.wiki.reindex import ReconcileReport, reconcile_paths


def waiting_for_the_writer(thread: threading.Thread) -> bool:
    """True once ``thread`` has read the file and waits for its writer command."""
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "call" and code.co_filename.endswith("writer.py"):
            return True
        frame = frame.f_back
    return False


def test_a_write_landing_while_the_watcher_reads_the_old_file_is_kept(runtime: Runtime) -> None:
    ref = Scope.of(None, "race").page("plan.md")
    runtime.wiki.write_page(ref, "version one")
    # A hand edit the watcher has yet to index (an unchanged file needs no writer command).
    file = Path(runtime.wiki.file_path(ref))
    file.write_text(file.read_text().replace("version one", "edited by hand"))
    release = threading.Event()
    blocker = runtime.writer.submit(lambda conn: release.wait(30))
    second = runtime.writer.submit(runtime.wiki.write_command(ref, "version two"))
    reports: list[ReconcileReport] = []
    # The watcher reads the edited file and queues its command behind the write.
    watcher = threading.Thread(
        target=lambda: reports.append(reconcile_paths(runtime.wiki, [ref.relpath]))
    )
    watcher.start()
    deadline = time.monotonic() + 30
    while not waiting_for_the_writer(watcher) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert waiting_for_the_writer(watcher)
    release.set()
    blocker.result(30)
    written = second.result(30)
    watcher.join(30)
    page = runtime.wiki.read_page(ref)
    assert page["body"].strip() == "version two" and page["page_id"] == written.page_id
    # The write kept the hand edit as a version of its own before superseding it.
    assert [v["actor"] for v in runtime.wiki.history(ref)] == ["api", "disk", "api"]
    assert reports[0].changed == 0
    assert Path(runtime.wiki.file_path(ref)).read_text().rstrip().endswith("version two")
