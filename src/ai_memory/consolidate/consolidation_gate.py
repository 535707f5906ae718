"""The one check every consolidation entry makes first: is a provider configured?

Light on purpose (no LLM import), so a server without a provider answers the
clear error without loading the LLM layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ai_memory.core.errors import LlmUnavailable
from ai_memory.runtime import Runtime

if TYPE_CHECKING:
    from ai_memory.llm.chat import Chat

NO_PROVIDER = "no LLM provider configured: set [llm] provider (see docs/llm.md)"


def require_chat(runtime: Runtime) -> Chat:
    if runtime.llm is None:
        raise LlmUnavailable(NO_PROVIDER)
    return runtime.llm
