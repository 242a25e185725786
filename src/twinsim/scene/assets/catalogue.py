"""Asset catalogues: a folder with an `assets.yaml` listing mesh files and how to place them.

```yaml
assets:
  - file: chair.obj        # inside the catalogue folder (no `..`, no absolute path, no link out)
    class: chair           # a semantic class of the vocabulary
    units: cm              # m (default), cm, mm, in, ft; or `scale: 0.01` (not both)
    up_axis: y             # the file's up axis, y or z (default: y for glTF/GLB, else z)
    placement: floor       # where copies stand (only floor so far)
    count: {min: 1, max: 2}  # copies in a world, drawn per seed (a number: exactly that many)
    collision: {method: coacd, threshold: 0.05, preprocess: auto}
```

Every problem is one `ConfigError` line naming the catalogue file and the entry's field, or
the mesh file and why it cannot be used, before anything is written. What a mesh file refers
to (an OBJ's material library and textures, a glTF's buffers and images) is read from the
mesh file's own folder only (trimesh's resolver refuses a path leading out of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from twinsim.configmodel import ConfigModel, load_yaml_model
from twinsim.errors import ConfigError
from twinsim.scene.vocabulary import class_id

CATALOGUE_FILE = "assets.yaml"
#: a generator's `assets` field: catalogue folders (read when the world is generated, so a
#: recorded config replays without them)
CatalogueFolders = Annotated[
    tuple[str, ...],
    Field(description="mesh asset catalogues: folders each holding an assets.yaml"),
]
UNITS_M = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254, "ft": 0.3048}
#: the formats read, by suffix; glTF is y-up by its specification, the others z-up by default
FORMATS = {".obj": "z", ".stl": "z", ".ply": "z", ".gltf": "y", ".glb": "y"}


class CountRange(ConfigModel):
    """How many copies of an entry a world gets: drawn uniformly in [min, max] per seed."""

    min: int = Field(1, ge=0, le=100)
    max: int = Field(1, ge=0, le=100)

    @model_validator(mode="before")
    @classmethod
    def _exactly(cls, data: object) -> object:
        """A number n is exactly n copies."""
        return {"min": data, "max": data} if isinstance(data, int) else data

    @model_validator(mode="after")
    def _ordered(self) -> CountRange:
        if self.min > self.max:
            raise ValueError(f"min={self.min} must be <= max={self.max}")
        return self


class CollisionConfig(ConfigModel):
    """How an asset collides: CoACD's convex decomposition (its concavity `threshold`, and
    whether it first remeshes the input into a manifold: `preprocess`), or its convex hull."""

    method: Literal["coacd", "hull"] = "coacd"
    threshold: float = Field(0.05, ge=0.01, le=1.0)
    preprocess: Literal["auto", "on", "off"] = "auto"


class AssetEntry(ConfigModel):
    """One mesh file of a catalogue and how its copies are placed."""

    file: str
    semantic_class: str = Field(alias="class")
    units: Literal["m", "cm", "mm", "in", "ft"] | None = None
    scale: float | None = Field(None, gt=0.0)
    up_axis: Literal["y", "z"] | None = None
    placement: Literal["floor"] = "floor"
    count: CountRange = CountRange()
    collision: CollisionConfig = CollisionConfig()

    @field_validator("semantic_class")
    @classmethod
    def _known_class(cls, name: str) -> str:
        class_id(name)
        return name

    @field_validator("file")
    @classmethod
    def _inside_the_folder(cls, file: str) -> str:
        """A relative path of plain names in a format trimesh reads here."""
        path = PurePosixPath(file)
        if not file or path.is_absolute() or "\\" in file or ":" in path.parts[0]:
            raise ValueError(f"{file!r} must be a path relative to the catalogue folder")
        if any(part in ("..", ".") for part in path.parts):
            raise ValueError(f"{file!r} must not leave the catalogue folder (no '..')")
        if path.suffix.lower() not in FORMATS:
            raise ValueError(f"{file!r}: format not read; use one of {', '.join(FORMATS)}")
        return file

    @model_validator(mode="after")
    def _one_scale(self) -> AssetEntry:
        if self.units is not None and self.scale is not None:
            raise ValueError("give units or scale, not both")
        return self

    @property
    def scale_m(self) -> float:
        """Metres per unit of the file."""
        return self.scale if self.scale is not None else UNITS_M[self.units or "m"]

    @property
    def up(self) -> Literal["y", "z"]:
        """The file's up axis: as given, else its format's."""
        return self.up_axis or FORMATS[PurePosixPath(self.file).suffix.lower()]  # type: ignore[return-value]


class CatalogueFile(ConfigModel):
    """An `assets.yaml`: its entries."""

    assets: list[AssetEntry] = Field(min_length=1)


@dataclass(frozen=True)
class CatalogueItem:
    """An entry of a catalogue with its mesh file found: `path` the checked file, `where` the
    entry as people name it (`<catalogue>/assets.yaml: assets.<i>`)."""

    entry: AssetEntry
    path: Path
    where: str


def load_catalogues(folders: Sequence[str | Path]) -> list[CatalogueItem]:
    """Every entry of the catalogues `folders`, in order, each with its mesh file checked."""
    return [item for folder in folders for item in _load_catalogue(Path(folder))]


def _load_catalogue(folder: Path) -> list[CatalogueItem]:
    """One catalogue's entries, its paths checked to stay in `folder`."""
    if not folder.is_dir():
        raise ConfigError(f"scene.assets: {folder}: no such catalogue folder")
    root = folder.resolve()
    yaml_file = folder / CATALOGUE_FILE
    if not yaml_file.is_file():
        raise ConfigError(f"scene.assets: {folder}: has no {CATALOGUE_FILE}")
    _inside(yaml_file, root, yaml_file)
    catalogue = load_yaml_model(yaml_file, CatalogueFile, "asset field", ConfigError)
    items = []
    for i, entry in enumerate(catalogue.assets):
        where = f"{yaml_file}: assets.{i}"
        path = folder / entry.file
        if not path.is_file():
            raise ConfigError(f"{where}.file: {entry.file!r} is not a file in {folder}")
        _inside(path, root, f"{where}.file")
        items.append(CatalogueItem(entry, path, where))
    return items


def _inside(path: Path, root: Path, where: object) -> None:
    """Refuse `path` when it resolves (links followed) outside the folder `root`."""
    if not path.resolve().is_relative_to(root):
        raise ConfigError(f"{where}: {path} leads out of the catalogue folder {root}")
