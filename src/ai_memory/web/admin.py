"""Operator routes: ``GET /admin/status`` (JSON) and ``GET /admin/metrics`` (Prometheus text).

Both need the bearer token like ``/api`` (the middleware sees to that); the UI
cookie does not open them.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from ai_memory.metrics.registry import Metrics
from ai_memory.metrics.status import Section, build_status, writer_waits
from ai_memory.metrics.status_queries import last_write, unix_time
from ai_memory.runtime import Runtime
from ai_memory.web.access import admin_only
from ai_memory.web.deps import get_runtime

router = APIRouter(prefix="/admin", include_in_schema=False, dependencies=[Depends(admin_only)])
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


def get_metrics(request: Request) -> Metrics:
    metrics: Metrics = request.app.state.metrics
    return metrics


def get_sections(request: Request) -> dict[str, Section]:
    """Extra status sections: what other parts registered on ``app.state.status_sections``,
    and the maintenance scheduler's tasks (last run, next run) when it runs."""
    sections: dict[str, Section] = dict(getattr(request.app.state, "status_sections", {}))
    jobs = getattr(request.app.state, "maintenance", None)
    if jobs is not None and hasattr(jobs, "status"):
        sections.setdefault("maintenance", jobs.status)
    return sections


MetricsDep = Annotated[Metrics, Depends(get_metrics)]
SectionsDep = Annotated[dict[str, Section], Depends(get_sections)]


@router.get("/status")
async def status(runtime: RuntimeDep, metrics: MetricsDep, sections: SectionsDep) -> dict[str, Any]:
    return await build_status(runtime, metrics, sections)


@router.get("/metrics")
async def metrics_text(runtime: RuntimeDep, metrics: MetricsDep) -> Response:
    last = await runtime.readers.aread(last_write)
    body = metrics.render(runtime.writer.backlog, unix_time(last), writer_waits(runtime.writer))
    return Response(body, media_type=CONTENT_TYPE_LATEST)
