"""API key format: recognisable, scannable, and stored only as a hash.

A key reads ``aim_<prefix>_<secret>``: the fixed ``aim_`` start lets secret
scanners and the sanitizer recognise one; the prefix is the key's public id
(shown in listings, used to find its row); the secret carries 256 bits. Keys
are random, not chosen by people, so one SHA-256 is enough to store them:
a slow password hash would only slow down every request.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

KEY_START = "aim_"
KEY_PATTERN = re.compile(r"aim_([a-z0-9]{10})_([A-Za-z0-9_-]{43})")
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


@dataclass(frozen=True, slots=True)
class NewKey:
    full: str  # shown to the user once, never stored
    prefix: str
    secret_hash: str


def generate() -> NewKey:
    prefix = "".join(secrets.choice(_ALPHABET) for _ in range(10))
    full = f"{KEY_START}{prefix}_{secrets.token_urlsafe(32)}"
    return NewKey(full, prefix, hash_key(full))


def hash_key(full: str) -> str:
    return hashlib.sha256(full.encode("utf-8")).hexdigest()


def parse_prefix(presented: str) -> str | None:
    """The prefix of a well-formed key, or None for anything else."""
    match = KEY_PATTERN.fullmatch(presented)
    return match.group(1) if match else None


def matches(presented: str, secret_hash: str) -> bool:
    return hmac.compare_digest(hash_key(presented), secret_hash)
