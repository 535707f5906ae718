"""Assembling the ASGI app and serving it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING

import anyio.to_thread
from fastapi import APIRouter, FastAPI

from ai_memory import __version__
from ai_memory.bind import check_bind as check_bind
from ai_memory.bind import parse_bind
from ai_memory.bind import require_token as require_token
from ai_memory.config import Config, ServerSettings
from ai_memory.consolidate.learning_schedule import LearningLoop
from ai_memory.hooks.service import HookService
from ai_memory.maintenance.jobs import MaintenanceJobs
from ai_memory.maintenance.scheduler import Scheduler
from ai_memory.mcp.lazy import LazyMcp
from ai_memory.metrics.asgi import MetricsMiddleware, tool_access_of
from ai_memory.metrics.registry import Metrics
from ai_memory.runtime import EarlyStart, Runtime
from ai_memory.service.drain import start_spool_drain
from ai_memory.store.upgrade import refuse_newer_database
from ai_memory.web import api
from ai_memory.web import hooks as hooks_web
from ai_memory.web import search as search_api
from ai_memory.web.connections import ConnectionLimits, protocol_class
from ai_memory.web.errors import install_error_handlers
from ai_memory.web.hook_asgi import HookRoutes
from ai_memory.web.hook_fast import HookFast
from ai_memory.web.keyauth import KeyAuthenticator
from ai_memory.web.later import LaterRoutes, LaterStart
from ai_memory.web.middleware import BearerAuth, BodyLimit, HostCheck, InFlightLimit
from ai_memory.web.page_asgi import PageWriteRoute
from ai_memory.web.page_fast import PageFast
from ai_memory.web.search_fast import SearchFast
from ai_memory.web.sessionauth import CookieAuthenticator

if TYPE_CHECKING:
    from ai_memory.llm.chat import Chat

log = logging.getLogger(__name__)


def create_app(
    config: Config, token: str, early: EarlyStart | None = None, defer: bool = False
) -> FastAPI:
    """The whole server as one ASGI app; the runtime starts and stops with its lifespan.

    ``early``: a start begun before this module was imported, which the lifespan waits
    for. ``defer``: the routes of :func:`later_routers` are built once the app answers
    (``serve``); without it they are all there when this returns.
    """
    refuse_newer_database(config.db_path)
    start = LaterStart() if defer else None  # the first answers go before the builds
    mcp = LazyMcp(lambda: getattr(app.state, "runtime", None), start)  # built once it answers

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        llm = build_llm(config)  # first: a missing key fails start-up before anything runs
        begin = early.take if early else partial(Runtime.start, config, watch=True)
        runtime = await anyio.to_thread.run_sync(begin)
        runtime.llm = llm
        app.state.runtime = runtime
        hooks, scheduler = start_capture(runtime)
        app.state.hooks = hooks
        app.state.maintenance = maintenance = MaintenanceJobs(runtime.wiki, config)
        maintenance.start()
        learning = LearningLoop(runtime.wiki, config.learning, lambda: runtime.llm)
        learning.start()
        app.state.learning = learning
        if runtime.llm is not None:
            app.state.status_sections["learning"] = learning.status
        app.state.status_sections["maintenance"] = maintenance.status
        consolidation = None
        if runtime.llm is not None:  # the consolidation worker loads only with a provider
            from ai_memory.consolidate.consolidation_jobs import start_worker

            consolidation = await start_worker(runtime, app.state.status_sections)
        # What hooks spooled while the server was down, then what they spool while it runs.
        drain = start_spool_drain(hooks, config.data_dir, config.hooks.spool_recheck_s)
        try:
            async with AsyncExitStack() as after_start:
                await after_start.enter_async_context(mcp.running())
                if start is not None:  # deferred: built, then settled, after the first answers
                    await after_start.enter_async_context(later.running())
                    await after_start.enter_async_context(start.after(runtime.settle))
                elif runtime.unsettled:
                    await anyio.to_thread.run_sync(runtime.settle)
                yield
        finally:
            drain.cancel()
            await maintenance.stop()
            if consolidation is not None:
                await consolidation.stop()
            await learning.stop()
            await scheduler.stop()
            await hooks.stop()
            await anyio.to_thread.run_sync(runtime.stop)
            if llm is not None:
                await llm.aclose()

    # FastAPI's own OpenTelemetry is off: it asked the global providers on every request,
    # and the server's figures are its own metrics (/metrics, status).
    app = FastAPI(
        title="ai-memory",
        version=__version__,
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    install_error_handlers(app)
    app.state.metrics = Metrics()
    app.state.status_sections = {}  # name -> callable returning a dict, shown in status

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    # What agents ask first: status, pages, search, handoffs and sessions.
    app.include_router(api.router)
    app.include_router(hooks_web.router)
    app.include_router(search_api.router)
    app.router.routes.append(mcp.route())
    later = LaterRoutes(app, partial(later_routers, token), start)
    if defer:
        app.router.routes.append(later)  # last: only what no route above takes waits
    else:
        for router in later_routers(token):
            app.include_router(router)
    # The last middleware added runs first: Host/Origin, then auth, before anything
    # reads a body; the hook ingest and page write routes are answered innermost,
    # ahead of the router.
    app.add_middleware(PageWriteRoute, runtime=lambda: getattr(app.state, "runtime", None))
    app.add_middleware(HookRoutes, hooks=lambda: getattr(app.state, "hooks", None))
    app.add_middleware(
        MetricsMiddleware, metrics=app.state.metrics, tool_access=tool_access_of(mcp.server)
    )
    app.add_middleware(BodyLimit, limit=config.server.max_request_bytes)
    app.add_middleware(InFlightLimit, limit=config.server.max_requests_in_flight)
    app.add_middleware(
        BearerAuth,
        token=token,
        keys=KeyAuthenticator(lambda: getattr(app.state, "runtime", None)),
        cookies=CookieAuthenticator(lambda: getattr(app.state, "runtime", None), token),
    )
    app.add_middleware(HostCheck, bind_host=parse_bind(config.server.bind)[0])
    app.add_middleware(HookFast)  # the hook routes: the checks above folded into one call
    app.add_middleware(PageFast)  # the page PUT: the same checks folded the same way
    app.add_middleware(SearchFast)  # the search GET: the same again
    if start is not None:
        app.add_middleware(start.track)  # outermost: every request counts
    return app


def run(app: FastAPI, settings: ServerSettings) -> None:
    """Serve ``app`` on ``settings.bind`` until interrupted: uvicorn's httptools protocol
    (C parsing) with the connection limits of :mod:`ai_memory.web.connections`."""
    import uvicorn

    host, port = parse_bind(settings.bind)
    uvicorn.run(
        app,
        host=host,
        port=port,
        http=protocol_class(ConnectionLimits.from_settings(settings)),
        loop="auto",  # uvloop where it is installed (not on Windows): less CPU per request
        timeout_keep_alive=settings.keep_alive_s,
        log_level="warning",
        access_log=False,  # its lines are below the level anyway; each answer built their text
        lifespan="on",
        timeout_graceful_shutdown=10,
    )


def later_routers(token: str) -> list[APIRouter]:
    """The routers an agent's first requests do not need: web UI, admin, maintenance,
    hygiene, identity, messages. No path of theirs is one the routers above match."""
    from ai_memory.web import (
        admin,
        batch_api,
        consolidate_api,
        graph_api,
        hygiene_projects_api,
        hygiene_sessions_api,
        identity_api,
        maintenance,
        messages_api,
        password_api,
        pending_api,
        ui,
    )

    return [
        admin.router,
        graph_api.router,
        maintenance.router,
        consolidate_api.router,
        hygiene_sessions_api.router,
        hygiene_projects_api.router,
        pending_api.router,
        identity_api.router,
        password_api.router,
        messages_api.router,
        batch_api.router,
        ui.build_router(token),
    ]


def build_llm(config: Config) -> Chat | None:
    """The LLM chains when ``[llm]`` names a provider; otherwise the package stays unimported."""
    if config.llm.provider == "none":
        return None
    from ai_memory.llm.build import build_chat

    return build_chat(config)


def start_capture(runtime: Runtime) -> tuple[HookService, Scheduler]:
    """Hook follow-up work and the idle-session scheduler run inside the server's loop."""
    hooks = HookService(runtime)
    hooks.start()
    settings = runtime.config.hooks
    scheduler = Scheduler(
        hooks, interval_s=settings.scheduler_interval_s, idle_end_s=runtime.config.idle_end_s
    )
    scheduler.start()
    return hooks, scheduler
