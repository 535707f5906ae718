"""The project-shaped corpus: a small shop backend with its curated pages and its chatter.

Twelve curated pages (decisions, gotchas, procedures, a concept, a rule) say
what the team knows; ~120 sessions of ordinary work (tests, lint, renames, CI
failures, reviews) mention the same words in passing, the way real prompts do.
Two decisions were replaced (one rewritten in place, one by a new page that
marks the old one superseded); two preferences live in ``_global``. A few
sessions hold a one-off fact that only a turn can answer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SEED = 20261201


@dataclass(frozen=True)
class Page:
    path: str
    kind: str
    title: str
    body: str
    by: str = "agent"  # "agent": written through the API; "person": a file edited by hand
    project: str = "shop"
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    text: str
    kind: str  # "curated", "current", "global", "turn"
    expect: str  # a page path, or for "turn" the fact the turn holds
    older: str = ""  # for "current": the path of the superseded page (or "" for in place)
    extra: dict[str, object] = field(default_factory=dict)


CURATED = [
    Page(
        "decisions/refund-rounding.md",
        "decision",
        "Refund rounding",
        "Refunds round half-even to the cent, per line item, before tax is recomputed. "
        "Rounding the order total instead left one-cent drifts against the ledger.",
    ),
    Page(
        "gotchas/queue-worker-visibility.md",
        "gotcha",
        "Queue worker visibility timeout",
        "The queue worker must extend the visibility timeout for jobs longer than 30 s, "
        "or SQS hands the same job to a second worker and the email is sent twice.",
    ),
    Page(
        "procedures/release.md",
        "procedure",
        "Cutting a release",
        "Tag from main, let CI build the wheel, run the smoke tests against staging, "
        "then promote the staging image; never hand-build a release wheel.",
        by="person",
    ),
    Page(
        "decisions/money-as-integers.md",
        "decision",
        "Money as integer cents",
        "All amounts are stored as integer cents; floats are banned in the pricing and "
        "refund code. The lint rule no-float-money enforces it.",
    ),
    Page(
        "gotchas/tz-midnight-tests.md",
        "gotcha",
        "Tests that fail at midnight UTC",
        "Date-dependent tests must freeze the clock; the invoice tests failed nightly "
        "when CI crossed midnight UTC while the fixtures used local dates.",
    ),
    Page(
        "procedures/db-migration.md",
        "procedure",
        "Writing a database migration",
        "Migrations are additive first: add the column, backfill in batches, switch "
        "reads, then drop the old column in a later release.",
        by="person",
    ),
    Page(
        "concepts/order-lifecycle.md",
        "concept",
        "Order lifecycle",
        "An order moves pending -> paid -> fulfilled -> closed; a refund reopens a closed "
        "order as refunded, never back to paid.",
    ),
    Page(
        "_rules/code-review.md",
        "rule",
        "Code review rule",
        "Every change to payments or refunds needs a second reviewer from the payments "
        "team before merge.",
        by="person",
    ),
    Page(
        "gotchas/lint-import-cycles.md",
        "gotcha",
        "Lint import cycle false positive",
        "The import-cycle lint flags the queue worker's lazy import of the mailer; the "
        "cycle is intentional and the lint ignore comment must stay.",
    ),
    Page(
        "decisions/cache-invalidation.md",
        "decision",
        "Cart cache invalidation",
        "Cart caches are invalidated by publishing a cart-changed event, not by TTL; a "
        "60 s TTL showed stale prices after discounts changed.",
    ),
    Page(
        "procedures/rotate-api-keys.md",
        "procedure",
        "Rotating payment API keys",
        "Create the new key in the provider dashboard, deploy it as the secondary key, "
        "flip primary and secondary, then revoke the old key after 24 hours.",
    ),
    Page(
        "gotchas/ci-docker-cache.md",
        "gotcha",
        "CI docker layer cache",
        "The CI docker layer cache is keyed on the lockfile hash; editing requirements "
        "without regenerating the lockfile gives a stale image and confusing test failures.",
    ),
]

# Replaced decisions: one rewritten in place (version 2 is current), one by a new page.
IN_PLACE_OLD = Page(
    "decisions/search-backend.md",
    "decision",
    "Search backend",
    "Product search uses Elasticsearch, run by us on two nodes.",
)
IN_PLACE_NEW = Page(
    "decisions/search-backend.md",
    "decision",
    "Search backend",
    "Product search moved from Elasticsearch to Postgres full-text search: "
    "one less cluster to run, and the catalogue is small.",
)
REPLACED_OLD = Page(
    "decisions/ci-provider-jenkins.md",
    "decision",
    "CI provider: Jenkins",
    "CI runs on the self-hosted Jenkins box; pipelines are Groovy files.",
    tags=("superseded",),
)
REPLACED_NEW = Page(
    "decisions/ci-provider-github-actions.md",
    "decision",
    "CI provider: GitHub Actions",
    "CI moved from Jenkins to GitHub Actions; pipelines are YAML workflows. "
    "Replaces [[decisions/ci-provider-jenkins.md]].",
)

GLOBAL = [
    Page(
        "preferences/commit-messages.md",
        "note",
        "Commit message style",
        "Commit messages are imperative and say what changes for a user; no ticket "
        "numbers in the subject line.",
        project="_global",
    ),
    Page(
        "preferences/python-style.md",
        "note",
        "Python style",
        "Prefer type hints everywhere and dataclasses over dicts for records; format with ruff.",
        project="_global",
    ),
]

QUESTIONS = [
    Question("refund rounding decision", "curated", "decisions/refund-rounding.md"),
    Question("how do we round refunds", "curated", "decisions/refund-rounding.md"),
    Question(
        "why was an email sent twice by the queue worker",
        "curated",
        "gotchas/queue-worker-visibility.md",
    ),
    Question("queue worker visibility timeout", "curated", "gotchas/queue-worker-visibility.md"),
    Question("how do we cut a release", "curated", "procedures/release.md"),
    Question("release procedure staging smoke tests", "curated", "procedures/release.md"),
    Question("are floats allowed for money amounts", "curated", "decisions/money-as-integers.md"),
    Question("tests failing at midnight", "curated", "gotchas/tz-midnight-tests.md"),
    Question("how to write a database migration", "curated", "procedures/db-migration.md"),
    Question("order lifecycle states", "curated", "concepts/order-lifecycle.md"),
    Question("who must review refund changes", "curated", "_rules/code-review.md"),
    Question("import cycle lint in the queue worker", "curated", "gotchas/lint-import-cycles.md"),
    Question("cart cache invalidation", "curated", "decisions/cache-invalidation.md"),
    Question("rotate the payment api keys", "curated", "procedures/rotate-api-keys.md"),
    Question("stale docker image in CI", "curated", "gotchas/ci-docker-cache.md"),
    Question(
        "which search backend do we use",
        "current",
        "decisions/search-backend.md",
        older="",
        extra={"include_superseded": True},
    ),
    Question(
        "CI provider decision",
        "current",
        "decisions/ci-provider-github-actions.md",
        older="decisions/ci-provider-jenkins.md",
    ),
    Question("commit message style", "global", "preferences/commit-messages.md"),
    Question("python style preferences", "global", "preferences/python-style.md"),
]

# One-off facts said once in one session: (the turn's text, a question it answers).
FACTS = [
    (
        "the flaky one was test_partial_capture_refund, it only fails on the arm64 runner",
        "which refund test was flaky on the arm64 runner",
    ),
    (
        "the staging deploy broke because the REDIS_URL secret was renamed to CACHE_URL",
        "why did the staging deploy break with redis",
    ),
    (
        "benchmark says checkout p95 went from 180 ms to 95 ms after the index on cart_id",
        "how much did the cart_id index speed up checkout",
    ),
    (
        "the reviewer asked to rename OrderService.finalise to OrderService.close_order",
        "what did the reviewer want OrderService.finalise renamed to",
    ),
    (
        "ruff complains about B008 in the fastapi dependency defaults, we silenced it per file",
        "what did we do about ruff B008 in fastapi dependencies",
    ),
    (
        "the mailer timeout was raised to 12 seconds because the provider is slow on Mondays",
        "why was the mailer timeout raised",
    ),
]

CHATTER = [
    "run the refund tests again",
    "fix the lint in the queue worker",
    "rename the cart module to basket and update imports",
    "CI failed on the invoice tests, look at the log",
    "review the diff for the release branch",
    "the migration test is red, check the fixtures",
    "bump the docker base image and rebuild",
    "add a test for the order lifecycle transition",
    "why is the cache test slow",
    "clean up the payment api client",
    "the lint job fails on import order",
    "update the release notes",
    "refund endpoint returns 500 on empty body, add validation",
    "queue worker logs are too noisy, lower the level",
    "rerun CI, it looked flaky",
    "add type hints to the rounding helpers",
    "the review bot wants smaller functions in refunds.py",
    "decide later whether the search endpoint needs pagination",
    "make the midnight cron job idempotent",
    "the api keys test needs a fake provider",
]
TOOLS = [
    ("Bash", "pytest tests/test_refunds.py -q", "3 passed, 1 failed: test_refund_rounding_total"),
    ("Bash", "ruff check src/shop/queue_worker.py", "src/shop/queue_worker.py:12 F401 unused"),
    ("Edit", "src/shop/cart.py", "renamed Cart to Basket in 4 places"),
    ("Bash", "gh run view --log-failed", "test_invoice_due_date failed: expected 2026-11-30"),
    ("Read", "src/shop/release.py", "def cut_release(tag): ..."),
    ("Bash", "docker build -t shop:dev .", "Successfully built 4f2a1c"),
]


def sessions(count: int = 120) -> list[list[tuple[str, str, str]]]:
    """Each session: a list of (event, text, tool output) steps; facts go in a few of them."""
    rng = random.Random(SEED)
    out: list[list[tuple[str, str, str]]] = []
    for n in range(count):
        steps: list[tuple[str, str, str]] = []
        for _ in range(rng.randint(4, 9)):
            if rng.random() < 0.6:
                steps.append(("prompt", rng.choice(CHATTER), ""))
            else:
                tool, command, output = rng.choice(TOOLS)
                steps.append((tool, command, output))
        if n % 17 == 3 and n // 17 < len(FACTS):
            steps.insert(rng.randint(1, len(steps)), ("prompt", FACTS[n // 17][0], ""))
        out.append(steps)
    return out
