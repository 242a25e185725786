"""Report plots: trajectory overlays, ATE over time, and box plots of ATE over trials."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from twinsim.eval.io import read_sequence


def write_plots(results, seqs: dict[str, Path], methods: dict, folder: Path) -> dict[str, Path]:
    """One overlay and one error-over-time figure per sequence (each method's first successful
    trial) and one box plot of ATE over all trials; returns name → path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    by_method = {m.name: m for m in methods.values()}
    for seq_name, seq_path in seqs.items():
        firsts = {}
        for r in results:
            if r.trial.sequence == seq_name and r.evaluation is not None:
                firsts.setdefault(r.trial.method, r.evaluation)
        overlay, axes = plt.subplots(figsize=(6, 5))
        for stream in sorted(_target_streams(by_method, seq_path)):
            gt = read_sequence(seq_path, stream)
            axes.plot(gt.xyz[:, 0], gt.xyz[:, 1], "k-", lw=2, label=f"ground truth ({stream})")
        for method, ev in firsts.items():
            axes.plot(ev.est_aligned_xyz[:, 0], ev.est_aligned_xyz[:, 1], lw=1, label=method)
        axes.set(xlabel="x [m]", ylabel="y [m]", title=f"{seq_name}: trajectories (top view)")
        axes.set_aspect("equal", adjustable="datalim")
        axes.legend(fontsize=8)
        name = f"{seq_name}_trajectories.png"
        files[f"plots/{name}"] = _save(overlay, folder / name)

        errors, axes = plt.subplots(figsize=(7, 3.5))
        for method, ev in firsts.items():
            axes.plot(ev.t_s - ev.t_s[0], ev.ate_errors, lw=1, label=method)
        axes.set(xlabel="time [s]", ylabel="position error [m]", title=f"{seq_name}: ATE")
        if firsts:
            axes.legend(fontsize=8)
        name = f"{seq_name}_ate_over_time.png"
        files[f"plots/{name}"] = _save(errors, folder / name)

    box, axes = plt.subplots(figsize=(max(5, 1.2 * len(seqs) * len(by_method)), 4))
    data, labels = [], []
    for seq_name in seqs:
        for method in by_method:
            values = [
                r.evaluation.ate_rmse
                for r in results
                if r.trial.sequence == seq_name and r.trial.method == method and r.evaluation
            ]
            data.append([v for v in values if not math.isnan(v)] or [np.nan])
            labels.append(f"{method}\n{seq_name}")
    axes.boxplot(data)
    axes.set_xticks(range(1, len(labels) + 1), labels, fontsize=7, rotation=30, ha="right")
    axes.set(ylabel="ATE RMSE [m]", title="ATE over trials")
    files["plots/ate_boxplot.png"] = _save(box, folder / "ate_boxplot.png")
    return files


def _target_streams(methods: dict, seq_path: Path) -> set[str]:
    """Ground-truth streams the methods estimate on this sequence (skipping ones that cannot
    run on it)."""
    from twinsim.errors import TwinsimError
    from twinsim.sequence import open_sequence

    seq = open_sequence(seq_path)
    streams = set()
    for method in methods.values():
        try:
            streams.add(method.target_stream(seq))
        except TwinsimError:
            continue
    return streams


def _save(figure, path: Path) -> Path:
    import matplotlib.pyplot as plt

    figure.tight_layout()
    figure.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(figure)
    return path
