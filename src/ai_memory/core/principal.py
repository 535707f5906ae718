"""Who is asking, and what a project's access rule gives them. Pure decisions, no I/O.

The operator's root token and admin users act with every right; everyone else
gets what a project's rule and grants give them. Rows with no owner belong to
the operator, so a data dir from before users existed behaves exactly as it did.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from ai_memory.core.identity import GLOBAL_PROJECT

ROOT_NAME = "root"
# Where the auth middleware leaves the principal in the ASGI scope.
PRINCIPAL_KEY = "ai_memory.principal"
VISIBILITIES = ("open", "restricted")
GRANTS = ("read", "write")


class Access(IntEnum):
    """Ordered, so ``have >= need`` is the whole check."""

    NONE = 0
    READ = 1
    WRITE = 2

    @classmethod
    def of(cls, name: str) -> Access:
        return {"read": cls.READ, "write": cls.WRITE}[name]


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller: the root token (``user_id`` None) or a user."""

    user_id: int | None
    name: str
    admin: bool
    key_id: int | None = None

    @classmethod
    def root(cls) -> Principal:
        return cls(None, ROOT_NAME, True)

    @property
    def is_root(self) -> bool:
        return self.user_id is None

    @property
    def owner(self) -> int | None:
        """The value stored as the owner of what this caller captures."""
        return self.user_id

    def owns(self, owner: int | None) -> bool:
        return owner == self.user_id

    def sees_every_owner(self) -> bool:
        """Raw observations of other people's sessions: the operator and admins only."""
        return self.admin


@dataclass(frozen=True, slots=True)
class ProjectPolicy:
    """A project's rule: ``open`` to every signed-in user, or ``restricted`` to its grants.

    ``operator_owned`` marks a workspace's ``_global`` project: its pages reach every
    project's search and brief, so only admins and explicit write grants may change it.
    """

    visibility: str = "open"
    created_by: int | None = None
    grants: Mapping[int, Access] = field(default_factory=dict)
    operator_owned: bool = False


OPEN = ProjectPolicy()


def operator_owned(project: str) -> bool:
    """Whether ``project`` belongs to the operator whoever wrote to it first."""
    return project == GLOBAL_PROJECT


def creator(principal: Principal, project: str) -> int | None:
    """The ``created_by`` a new project gets: never a user for an operator-owned one."""
    return None if operator_owned(project) else principal.owner


def access_to(principal: Principal, policy: ProjectPolicy) -> Access:
    """What ``principal`` may do in a project with ``policy``."""
    if principal.admin:
        return Access.WRITE
    granted = Access.NONE if principal.user_id is None else policy.grants.get(principal.user_id)
    if policy.operator_owned:  # readable when open, writable only by an explicit grant
        floor = Access.READ if policy.visibility == "open" else Access.NONE
        return max(floor, granted or Access.NONE)
    if policy.visibility == "open":
        return Access.WRITE
    if principal.user_id is not None and principal.user_id == policy.created_by:
        return Access.WRITE
    if principal.user_id is None:
        return Access.NONE
    return policy.grants.get(principal.user_id, Access.NONE)


def principal_in(scope: Mapping[str, Any]) -> Principal:
    """The caller the auth middleware recorded; in-process calls act as the operator."""
    found = scope.get(PRINCIPAL_KEY)
    return found if isinstance(found, Principal) else Principal.root()
