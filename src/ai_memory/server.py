"""Assembling the ASGI app and serving it."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
import anyio.to_thread
from fastapi import FastAPI

from ai_memory import __version__
from ai_memory.config import Config
from ai_memory.core.errors import ConfigError, Forbidden
from ai_memory.runtime import Runtime
from ai_memory.web import api
from ai_memory.web import search as search_api
from ai_memory.web.errors import install_error_handlers
from ai_memory.web.middleware import BearerAuth, BodyLimit

log = logging.getLogger(__name__)


def create_app(config: Config, token: str | None) -> FastAPI:
    """The whole server as one ASGI app; the runtime starts and stops with its lifespan."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = await anyio.to_thread.run_sync(Runtime.start, config)
        app.state.runtime = runtime
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(runtime.stop)

    app = FastAPI(
        title="ai-memory", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None
    )
    install_error_handlers(app)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok", "version": __version__}

    app.include_router(api.router)
    app.include_router(search_api.router)
    # The last middleware added runs first: auth before anything reads a body.
    app.add_middleware(BodyLimit, limit=config.server.max_request_bytes)
    app.add_middleware(BearerAuth, token=token)
    return app


def parse_bind(bind: str) -> tuple[str, int]:
    host, sep, port = bind.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ConfigError(f"bind {bind!r} is not host:port")
    number = int(port)
    if not 0 < number < 65536:
        raise ConfigError(f"bind {bind!r}: port must be 1-65535")
    return host.strip("[]"), number


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, token: str | None) -> None:
    if token is None and not is_loopback(host):
        raise Forbidden(
            f"refusing to serve on {host} without a bearer token; run `ai-memory init` first"
        )
