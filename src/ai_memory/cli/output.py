"""Where every command prints: one stdout console, one stderr console, one JSON form."""

from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console

out = Console()
err = Console(stderr=True, soft_wrap=True)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
