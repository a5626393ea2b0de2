"""The generated reference pages cover everything: every `MNEMO_` variable with a default
and a meaning, every CLI command, every HTTP operation."""

from __future__ import annotations

import typer

from mnemo.cli.main import app
from mnemo.settings import known_variables
from scripts import docs_reference


def test_every_variable_is_documented_with_a_meaning() -> None:
    rows = {
        variable: (default, meaning)
        for _, variable, default, meaning in docs_reference.settings_rows()
    }
    assert set(rows) == set(known_variables())
    undocumented = sorted(v for v, (_, meaning) in rows.items() if not meaning.strip())
    assert not undocumented, f"add a comment above these Settings fields: {undocumented}"
    page = docs_reference.configuration_markdown()
    for variable in known_variables():
        assert f"`{variable}`" in page


def test_every_command_is_in_the_cli_page() -> None:
    page = docs_reference.cli_markdown()
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="mnemo")
    for name in root.list_commands(ctx):  # type: ignore[attr-defined]
        assert f"## `mnemo {name}" in page, name
    assert "## `mnemo keys create`" in page and "`--init`" in page


def test_every_operation_is_in_the_http_page() -> None:
    document = docs_reference.openapi_document()
    page = docs_reference.http_markdown(document)
    for path, methods in document["paths"].items():
        for method in methods:
            assert f"### `{method.upper()} {path}`" in page
    for schema in document["components"]["schemas"]:
        assert f"### {schema}\n" in page
