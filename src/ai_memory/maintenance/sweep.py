"""The forget sweep: expired pages go, cold episodic pages are evicted, old history is purged.

A sweep is a plan read on a reader, then carried out in bounded batches through
the writer; a dry run is the plan alone, so it reports exactly what the run
would do. Every removal is reversible until its tombstone is purged: an evicted
or expired page loses its file and keeps its last version as the tombstone, and
git keeps the text. Each step re-checks what it read (compare-and-set), so a
page rewritten or restored after the plan was made is left alone.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.core.errors import NotFound, PreconditionFailed
from ai_memory.core.identity import PageRef, Scope
from ai_memory.maintenance.compact import compact_body, is_compacted
from ai_memory.maintenance.merging import IndexMerger, merging_in_steps
from ai_memory.maintenance.removal import remove_batch, sync_folders
from ai_memory.store import llm_jobs, pages
from ai_memory.store import sweep as sql
from ai_memory.store.decay import DecayParams, PageAge, is_cold, salience
from ai_memory.wiki.wiki import Wiki

ACTOR = "maintenance"


@dataclass(frozen=True, slots=True)
class Target:
    """One page version the sweep acts on; ``page_id`` is the version it read."""

    ref: PageRef
    page_id: int

    def to_dict(self) -> dict[str, Any]:
        return {"project": self.ref.project, "workspace": self.ref.workspace, "path": self.ref.path}


@dataclass(slots=True)
class SweepReport:
    """What a sweep did (or, dry, would do): counts and paths per pass."""

    dry_run: bool
    now: str
    expired: list[Target] = field(default_factory=list)
    compacted: list[Target] = field(default_factory=list)
    evicted: list[Target] = field(default_factory=list)
    purged: list[PageRef] = field(default_factory=list)
    observations: list[sql.SessionObservations] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def refs(items: list[PageRef]) -> list[dict[str, str]]:
            return [{"workspace": r.workspace, "project": r.project, "path": r.path} for r in items]

        return {
            "dry_run": self.dry_run,
            "now": self.now,
            "counts": {
                "expired": len(self.expired),
                "compacted": len(self.compacted),
                "evicted": len(self.evicted),
                "purged": len(self.purged),
                "observations": sum(s.count for s in self.observations),
                "skipped": len(self.skipped),
            },
            "expired": [t.to_dict() for t in self.expired],
            "compacted": [t.to_dict() for t in self.compacted],
            "evicted": [t.to_dict() for t in self.evicted],
            "purged": refs(self.purged),
            "observations": [
                {
                    "workspace": s.workspace,
                    "project": s.project,
                    "session_id": s.session_id,
                    "count": s.count,
                }
                for s in self.observations
            ],
            "skipped": self.skipped,
        }


def decay_params(config: Config) -> DecayParams:
    d = config.decay
    return DecayParams(
        lambda_=d.lambda_,
        sigma=d.sigma,
        mu=d.mu,
        cold_threshold=d.cold_threshold,
        half_life_days={str(k): v for k, v in d.half_life_days.items()},
        salience_step=d.salience_step,
        salience_min=d.salience_min,
        salience_max=d.salience_max,
    )


def page_age(row: sqlite3.Row, signals: list[str], params: DecayParams) -> PageAge:
    return PageAge(
        tier=row["tier"],
        path=row["path"],
        pinned=bool(row["pinned"]),
        created_at=row["created_at"],
        access_count=int(row["access_count"]),
        last_access_at=row["last_access_at"],
        salience=salience(signals, params),
    )


def plan(conn: sqlite3.Connection, config: Config, scope: Scope | None, now: str) -> SweepReport:
    """Everything a sweep at ``now`` would do, read in one snapshot."""
    report = SweepReport(dry_run=True, now=now)
    moment = datetime.fromisoformat(now.replace("Z", "+00:00"))
    params = decay_params(config)
    settings = config.maintenance
    rows = list(sql.live_pages(conn, scope))
    episodic = [r for r in rows if r["tier"] == "episodic"]
    signals = sql.version_signals(conn, [int(r["id"]) for r in episodic])
    for row in rows:
        target = Target(Scope(row["workspace"], row["project"]).page(row["path"]), int(row["id"]))
        if row["expires_at"] and row["expires_at"] <= now:
            report.expired.append(target)
        elif row["tier"] == "episodic" and is_cold(
            page_age(row, signals.get(int(row["id"]), []), params), moment, params
        ):
            compactable = settings.compact and row["kind"] != "lint"
            if compactable and not _is_compacted(conn, int(row["id"])):
                report.compacted.append(target)
            else:
                report.evicted.append(target)
    expired = {t.page_id for t in report.expired}
    for row in sql.ended_working(conn, scope):
        if int(row["id"]) not in expired:
            ref = Scope(row["workspace"], row["project"]).page(row["path"])
            report.evicted.append(Target(ref, int(row["id"])))
    cutoff = iso(moment - timedelta(days=settings.hard_delete_after_days))
    report.purged = sql.tombstones(conn, scope, cutoff)
    if settings.observation_retention_days > 0:
        cutoff = iso(moment - timedelta(days=settings.observation_retention_days))
        going = {t.ref for t in report.expired + report.evicted}
        report.observations = [
            s
            for s in sql.prunable_sessions(conn, scope, cutoff)
            if s.page not in going and not pending_consolidation(conn, s)
        ]
    return report


def pending_consolidation(conn: sqlite3.Connection, session: sql.SessionObservations) -> bool:
    """Whether a consolidation job still needs this session's raw observations: a
    queued or running one keeps them until it is done (or failed)."""
    return llm_jobs.pending_for_session(
        conn, session.workspace, session.project, session.session_id
    )


def _is_compacted(conn: sqlite3.Connection, page_id: int) -> bool:
    row = conn.execute("SELECT body FROM pages WHERE id = ?", (page_id,)).fetchone()
    return row is not None and is_compacted(row[0])


class Sweeper:
    """Runs sweeps for one data dir: ``sweep(dry_run=True)`` only plans."""

    def __init__(self, wiki: Wiki, config: Config, clock: Callable[[], str] | None = None) -> None:
        self.wiki = wiki
        self.config = config
        self.clock = clock or (lambda: wiki.clock())

    def sweep(self, *, dry_run: bool = False, scope: Scope | None = None) -> SweepReport:
        now = self.clock()
        report = self.wiki.readers.read(lambda conn: plan(conn, self.config, scope, now))
        if dry_run:
            return report
        report.dry_run = False
        if self.wiki.checkpointer is not None:
            # What goes must be in git first: a page written since the last checkpoint
            # would otherwise leave no text to restore.
            self.wiki.checkpointer.flush()
        batch = self.config.maintenance.batch_size
        with merging_in_steps(self.wiki.writer, self.wiki.write_timeout) as merger:
            report.expired = self._remove(report.expired, "expire", report.skipped, batch, merger)
            report.compacted = self._compact(report.compacted, report.skipped, merger)
            report.evicted = self._remove(report.evicted, "evict", report.skipped, batch, merger)
        report.purged = self._purge(report.purged, now, report.skipped, batch)
        report.observations = self._prune(report.observations, now, batch)
        return report

    def _remove(
        self,
        targets: list[Target],
        action: str,
        skipped: list[str],
        batch: int,
        merger: IndexMerger,
    ) -> list[Target]:
        done: list[Target] = []
        start = 0
        while start < len(targets):
            chunk = targets[start : start + batch]
            command = remove_batch(self.wiki, [(t.ref, t.page_id) for t in chunk], ACTOR, action)
            removed = self.wiki.writer.call(command, timeout=self.wiki.write_timeout)
            sync_folders(removed.folders)
            results = removed.done
            # A transaction stops early when it has used its time; the rest goes next.
            for target, ok in zip(chunk, results, strict=False):
                if ok:
                    done.append(target)
                    if self.wiki.checkpointer is not None:
                        self.wiki.checkpointer.notify(target.ref.relpath)
                else:
                    skipped.append(f"{action} {target.ref}: changed since the plan")
            start += len(results)
            merger.step()
        return done

    def _compact(
        self, targets: list[Target], skipped: list[str], merger: IndexMerger
    ) -> list[Target]:
        done: list[Target] = []
        for target in targets:
            page = self.wiki.read_page(target.ref)
            body, meta = compact_body(page)
            try:
                self.wiki.write_page(
                    target.ref, body, meta, expected_page_id=target.page_id, actor=ACTOR
                )
            except (PreconditionFailed, NotFound):
                skipped.append(f"compact {target.ref}: changed since the plan")
                continue
            done.append(target)
            merger.step()
        return done

    def _purge(
        self, refs: list[PageRef], now: str, skipped: list[str], batch: int
    ) -> list[PageRef]:
        moment = datetime.fromisoformat(now.replace("Z", "+00:00"))
        cutoff = iso(moment - timedelta(days=self.config.maintenance.hard_delete_after_days))
        done: list[PageRef] = []
        for start in range(0, len(refs), batch):
            chunk = refs[start : start + batch]

            command = _purge_all(chunk, cutoff, now)
            results = self.wiki.writer.call(command, timeout=self.wiki.write_timeout)
            for ref, ok in zip(chunk, results, strict=True):
                (done.append(ref) if ok else skipped.append(f"purge {ref}: restored since"))
        return done

    def _prune(
        self, sessions: list[sql.SessionObservations], now: str, batch: int
    ) -> list[sql.SessionObservations]:
        moment = datetime.fromisoformat(now.replace("Z", "+00:00"))
        cutoff = iso(moment - timedelta(days=self.config.maintenance.observation_retention_days))
        done: list[sql.SessionObservations] = []
        for session in sessions:
            removed = 0
            command = _prune_batch(session, cutoff, batch, now)
            while True:
                n = self.wiki.writer.call(command, timeout=self.wiki.write_timeout)
                removed += n
                if n < batch:
                    break
            if removed:
                done.append(
                    sql.SessionObservations(
                        session.workspace, session.project, session.session_id, removed
                    )
                )
        return done


def _purge_all(
    refs: list[PageRef], cutoff: str, now: str
) -> Callable[[sqlite3.Connection], list[bool]]:
    def command(conn: sqlite3.Connection) -> list[bool]:
        results = []
        for ref in refs:
            ok = sql.purge_page(conn, ref, cutoff)
            if ok:
                pages.audit(conn, now=now, actor=ACTOR, action="purge", ref=ref)
            results.append(ok)
        return results

    return command


def _prune_batch(
    session: sql.SessionObservations, cutoff: str, batch: int, now: str
) -> Callable[[sqlite3.Connection], int]:
    def command(conn: sqlite3.Connection) -> int:
        n = sql.prune_observations(conn, session, cutoff, batch)
        if n:
            pages.audit(
                conn,
                now=now,
                actor=ACTOR,
                action="prune-observations",
                ref=session.page,
                detail={"session_id": session.session_id, "observations": n},
            )
        return n

    return command
