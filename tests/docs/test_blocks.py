"""Which blocks the example runner runs (tests/docs/blocks.py)."""

from __future__ import annotations

from pathlib import Path

from tests.docs.blocks import blocks_of, page_tested_by, runnable_blocks

PAGE = """# A page

```bash
echo one
```

<!-- not-run: needs Kafka -->

```bash
echo two
```

Some text.

```python
print("three")
```

```json
{"four": 4}
```

- a list item with an indented block:

    ```bash
    echo five
    ```
"""


def test_blocks_in_order_with_their_marker() -> None:
    blocks = blocks_of(PAGE, Path("p.md"))
    assert [(b.language, b.code.strip(), b.not_run) for b in blocks] == [
        ("bash", "echo one", None),
        ("bash", "echo two", "needs Kafka"),
        ("python", 'print("three")', None),
        ("json", '{"four": 4}', None),
        ("bash", "echo five", None),
    ]
    assert blocks[0].line == 3


def test_a_marker_covers_only_the_next_block() -> None:
    page = "<!-- not-run: x -->\ntext between\n```bash\necho\n```\n"
    assert blocks_of(page, Path("p.md"))[0].not_run is None


def test_pages_page_tested_by_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("```bash\necho readme\n```\n")
    (tmp_path / "docs" / "own.md").write_text(
        "<!-- examples: tested by tests/x/test_own.py -->\n```bash\necho own\n```\n"
    )
    assert page_tested_by((tmp_path / "docs" / "own.md").read_text()) == "tests/x/test_own.py"
    assert [b.code.strip() for b in runnable_blocks(tmp_path)] == ["echo readme"]
