"""The layering of issue 36: imports that run back up the layers, and the move rewriter."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_at_most_two_imports_run_back_up_the_layers() -> None:
    # Issue 36's bound; lint-imports' layers contract (pyproject.toml) holds it at zero.
    pairs = _script("back_imports").back_imports()
    assert len(pairs) <= 2, pairs


def test_the_counter_sees_a_pair_that_imports_each_other(tmp_path: Path) -> None:
    counter = _script("back_imports")
    for package, other in (("a", "b"), ("b", "a")):
        (tmp_path / "mnemo" / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / "mnemo" / package / "__init__.py").write_text("")
        (tmp_path / "mnemo" / package / "m.py").write_text(f"from mnemo.{other}.m import x\n")
    (tmp_path / "mnemo" / "__init__.py").write_text("")
    counter.ROOT = tmp_path
    assert counter.back_imports() == [("a", "b")]


def test_apply_moves_rewrites_modules_parents_and_names() -> None:
    moves = _script("apply_moves")
    listed = [
        moves.Move("mnemo.core.buffering", "mnemo.steps.buffering"),
        moves.Move("mnemo.engine", "mnemo.embedded"),
        moves.Move("mnemo.deps", "mnemo.domain.batch", "Batch", "Batch"),
    ]
    source = (
        "from mnemo.core.buffering import Waiting\n"
        "from mnemo.core import buffering, groups\n"
        "from mnemo.deps import Batch, Deps\n"
        "import mnemo.engine.runner\n"
        "from mnemo.core.engine import Engine\n"
        "run = 'python -m mnemo.engine'\n"
        "see = 'libs/mnemo/core/buffering.py'\n"
    )
    assert moves.rewrite(source, listed) == (
        "from mnemo.steps.buffering import Waiting\n"
        "from mnemo.core import groups\n"
        "from mnemo.steps import buffering\n"
        "from mnemo.deps import Deps\n"
        "from mnemo.domain.batch import Batch\n"
        "import mnemo.embedded.runner\n"
        "from mnemo.core.engine import Engine\n"
        "run = 'python -m mnemo.embedded'\n"
        "see = 'libs/mnemo/steps/buffering.py'\n"
    )


def test_moves_txt_parses_and_names_existing_targets() -> None:
    moves = _script("apply_moves").load_moves()
    assert moves
    for move in moves:
        if move.old_name or move.new.startswith("tests."):
            continue
        path = ROOT / "libs" / Path(*move.new.split("."))
        assert path.with_suffix(".py").exists() or path.is_dir(), move.new
