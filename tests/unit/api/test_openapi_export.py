"""The TypeScript client's copy of the OpenAPI document (clients/typescript/openapi.json, from
which its types are generated) is the document the gateway serves today."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _export_script():  # scripts/ is not a package: load the script as the CLI runs it
    spec = importlib.util.spec_from_file_location(
        "export_openapi", ROOT / "scripts/export_openapi.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_typescript_clients_openapi_document_is_current() -> None:
    committed = (ROOT / "clients/typescript/openapi.json").read_text(encoding="utf-8")
    assert committed == _export_script().document(), (
        "clients/typescript/openapi.json is out of date: run `python scripts/export_openapi.py`, "
        "then `npm run generate` in clients/typescript"
    )


def test_the_export_writes_the_document(tmp_path: Path) -> None:
    script = _export_script()
    target = tmp_path / "openapi.json"
    assert script.main(["export_openapi.py", str(target)]) == 0
    assert '"/v1/memories/search"' in target.read_text(encoding="utf-8")
