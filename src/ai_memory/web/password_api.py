"""``PUT /admin/users/{name}/password``: an admin sets (or resets) a user's web password.

The password arrives in the body, is hashed here off the event loop, and only
the hash is stored; the user's web sessions end with the old password. The
answer and the audit row name the user, never the password.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel, ConfigDict

from ai_memory.core.clock import now_iso
from ai_memory.runtime import Runtime
from ai_memory.store import passwords
from ai_memory.web.deps import get_runtime
from ai_memory.web.identity_api import require_admin

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_admin)])
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


class PasswordBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    password: str


@router.put("/admin/users/{name}/password")
async def set_password(runtime: RuntimeDep, name: str, body: PasswordBody) -> dict[str, Any]:
    hashed = await asyncio.to_thread(passwords.hash_password, body.password)
    now = now_iso()
    return await runtime.writer.run(
        lambda conn: passwords.set_password(conn, name, hashed, now=now), timeout=10.0
    )
