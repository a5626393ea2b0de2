"""Write the gateway's OpenAPI document (what it serves at /openapi.json) to a file.

The TypeScript client generates its types from this file (clients/typescript/openapi.json);
its `npm run check:generated` fails when the committed copy or the types are out of date.
Building the app needs no database: only the routes and their models are read.

Usage: python scripts/export_openapi.py [OUTPUT]   (default: clients/typescript/openapi.json)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mnemo.gateway.app import create_app
from mnemo.settings import Settings

DEFAULT_OUTPUT = Path(__file__).resolve().parent.parent / "clients/typescript/openapi.json"


def document() -> str:
    """The document as the committed file holds it: sorted keys, two-space indent."""
    spec = create_app(Settings(embedding_provider="hash")).openapi()
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    output = Path(argv[1]) if len(argv) > 1 else DEFAULT_OUTPUT
    output.write_text(document(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
