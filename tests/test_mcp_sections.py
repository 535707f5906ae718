"""Section hashes and patches: conflicts and ambiguity fail before anything changes."""

from __future__ import annotations

import pytest

from ai_memory.core.errors import AmbiguousSection, Conflict, SectionConflict, SectionNotFound
from ai_memory.mcp.errors import InvalidArgument
from ai_memory.mcp.sections import apply_patch, sections

BODY = """# Title

intro

## Steps

- one

```
## not a heading
```

### Detail

deep

## Notes

n
"""


def test_sections_span_to_the_next_heading_of_their_level_and_skip_code() -> None:
    found = {s.heading: s for s in sections(BODY)}
    assert list(found) == ["Title", "Steps", "Detail", "Notes"]
    assert (found["Steps"].start, found["Steps"].end) == (4, 16)
    assert found["Title"].end == len(BODY.splitlines())
    assert len({s.hash for s in found.values()}) == 4


def test_a_section_hash_changes_only_with_its_own_text() -> None:
    before = {s.heading: s.hash for s in sections(BODY)}
    after = {s.heading: s.hash for s in sections(BODY.replace("\nn\n", "\nchanged\n"))}
    assert after["Steps"] == before["Steps"] and after["Detail"] == before["Detail"]
    assert after["Notes"] != before["Notes"] and after["Title"] != before["Title"]


def test_patches() -> None:
    steps = next(s for s in sections(BODY) if s.heading == "Steps")
    replaced = apply_patch(
        BODY, "replace_section", "- new", section="steps", section_hash=steps.hash
    )
    assert "- one" not in replaced and "### Detail" not in replaced and "## Notes" in replaced
    assert replaced.startswith("# Title\n\nintro\n\n## Steps\n\n- new\n\n## Notes")
    appended = apply_patch(BODY, "append_to_section", "- two", section="Detail")
    assert "deep\n\n- two\n\n## Notes" in appended
    assert apply_patch(BODY, "append", "end").endswith("n\n\nend\n")
    added = apply_patch(BODY, "add_section", "text", section="Later", level=3)
    assert added.endswith("### Later\n\ntext\n")
    assert apply_patch("", "append", "first") == "first\n"


def test_patch_failures() -> None:
    twice = "## A\n\none\n\n## A\n\ntwo\n"
    with pytest.raises(AmbiguousSection) as ambiguous:
        apply_patch(twice, "append_to_section", "x", section="A")
    hashes = [s["hash"] for s in ambiguous.value.details["sections"]]
    picked = apply_patch(twice, "append_to_section", "x", section="A", section_hash=hashes[1])
    assert picked == "## A\n\none\n\n## A\n\ntwo\n\nx\n"
    with pytest.raises(SectionConflict):
        apply_patch(BODY, "replace_section", "x", section="Steps", section_hash="0" * 16)
    with pytest.raises(SectionNotFound):
        apply_patch(BODY, "append_to_section", "x", section="Missing")
    with pytest.raises(InvalidArgument, match="section_hash"):
        apply_patch(BODY, "replace_section", "x", section="Steps")
    with pytest.raises(Conflict, match="already exists"):
        apply_patch(BODY, "add_section", "x", section="notes")
    with pytest.raises(InvalidArgument, match="heading"):
        apply_patch(BODY, "add_section", "x")
