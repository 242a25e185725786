"""Navbench plots: for each world, adversity level and trial, every method's path over that
trial's floor plan (the ground-truth free space for the robot), with the start and the goal."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from twinsim.navigation.bench import NavBenchSpec, NavTrial, trial_result


def write_path_plots(out: Path, spec: NavBenchSpec) -> dict[str, Path]:
    """One PNG per world × adversity × trial under `plots/`; name → path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = out / "plots"
    folder.mkdir(exist_ok=True)
    files: dict[str, Path] = {}
    for world in spec.worlds:
        for level in spec.adversity:
            for index in range(spec.trials):
                trials = [NavTrial(m, world, level, index) for m in spec.methods]
                done = [t for t in trials if trial_result(t.folder(out)) is not None]
                if not done:
                    continue
                fig, axes = plt.subplots(figsize=(6, 5))
                floor = np.load(done[0].folder(out) / "floor.npz")
                ny, nx = floor["free"].shape
                x0, y0 = floor["origin"]
                cell = float(floor["cell_m"])
                extent = (x0, x0 + nx * cell, y0, y0 + ny * cell)
                axes.imshow(floor["free"], origin="lower", extent=extent, cmap="Greys_r", alpha=0.5)
                for trial in done:
                    path = np.loadtxt(
                        trial.folder(out) / "path.csv", delimiter=",", skiprows=1, ndmin=2
                    )
                    axes.plot(path[:, 0], path[:, 1], lw=1.5, label=trial.method)
                axes.plot(*floor["start"], "go", label="start")
                axes.plot(*floor["goal"], "r*", ms=12, label="goal")
                axes.set(xlabel="x [m]", ylabel="y [m]", title=f"{world} · {level} · trial {index}")
                axes.set_aspect("equal")
                axes.legend(fontsize=8)
                name = f"{world}_{level}_trial{index:02d}.png"
                tmp = folder / f".{name}.tmp.png"
                fig.savefig(tmp, dpi=100)
                plt.close(fig)
                tmp.replace(folder / name)
                files[f"plots/{name}"] = folder / name
    return files
