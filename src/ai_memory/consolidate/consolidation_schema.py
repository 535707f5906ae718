"""What a consolidation asks the provider for: a pydantic schema, sent as JSON schema.

The limits here are the ones a page must meet anyway (a title fits the frontmatter,
a slug is one path segment), so an answer that validates can always be written.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

Folder = Literal["concepts", "decisions", "gotchas", "procedures"]
KIND_OF_FOLDER: dict[str, str] = {
    "concepts": "concept",
    "decisions": "decision",
    "gotchas": "gotcha",
    "procedures": "procedure",
}
SLUG = r"^[a-z0-9][a-z0-9-]{0,79}$"
LINK = r"^(sessions|concepts|decisions|gotchas|procedures)/[A-Za-z0-9][A-Za-z0-9._-]{0,119}\.md$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PageDraft(Strict):
    """A new durable page, or the whole new text of an existing one (same folder/slug)."""

    folder: Folder = Field(description="where the page lives: what kind of knowledge it is")
    slug: str = Field(
        pattern=SLUG, description="file name without .md, lower-case words-with-dashes"
    )
    title: str = Field(min_length=1, max_length=200)
    body: str = Field(
        min_length=1, max_length=20_000, description="markdown, without frontmatter or title line"
    )
    links: list[Annotated[str, Field(pattern=LINK)]] = Field(
        default_factory=list,
        max_length=20,
        description="other pages this one builds on, as folder/slug.md",
    )
    tags: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        default_factory=list, max_length=10
    )

    @property
    def path(self) -> str:
        return f"{self.folder}/{self.slug}.md"


class ConsolidationAnswer(Strict):
    """The provider's whole answer for one session."""

    title: str = Field(min_length=1, max_length=200, description="the session page's title")
    summary: str = Field(
        min_length=1, max_length=4000, description="what the session did, decided and left open"
    )
    pages: list[PageDraft] = Field(default_factory=list, max_length=50)
