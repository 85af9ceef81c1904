"""The model folders show the flow (issue: "model folders that show the
flow"): both model paths (`models/` for SQL, `python_models/` for Python) use
the same layer folders, each folder has one yml describing exactly the models
in it, and a model's name says its layer (`stg_`/`base_` in staging, `int_`
in intermediate, the marts' `kilt_` tables in marts)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MODEL_PATHS = ("models", "python_models")
LAYER_PREFIXES = {
    "staging": ("stg_", "base_"),
    "intermediate": ("int_",),
    "marts": ("kilt_",),
}


def _model_folders() -> dict[Path, list[Path]]:
    """Each folder holding model files (relative to its model path, e.g.
    ``marts/provenance``) -> its model files, over both model paths."""
    folders: dict[Path, list[Path]] = {}
    for base in MODEL_PATHS:
        for path in sorted((ROOT / base).rglob("*")):
            if path.suffix in (".sql", ".py") and path.is_file():
                folders.setdefault(path.parent, []).append(path)
    return folders


def test_every_model_sits_in_the_folder_of_its_layer() -> None:
    misplaced = []
    for folder, files in _model_folders().items():
        layer = folder.relative_to(ROOT).parts[1]
        for file in files:
            if not file.stem.startswith(LAYER_PREFIXES[layer]):
                misplaced.append(str(file.relative_to(ROOT)))
    assert misplaced == []


def test_python_models_use_the_layer_folders_of_the_sql_models() -> None:
    def layers(base: str) -> set[Path]:
        return {
            folder.relative_to(ROOT / base)
            for folder in _model_folders()
            if folder.is_relative_to(ROOT / base)
        }

    assert layers("python_models") <= layers("models")


@pytest.mark.parametrize(
    "folder", sorted(_model_folders()), ids=lambda f: str(f.relative_to(ROOT))
)
def test_one_yml_per_folder_describes_its_models(folder: Path) -> None:
    ymls = sorted(folder.glob("*.yml"))
    assert len(ymls) == 1, [y.name for y in ymls]
    described = {
        model["name"]
        for model in yaml.safe_load(ymls[0].read_text(encoding="utf-8"))["models"]
    }
    assert described == {file.stem for file in _model_folders()[folder]}
