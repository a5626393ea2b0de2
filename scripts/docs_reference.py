"""The generated reference pages of the docs site: HTTP (from the OpenAPI document), CLI
(from the typer app) and configuration (from Settings and the comments above its fields).

Called by the mkdocs hook (scripts/mkdocs_hooks.py) at every build, so the pages cannot go
stale; tests/docs/test_reference.py checks that every `MNEMO_` variable is documented.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
from collections.abc import Iterator
from typing import Any

DEFAULTS_BY_HAND = {
    # default_factory fields whose value depends on the machine or the user
    "MNEMO_DATA_DIR": "`~/.local/share/mnemo` (as root: `/var/lib/mnemo`, unless the former holds a database)",
    "MNEMO_WORKER_PROCESSES": "one per core, at most 2",
    "MNEMO_KAFKA_STATE_DIR": "`$TMPDIR/mnemo-faust`",
}
# Fields without a comment in the source; the rest take their meaning from the comment above.
MEANINGS_BY_HAND = {
    "MNEMO_DATA_DIR": "the embedded Postgres (in `pg/`) and local state; see [Install](../guides/install.md#the-data-folder)",
    "MNEMO_DB_POOL_SIZE": "connections in the database pool of each process",
    "MNEMO_PROJECT": "the project `mnemo serve` makes its first API key and its `default` group for, and that `mnemo keys create` uses without `--project`",
    "MNEMO_LLM_BASE_URL": "the OpenAI-compatible server's `/v1` URL; unset with no key: the offline provider",
    "MNEMO_LLM_API_KEY": "the LLM server's key (OpenAI's URL is used when only a key is set)",
    "MNEMO_LLM_MODEL": "the chat model's name, as the server knows it",
    "MNEMO_LLM_TIMEOUT_SECONDS": "timeout of one LLM call",
    "MNEMO_LLM_MAX_ATTEMPTS": "attempts per LLM call (retries with backoff on 429, 5xx, timeouts and invalid JSON)",
    "MNEMO_LLM_STRUCTURED_OUTPUT": "`json_schema`, or `tools` for servers without json_schema response formats (Ollama)",
    "MNEMO_EMBEDDING_MODEL": "the embedding model of the `openai` provider",
    "MNEMO_EMBEDDING_BASE_URL": "the `openai` provider's `/v1` URL",
    "MNEMO_EMBEDDING_API_KEY": "the `openai` provider's key (else `MNEMO_LLM_API_KEY`)",
    "MNEMO_EMBEDDING_DIM": "vector size of the `openai` provider's model (the local model has 384)",
    "MNEMO_WORKERS": "concurrent pipeline workers per process (runs of different scope keys)",
    "MNEMO_BUS_POLL_SECONDS": "how often an idle embedded worker polls the Postgres bus",
    "MNEMO_BUFFER_TICK_SECONDS": "how often buffer time triggers are checked",
    "MNEMO_RECALL_TRACKING": "record the memory ids each search returned (for reconsolidation)",
    "MNEMO_HOST": "the gateway's bind address",
    "MNEMO_PORT": "the gateway's port",
    "MNEMO_MAX_BODY_BYTES": "the largest request body, counted as it streams (413)",
    "MNEMO_AUTH_DISABLED": "serve without API keys (refused unless the host is a loopback address)",
    "MNEMO_METRICS_HOST": "bind address of a stage service's `/metrics`",
    "MNEMO_KAFKA_BOOTSTRAP_SERVERS": "the broker(s), comma-separated",
    "MNEMO_KAFKA_DLQ_PARTITIONS": "partitions of the dead-letter topic",
    "MNEMO_KAFKA_REPLICATION_FACTOR": "replication factor of the topics mnemo creates",
    "MNEMO_KAFKA_DLQ_ENABLED": "send records that failed for good to the dead-letter topic",
    "MNEMO_KAFKA_GROUP_EXTRACTOR": "consumer group of the extractor (empty: `{prefix}-extractor`)",
    "MNEMO_KAFKA_GROUP_BUFFER": "consumer group of the buffer service (empty: `{prefix}-buffer`)",
    "MNEMO_KAFKA_GROUP_TRANSFORMER": "consumer group of the transformer (empty: `{prefix}-transformer`)",
    "MNEMO_KAFKA_GROUP_COMMITTER": "consumer group of the committer (empty: `{prefix}-committer`)",
    "MNEMO_KAFKA_SESSION_TIMEOUT_SECONDS": "the consumers' session timeout",
    "MNEMO_KAFKA_BUFFER_TICK_SECONDS": "how often the buffer service checks time triggers",
    "MNEMO_KAFKA_LAG_INTERVAL_SECONDS": "how often the gateway reads consumer lag from the broker",
}
# Read by clients, scripts and libraries, not by Settings.
OTHER_VARIABLES = [
    (
        "MNEMO_URL",
        "`http://127.0.0.1:8080`",
        "the server the CLI's remote commands and `mnemo mcp` talk to",
    ),
    (
        "MNEMO_API_KEY",
        "unset",
        "the API key of the CLI's remote commands and `mnemo mcp` (`make run` prints one)",
    ),
    ("DATABASE_URL", "unset", "same as `MNEMO_DATABASE_URL`"),
    (
        "MNEMO_LOG_DIR",
        "`build/run-distributed`",
        "`scripts/run-distributed.sh`: where each process logs",
    ),
    (
        "MNEMO_METRICS_BASE_PORT",
        "9100",
        "`scripts/run-distributed.sh`: first `/metrics` port of the stage services",
    ),
    ("MNEMO_TEST_CHROMIUM", "`/usr/bin/chromium`", "the console's browser tests: the browser"),
    (
        "MNEMO_TEST_CHROMEDRIVER",
        "`/usr/bin/chromedriver`",
        "the console's browser tests: the driver",
    ),
    (
        "PROMETHEUS_MULTIPROC_DIR",
        "unset: a private temp folder",
        "`mnemo serve`: where every process writes its metrics ([Operate](../guides/operate.md#observability))",
    ),
    (
        "OTEL_*",
        "unset: no tracing",
        "OpenTelemetry tracing with the `otel` extra ([Operate](../guides/operate.md#observability))",
    ),
]

CONFIGURATION_INTRO = """\
# Configuration

Generated from `mnemo.settings.Settings` at every docs build. One settings object, read
from the environment once by each entry point (`mnemo serve`, the other CLI commands,
`services/*`, `python -m mnemo.embedded`) and passed down. Every variable is `MNEMO_` plus the
field's name; the Kafka section's are `MNEMO_KAFKA_` plus its field's name, the request
limits' `MNEMO_LIMITS_`, OAuth's `MNEMO_OAUTH_`. An unknown `MNEMO_*` variable is refused at start-up with its name
and the closest known one (`MNEMO_WORKER (did you mean MNEMO_WORKERS?)`), except those read
by clients and scripts (the last table).
"""


def _table(rows: list[tuple[str, ...]], head: tuple[str, ...]) -> str:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    lines = ["", line(head), "|" + "---|" * len(head), *(line(row) for row in rows)]
    return "\n".join(lines) + "\n"


# --- configuration ------------------------------------------------------------------------


def field_comments(model: type) -> dict[str, str]:
    """The comment lines right above each annotated field of `model`'s class body."""
    lines, _ = inspect.getsourcelines(model)
    tree = ast.parse(inspect.getsource(model))
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef)
    found: dict[str, str] = {}
    previous: tuple[str, int] | None = None  # the field before, and its last line
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            previous = None
            continue
        comment: list[str] = []
        index = node.lineno - 2  # the line above, 0-based
        while index >= 0 and lines[index].strip().startswith("#"):
            comment.insert(0, lines[index].strip().lstrip("#").strip())
            index -= 1
        if comment:
            found[node.target.id] = " ".join(comment)
        elif previous and previous[1] == node.lineno - 1 and previous[0] in found:
            # a field right below a commented one, with no blank line: the comment covers both
            found[node.target.id] = found[previous[0]]
        previous = (node.target.id, node.end_lineno or node.lineno)
    return found


def _default(field: Any) -> str:
    from pydantic_core import PydanticUndefined

    value = field.default
    if value is PydanticUndefined and field.default_factory is not None:
        value = field.default_factory()
    if value is None:
        return "unset"
    if hasattr(value, "get_secret_value"):
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def settings_rows() -> Iterator[tuple[str, str, str, str]]:
    """(section, variable, default, meaning) for every Settings field."""
    from mnemo.settings import PREFIX, SECTIONS, Settings

    models: list[tuple[str, str, type]] = [("server", PREFIX, Settings)]
    models += [(name, f"{PREFIX}{name.upper()}_", model) for name, model in SECTIONS.items()]
    for section, prefix, model in models:
        comments = field_comments(model)
        for name, field in model.model_fields.items():  # type: ignore[attr-defined]
            if model is Settings and name in SECTIONS:
                continue
            variable = f"{prefix}{name.upper()}"
            default = DEFAULTS_BY_HAND.get(variable) or _default(field)
            meaning = MEANINGS_BY_HAND.get(variable) or comments.get(name, "")
            yield section, variable, default, meaning


def configuration_markdown() -> str:
    parts = [CONFIGURATION_INTRO]
    titles = {
        "server": "Server",
        "kafka": "Distributed mode (Kafka)",
        "limits": "Request limits",
        "oauth": "OAuth for MCP clients",
    }
    rows = list(settings_rows())
    for section, title in titles.items():
        parts.append(f"\n## {title}\n")
        parts.append(
            _table(
                [(f"`{v}`", d, m) for s, v, d, m in rows if s == section],
                ("variable", "default", "meaning"),
            )
        )
    parts.append("\n## Read by clients, scripts and libraries\n")
    parts.append(
        _table(
            [(f"`{n}`", d, m) for n, d, m in OTHER_VARIABLES], ("variable", "default", "meaning")
        )
    )
    return "".join(parts)


# --- CLI ----------------------------------------------------------------------------------


def cli_markdown() -> str:
    import typer

    from mnemo.cli.main import app

    root = typer.main.get_command(app)
    parts = [
        "# CLI\n\nGenerated from the `mnemo` typer app at every docs build. "
        "`mnemo COMMAND --help` prints the same.\n"
    ]

    def walk(command: Any, path: list[str], parent: Any) -> None:
        # typer vendors its own click: take its classes from the command, not from `click`
        ctx = command.context_class(command, info_name=path[-1], parent=parent)
        if path[1:]:
            parts.append(f"\n## `{' '.join(path)}`\n\n")
            parts.append(f"```\n{command.get_usage(ctx)}\n```\n\n")
            if command.help:
                parts.append(inspect.cleandoc(command.help).split("\f")[0] + "\n\n")
            rows = []
            for param in command.params:
                if param.name == "help":
                    continue
                names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
                if param.param_type_name == "argument":
                    names = f"`{(param.name or '').upper()}` (argument)"
                help_text = getattr(param, "help", None) or ""
                envvar = getattr(param, "envvar", None)
                if envvar:
                    help_text += f" (env `{envvar}`)"
                default = param.default
                shown = "" if default in (None, (), []) or callable(default) else f"`{default}`"
                if param.required:
                    shown = "required"
                rows.append((names, shown, help_text))
            if rows:
                parts.append(_table(rows, ("option", "default", "meaning")))
        if hasattr(command, "list_commands"):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*path, name], ctx)

    walk(root, ["mnemo"], None)
    return "".join(parts)


# --- HTTP ---------------------------------------------------------------------------------


def openapi_document() -> dict[str, Any]:
    from mnemo.gateway.app import create_app
    from mnemo.settings import Settings

    # The document needs no engine: only the routes and their models.
    return create_app(Settings(data_dir=os.devnull)).openapi()


def _schema_name(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(_schema_name(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"array of {_schema_name(schema.get('items', {}))}"
    return f"`{schema.get('type', 'any')}`"


def http_markdown(document: dict[str, Any] | None = None) -> str:
    spec = document or openapi_document()
    parts = [
        "# HTTP API\n\n"
        f"Generated from the OpenAPI document of the gateway (`/openapi.json`, "
        f"{spec['info']['title']} {spec['info']['version']}) at every docs build. "
        "Operations tagged *mnemo extensions* are not part of Engram v1. Every request "
        "except the health checks needs `Authorization: Bearer <key>`.\n\n",
        spec["info"].get("description", "") + "\n",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            tag = (op.get("tags") or ["other"])[0]
            by_tag.setdefault(tag, []).append((method.upper(), path, op))
    for tag, ops in by_tag.items():
        parts.append(f"\n## {tag}\n")
        for method, path, op in ops:
            parts.append(f"\n### `{method} {path}`\n\n")
            if op.get("summary"):
                parts.append(f"**{op['summary']}**\n\n")
            if op.get("description"):
                parts.append(inspect.cleandoc(op["description"]) + "\n\n")
            params = [
                (
                    f"`{p['name']}` ({p['in']})",
                    _schema_name(p.get("schema", {})),
                    p.get("description", ""),
                )
                for p in op.get("parameters", [])
            ]
            if params:
                parts.append(_table(params, ("parameter", "type", "meaning")) + "\n")
            body = op.get("requestBody", {}).get("content", {})
            for media, content in body.items():
                parts.append(f"Body (`{media}`): {_schema_name(content.get('schema', {}))}\n\n")
            answers = [
                (f"`{code}`", answer.get("description", ""))
                for code, answer in op.get("responses", {}).items()
            ]
            if answers:
                parts.append(_table(answers, ("status", "meaning")))
    parts.append("\n## Schemas\n")
    for name, schema in spec.get("components", {}).get("schemas", {}).items():
        parts.append(f"\n### {name}\n\n")
        if schema.get("description"):
            parts.append(inspect.cleandoc(schema["description"]) + "\n\n")
        required = set(schema.get("required", []))
        rows = [
            (
                f"`{prop}`" + (" (required)" if prop in required else ""),
                _schema_name(sub),
                sub.get("description", ""),
            )
            for prop, sub in schema.get("properties", {}).items()
        ]
        if rows:
            parts.append(_table(rows, ("field", "type", "meaning")))
        elif "enum" in schema:
            parts.append(
                "One of " + ", ".join(f"`{json.dumps(v)}`" for v in schema["enum"]) + ".\n"
            )
    return "".join(parts)


PAGES = {
    "reference/http.md": http_markdown,
    "reference/cli.md": cli_markdown,
    "reference/configuration.md": configuration_markdown,
}
