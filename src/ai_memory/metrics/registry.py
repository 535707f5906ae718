"""The app's metrics: counters and histograms whose every label comes from a closed set.

Label values are constants defined here (results, outcomes, surfaces, access
kinds); nothing a client sends (query text, project names, paths, agent names)
can become a label, so the series count stays fixed whatever the traffic.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from ai_memory.store.write_waits import BUCKETS, WaitSnapshot

ADMISSION_RESULTS = ("accepted", "duplicate", "saturated", "rejected", "failed")
DELIVERY_ROUTES = ("hook", "hook_batch", "handoff")
DELIVERY_OUTCOMES = ("ok", "saturated", "refused", "failed")
TOOL_ACCESS = ("read", "write", "unknown")
QUERY_SURFACES = ("api", "web", "mcp")
FAST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
SLOW_WINDOW_S = 300.0
# One item of a /hook/batch answer as web/hook_asgi.py writes it; a message's own quotes
# are escaped, so text inside one never matches.
_ITEM_STATUS = re.compile(rb'\{"index":\d+,"status":(\d{3})')


class Metrics:
    """Everything ``/admin/metrics`` exports; mutated only from the server's event loop."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.hook_admissions = Counter(
            "ai_memory_hook_admissions",
            "Hook events answered (each /hook/batch item too), by result",
            ["result"],
            registry=r,
        )
        self.deliveries = Counter(
            "ai_memory_deliveries",
            "Capture requests (/hook, /hook/batch, /handoff) answered, by outcome",
            ["route", "outcome"],
            registry=r,
        )
        self.tool_calls = Counter(
            "ai_memory_mcp_tool_calls", "MCP tool calls, by read or write", ["access"], registry=r
        )
        self.hook_seconds = Histogram(
            "ai_memory_hook_answer_seconds",
            "Time to answer POST /hook",
            buckets=FAST_BUCKETS,
            registry=r,
        )
        self.query_seconds = Histogram(
            "ai_memory_query_seconds",
            "Wall time of a search, by surface",
            ["surface"],
            buckets=FAST_BUCKETS,
            registry=r,
        )
        self.writer_queue = Gauge(
            "ai_memory_writer_queue_depth", "Commands waiting for the writer", registry=r
        )
        self.last_persisted = Gauge(
            "ai_memory_last_persisted_timestamp_seconds",
            "Unix time of the newest audited write",
            registry=r,
        )
        # Every labelled child made up front, and kept: looking one up per request takes a lock.
        self._admitted = {
            result: self.hook_admissions.labels(result) for result in ADMISSION_RESULTS
        }
        self._delivered = {
            (route, outcome): self.deliveries.labels(route, outcome)
            for route in DELIVERY_ROUTES
            for outcome in DELIVERY_OUTCOMES
        }
        for access in TOOL_ACCESS:
            self.tool_calls.labels(access)
        for surface in QUERY_SURFACES:
            self.query_seconds.labels(surface)
        self._slow: deque[tuple[float, float]] = deque(maxlen=4096)
        self._waits = WriterWaits()
        r.register(self._waits)

    def delivered(self, route: str, outcome: str) -> None:
        self._delivered[route, outcome].inc()

    def batch_answered(self, answer: bytes) -> None:
        """Each item of a ``/hook/batch`` answer counted as that event's own answer."""
        for match in _ITEM_STATUS.finditer(answer):
            self._admitted[admission_of(int(match.group(1)), False)].inc()

    def hook_answered(self, result: str, seconds: float) -> None:
        self._admitted[result].inc()
        self.hook_seconds.observe(seconds)
        self._slow.append((time.monotonic(), seconds))

    def slowest_recent_hook_s(self) -> float:
        """The slowest /hook answer of the last five minutes (0 when none)."""
        horizon = time.monotonic() - SLOW_WINDOW_S
        return max((s for at, s in self._slow if at >= horizon), default=0.0)

    def render(self, writer_queue: int, last_persisted: float, waits: WaitSnapshot) -> bytes:
        self.writer_queue.set(writer_queue)
        self.last_persisted.set(last_persisted)
        self._waits.snapshot = waits
        return generate_latest(self.registry)


class WriterWaits(Collector):
    """The writer's queue waits, exported from the counts the writer keeps itself
    (``store/write_waits.py``): a histogram and the longest wait of the last minutes."""

    def __init__(self) -> None:
        self.snapshot = WaitSnapshot((0,) * (len(BUCKETS) + 1), 0, 0.0, 0.0)

    def collect(self) -> Iterator[Metric]:
        waits = self.snapshot
        cumulative, buckets = 0, []
        for bound, count in zip((*BUCKETS, float("inf")), waits.buckets, strict=True):
            cumulative += count
            buckets.append(("+Inf" if bound == float("inf") else repr(bound), cumulative))
        yield HistogramMetricFamily(
            "ai_memory_writer_queue_wait_seconds",
            "Time a write waited in the writer's queue, from submit to starting",
            buckets=buckets,
            sum_value=waits.sum_s,
        )
        yield GaugeMetricFamily(
            "ai_memory_writer_longest_recent_wait_seconds",
            "The longest writer queue wait of the last five minutes",
            value=waits.longest_recent_s,
        )


def outcome_of(status: int) -> str:
    if status < 400:
        return "ok"
    if status in (429, 503):
        return "saturated"
    return "refused" if status < 500 else "failed"


def admission_of(status: int, duplicate: bool) -> str:
    if status == 202:
        return "duplicate" if duplicate else "accepted"
    outcome = outcome_of(status)
    return {"refused": "rejected"}.get(outcome, outcome)
