"""The navbench report: every trial's row (`results.csv`), Unreal Robotics Lab's Table I per
world and adversity level (`table.csv`, `table.md`, `table.tex`), and the methods' paths over
each trial's floor plan (`plots/`).

Table I's columns: success rate (%), collisions (mean per episode), time to goal (mean over
the successful episodes, s), goal distance (mean geodesic distance left at the end, m) and
SC = (1/N) Σ Sᵢ / (1 + cᵢ), and the episodes: how many ended without reaching the goal
(failed) and, apart from them, how many crashed (the method raised, the world could not be
built or the trial's process died). A crashed trial counts as unsuccessful in SR and SC, with no
other value. With a localizer other than the ground truth, the table adds the estimator's mean
final drift (m).
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from twinsim.atomic import write_text_atomic
from twinsim.eval.report import latex_escape
from twinsim.navigation.bench import NavBenchSpec, NavTrial, trial_result

#: Table I: key, header, LaTeX header, decimals
TABLE_COLUMNS = (
    ("success_rate", "SR %", r"SR\,\%", 0),
    ("collisions", "Collisions", "Coll.", 2),
    ("time_to_goal", "Time to goal s", "TTG [s]", 1),
    ("goal_distance", "Goal distance m", "GD [m]", 2),
    ("sc", "SC", "SC", 2),
)
RESULT_FIELDS = (
    "method", "world", "adversity", "trial", "seed", "ok", "success", "collisions",
    "time_to_goal_s", "distance_to_goal_m", "geodesic_start_m", "path_length_m", "spl", "sc",
    "ended_by", "drift_m", "ate_rmse_m",
)  # fmt: skip
#: the drift column, shown when the methods localised with an estimator
DRIFT_COLUMN = ("drift", "Drift m", "Drift [m]", 2)


def _row(trial: NavTrial, spec: NavBenchSpec, result: dict | None) -> dict:
    row = {"method": trial.method, "world": trial.world, "adversity": trial.adversity}
    row |= {"trial": trial.index, "seed": spec.seed + trial.index, "ok": result is not None}
    m = (result or {}).get("metrics", {})
    row |= {
        "success": m.get("success"),
        "collisions": m.get("collisions"),
        "time_to_goal_s": m.get("time_to_goal"),
        "distance_to_goal_m": m.get("distance_to_goal"),
        "geodesic_start_m": (result or {}).get("geodesic_start_m"),
        "path_length_m": m.get("path_length"),
        "spl": m.get("spl"),
        "sc": m.get("sc"),
        "ended_by": (result or {}).get("ended_by", ""),
    }
    drift = (result or {}).get("localization") or {}
    row |= {"drift_m": drift.get("drift_m"), "ate_rmse_m": drift.get("ate_rmse_m")}
    return row


def _mean(values) -> float:
    values = [float(v) for v in values if v is not None]
    return float(np.mean(values)) if values else math.nan


def aggregate(rows: list[dict]) -> dict[tuple[str, str, str], dict]:
    """(method, world, adversity) → Table I's values, the episode count, the failed episodes
    and the crashed trials."""
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["method"], row["world"], row["adversity"]), []).append(row)
    table = {}
    for key, group in groups.items():
        ok = [r for r in group if r["ok"]]
        wins = [r for r in ok if r["success"]]
        table[key] = {
            "success_rate": 100.0 * len(wins) / len(group),
            "collisions": _mean(r["collisions"] for r in ok),
            "time_to_goal": _mean(r["time_to_goal_s"] for r in wins),
            "goal_distance": _mean(r["distance_to_goal_m"] for r in ok),
            "sc": sum(float(r["sc"] or 0.0) for r in ok) / len(group),
            "drift": _mean(r["drift_m"] for r in ok),
            "episodes": len(group),
            "failed": len(ok) - len(wins),
            "crashed": len(group) - len(ok),
        }
    return table


def _fmt(value: float, decimals: int) -> str:
    return "—" if math.isnan(value) else f"{value:.{decimals}f}"


def table_columns(spec: NavBenchSpec) -> tuple[tuple[str, str, str, int], ...]:
    """Table I's columns for `spec`: the drift's too when it localised with an estimator."""
    from twinsim.navigation.localization import GROUND_TRUTH

    return TABLE_COLUMNS + ((DRIFT_COLUMN,) if spec.localization != GROUND_TRUTH else ())


def write_navbench_report(out: Path, spec: NavBenchSpec) -> dict[str, Path]:
    """Write table.csv, table.md, table.tex, the path plots and results.csv last (the mark of
    a finished report); name → path."""
    trials = spec.trials_list()
    rows = [_row(t, spec, trial_result(t.folder(out))) for t in trials]
    table = aggregate(rows)
    keys = [(m, w, a) for w in spec.worlds for a in spec.adversity for m in spec.methods]
    files: dict[str, Path] = {}
    flat = [
        {
            "world": w,
            "adversity": a,
            "method": m,
            **{k: table[(m, w, a)][k] for k in table[(m, w, a)]},
        }
        for m, w, a in keys
    ]
    shown = table_columns(spec)
    columns = (
        "world", "adversity", "method", *(c[0] for c in shown), "episodes", "failed", "crashed"
    )  # fmt: skip
    files["table.csv"] = _csv(out / "table.csv", columns, flat)
    files["table.md"] = _markdown(out / "table.md", keys, table, spec)
    files["table.tex"] = _latex(out / "table.tex", keys, table, spec)
    from twinsim.navigation.bench_plots import write_path_plots

    files.update(write_path_plots(out, spec))
    files["results.csv"] = _csv(out / "results.csv", RESULT_FIELDS, rows)
    return files


def _csv(path: Path, columns, rows: list[dict]) -> Path:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in columns})
    write_text_atomic(path, buffer.getvalue())
    return path


def _markdown(path: Path, keys, table, spec: NavBenchSpec) -> Path:
    shown = table_columns(spec)
    header = ["World", "Adversity", "Method", *(c[1] for c in shown), "Episodes"]
    lines = [
        f"twinsim navbench: {spec.robot}, {spec.trials} trials, {spec.duration_s:g} s limit, "
        f"goals {spec.goal_m[0]:g}–{spec.goal_m[1]:g} m geodesic, localised by "
        f"{spec.localization}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for m, w, a in keys:
        entry = table[(m, w, a)]
        cells = [w, a, m, *(_fmt(entry[k], d) for k, _, _, d in shown)]
        lines.append("| " + " | ".join(cells) + f" | {_episodes(entry)} |")
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path


def _episodes(entry: dict) -> str:
    """The episode count, with how many failed and crashed: `5 (2 failed, 1 crashed)`."""
    parts = [f"{entry[k]} {k}" for k in ("failed", "crashed") if entry[k]]
    return f"{entry['episodes']}" + (f" ({', '.join(parts)})" if parts else "")


def _latex(path: Path, keys, table, spec: NavBenchSpec) -> Path:
    shown = table_columns(spec)
    lines = [
        rf"% twinsim navbench: {spec.robot}, {spec.trials} trials per cell (needs booktabs)",
        r"\begin{tabular}{lll" + "r" * len(shown) + "}",
        r"\toprule",
        "World & Adversity & Method & " + " & ".join(c[2] for c in shown) + r" \\",
        r"\midrule",
    ]
    for m, w, a in keys:
        entry = table[(m, w, a)]
        values = [_fmt(entry[k], d).replace("—", "--") for k, _, _, d in shown]
        lines.append(" & ".join([latex_escape(w), a, latex_escape(m), *values]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    write_text_atomic(path, "\n".join(lines) + "\n")
    return path
