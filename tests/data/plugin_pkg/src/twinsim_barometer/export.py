"""The `pressure_csv` export format: every barometer stream as `t_s,pressure_pa` lines."""

from __future__ import annotations

from pathlib import Path

from twinsim.export.registry import ExportFormat


def export_pressure_csv(seq, out: Path, *, progress) -> Path:
    out.mkdir(parents=True)
    names = [n for n, s in seq.metadata["streams"].items() if s.get("type") == "barometer"]
    for name in names:
        table = seq.table(name)
        pairs = zip(table["t_ns"].tolist(), table["pressure_pa"].tolist(), strict=True)
        rows = [f"{t * 1e-9:.9f},{p!r}" for t, p in pairs]
        (out / f"{name}.csv").write_text("t_s,pressure_pa\n" + "\n".join(rows) + "\n")
        progress(names.index(name) + 1, len(names))
    return out


PRESSURE_CSV = ExportFormat(
    "pressure_csv", "twinsim_barometer.export:export_pressure_csv", "barometer streams as CSV"
)
