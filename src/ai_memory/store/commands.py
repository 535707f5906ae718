"""What the writer runs: commands, functions of its connection, and those that may run twice."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
Command = Callable[[sqlite3.Connection], T]


@dataclass(frozen=True, slots=True)
class Rerunnable(Generic[T]):
    """A command that may run twice: what it does besides its SQL and the files it stages
    through ``writer.files`` (both undone on failure) is nothing, so after a rollback the
    writer can run it again in a savepoint of its own. Page writes are such commands."""

    run: Command[T]

    def __call__(self, conn: sqlite3.Connection) -> T:
        return self.run(conn)
