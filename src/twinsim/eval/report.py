"""The benchmark report: results.csv, GRADE-style Markdown and LaTeX tables, and plots."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from twinsim.eval.metrics import SUMMARY_KEYS

#: Table columns per method: (key, Markdown header, LaTeX header, decimals).
TABLE_METRICS = (
    ("ate_rmse", "ATE [m]", "ATE", 3),
    ("rpe_trans_rmse", "RPE [m]", r"RPE\textsubscript{t}", 4),
    ("rpe_rot_rmse", "RPE [°]", r"RPE\textsubscript{r}", 3),
    ("tracking_rate", "TR", "TR", 3),
    ("coverage", "Cov.", "Cov.", 3),
    ("scaled_ate", "sATE [m]", "sATE", 3),
)
CSV_COLUMNS = (
    "method",
    "sequence",
    "trial",
    "ok",
    *SUMMARY_KEYS,
    "alignment",
    "wall_s",
    "error",
    "notes",
)
ALIGNMENT_NAMES = {"se3": "SE(3)", "sim3": "Sim(3)"}


def write_report(report, seqs: dict[str, Path], methods: dict) -> dict[str, Path]:
    """Write every report file into `report.out`, `results.csv` last (the mark of a finished
    report: a bench killed while writing the rest leaves none); returns name → path."""
    out = report.out
    files = {}
    stats = aggregate(report.results)
    alignments = {m.name: m.alignment for m in methods.values()}
    names = list(alignments)
    files["table.md"] = _write_markdown(stats, names, list(seqs), alignments, out / "table.md")
    files["table.tex"] = _write_latex(stats, names, list(seqs), alignments, out / "table.tex")
    from twinsim.eval.plots import write_plots

    for name, path in write_plots(report.results, seqs, methods, out / "plots").items():
        files[name] = path
    files["results.csv"] = _write_csv(report.results, out / "results.csv")
    return files


def trial_value(result, key: str) -> float:
    """A metric of one trial; a failed trial tracked nothing (TR 0) and has no other value."""
    if result.evaluation is None:
        return 0.0 if key == "tracking_rate" else math.nan
    return float(getattr(result.evaluation, key))


def aggregate(results) -> dict[tuple[str, str], dict]:
    """(method, sequence) → {metric: (mean, std)} over trials, plus trial and failure counts.

    Means and population standard deviations skip NaN (failed trials) except for TR, where a
    failed trial counts as 0.
    """
    groups: dict[tuple[str, str], list] = {}
    for result in results:
        groups.setdefault((result.trial.method, result.trial.sequence), []).append(result)
    stats = {}
    for key, group in groups.items():
        entry: dict = {"trials": len(group), "failed": sum(not r.ok for r in group)}
        for metric, *_ in TABLE_METRICS:
            values = np.array([trial_value(r, metric) for r in group])
            values = values[~np.isnan(values)]
            entry[metric] = (
                (float(values.mean()), float(values.std())) if len(values) else (math.nan, math.nan)
            )
        stats[key] = entry
    return stats


def _write_csv(results, path: Path) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for r in results:
            summary = r.evaluation.summary() if r.evaluation is not None else {}
            metrics = [_cell(summary.get(k)) for k in SUMMARY_KEYS]
            if r.evaluation is None:
                metrics[SUMMARY_KEYS.index("tracking_rate")] = "0.0"
            writer.writerow(
                [
                    r.trial.method,
                    r.trial.sequence,
                    r.trial.index,
                    int(r.ok),
                    *metrics,
                    summary.get("alignment", ""),
                    _cell(r.wall_s),
                    r.error.replace("\n", " "),
                    " | ".join(summary.get("notes", [])).replace("\n", " "),
                ]
            )
    return path


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _fmt(value: float, decimals: int) -> str:
    return "—" if math.isnan(value) else f"{value:.{decimals}f}"


def _write_markdown(stats, methods, seqs, alignments: dict[str, str], path: Path) -> Path:
    """GRADE Tables 9–11 with Unreal Robotics Lab's coverage and scaled ATE: a row of means and
    a row of stds per sequence, metric columns per method."""
    header = ["sequence", ""] + [f"{m} {h}" for m in methods for _, h, _, _ in TABLE_METRICS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for seq in seqs:
        for row, which in (("mean", 0), ("std", 1)):
            cells = [seq if which == 0 else "", row]
            for method in methods:
                entry = stats.get((method, seq))
                for key, _, _, decimals in TABLE_METRICS:
                    cells.append(_fmt(entry[key][which], decimals) if entry else "—")
            lines.append("| " + " | ".join(cells) + " |")
    trials = max((e["trials"] for e in stats.values()), default=0)
    by_alignment = {
        ALIGNMENT_NAMES[kind]: [m for m in methods if alignments[m] == kind]
        for kind in ALIGNMENT_NAMES
    }
    aligned = "; ".join(f"{kind}: {', '.join(ms)}" for kind, ms in by_alignment.items() if ms)
    lines += [
        "",
        f"Mean and standard deviation over {trials} trials. ATE: RMSE after Umeyama alignment "
        f"({aligned}); RPE: RMSE over consecutive frames (translation, rotation); TR: GRADE's "
        "tracking rate (a failed trial counts as TR 0 and has no other value); Cov.: aligned "
        "estimate path length ÷ ground-truth path length and sATE: ATE ÷ coverage (Unreal "
        "Robotics Lab).",
    ]
    failures = [
        f"- {m} on {s}: {e['failed']} of {e['trials']} trials failed"
        for (m, s), e in stats.items()
        if e["failed"]
    ]
    if failures:
        lines += ["", "Failed trials (see each trial's log.txt):", *failures]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _write_latex(stats, methods, seqs, alignments: dict[str, str], path: Path) -> Path:
    """The same table for a paper: booktabs, one multicolumn group per method."""
    n = len(TABLE_METRICS)
    escape = latex_escape
    lines = [
        r"% twinsim bench: mean and std over trials (needs \usepackage{booktabs}); "
        + "; ".join(f"{m}: {ALIGNMENT_NAMES[alignments[m]]} alignment" for m in methods),
        r"\begin{tabular}{ll" + "r" * (n * len(methods)) + "}",
        r"\toprule",
        " & & " + " & ".join(rf"\multicolumn{{{n}}}{{c}}{{{escape(m)}}}" for m in methods) + r" \\",
        " ".join(rf"\cmidrule(lr){{{3 + i * n}-{2 + (i + 1) * n}}}" for i in range(len(methods))),
        "Sequence & & " + " & ".join(t for _ in methods for _, _, t, _ in TABLE_METRICS) + r" \\",
        r"\midrule",
    ]
    for seq in seqs:
        for row, which in (("mean", 0), ("std", 1)):
            cells = [escape(seq) if which == 0 else "", row]
            for method in methods:
                entry = stats.get((method, seq))
                for key, _, _, decimals in TABLE_METRICS:
                    value = _fmt(entry[key][which], decimals) if entry else "—"
                    cells.append("--" if value == "—" else value)
            lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def latex_escape(text: str) -> str:
    special = {
        "\\": r"\textbackslash{}",
        "_": r"\_",
        "&": r"\&",
        "%": r"\%",
        "#": r"\#",
        "$": r"\$",
        "{": r"\{",
        "}": r"\}",
    }
    return "".join(special.get(char, char) for char in text)
