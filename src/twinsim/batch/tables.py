"""A dataset's benchmark results in CARLA-Loc's table layout (`bench.table: carla_loc`).

CARLA-Loc reports, per map, the absolute position error (APE RMSE, m) of every method on six
sequences: Clear Noon, Foggy Noon and Rainy Night, each static `(s)` and dynamic `(d)` (its
Table IV), and for the LiDAR methods raw static, `seg` dynamic (the points of dynamic objects
removed by their labels) and raw dynamic (its Table V). Here a map is a run's cell, a
sequence's condition follows from its twin's variations (the run itself: CN(d); `static`:
(s); fog: FN; rain under the night light preset: RN; any other change: not a CARLA-Loc
condition, left out), a cell is the mean ATE RMSE over a method's trials that succeeded, and
`fail` where none did; `seg (d)` is a method's `_static` variant (e.g. `kiss_icp_static`, which
drops the points of dynamic instances) on CN(d).
"""

from __future__ import annotations

CONDITIONS = ("CN(s)", "CN(d)", "FN(s)", "FN(d)", "RN(s)", "RN(d)")
LIDAR_LEVELS = ("raw (s)", "seg (d)", "raw (d)")
TABLES_FILE = "carla_loc_tables.md"
_SEG_SUFFIX = "_static"


def condition(variations: dict | None) -> str | None:
    """CARLA-Loc's name for a sequence: None (the run itself) is CN(d); a twin's variations
    name its weather and dynamic level, or None when they are not one of CARLA-Loc's."""
    v = variations or {}
    preset = (v.get("light") or {}).get("preset")
    weathered = {key for key in ("fog", "rain", "snow", "smoke") if v.get(key)}
    others = {
        key
        for key in ("remove_classes", "remove_instances", "add_people", "add_flying_objects")
        if v.get(key)
    }
    if others or v.get("sensors") or v.get("stereo") or v.get("materials_seed") is not None:
        return None
    if v.get("adversity") not in (None, "none"):
        return None
    if weathered == {"fog"} and preset in (None, "day"):
        weather = "FN"
    elif weathered == {"rain"} and preset == "night":
        weather = "RN"
    elif not weathered and preset in (None, "day"):
        weather = "CN"
    else:
        return None
    return f"{weather}({'s' if v.get('static') else 'd'})"


def _cell(result: dict | None) -> str:
    if result is None:
        return "-"
    ate = result.get("ate_rmse_mean")
    return "fail" if ate is None else f"{ate:.2f}"


def carla_loc_tables(jobs: dict[str, dict], twins: dict[str, dict]) -> str:
    """Markdown of both tables from a manifest's jobs (bench results of finished jobs) and
    the plan's twins (name → variations)."""
    results: dict[tuple[str, str, str], dict] = {}  # (map, condition, method) → result
    methods: list[str] = []
    for job in jobs.values():
        if job["type"] != "bench" or job.get("status") != "done":
            continue
        seq = job["deps"][0]
        kind, cell, *twin = seq.split("/")
        if kind == "noise":
            continue
        name = condition(twins[twin[0]] if kind == "twins" else None)
        if name is None:
            continue
        method = job["id"].rsplit("/", 1)[1]
        if method not in methods:
            methods.append(method)
        results[(cell, name, method)] = job.get("result", {})
    maps = sorted({cell for cell, _, _ in results})
    lines = ["## Absolute position error (APE RMSE, m), CARLA-Loc's Table IV layout", ""]
    lines += ["| map | sequence | " + " | ".join(methods) + " |"]
    lines += ["|---|---|" + "---|" * len(methods)]
    for cell in maps:
        for k, name in enumerate(CONDITIONS):
            row = [_cell(results.get((cell, name, m))) for m in methods]
            lines.append(f"| {cell if k == 0 else ''} | {name} | " + " | ".join(row) + " |")
    lidar = [m for m in methods if f"{m}{_SEG_SUFFIX}" in methods]
    if lidar:
        lines += ["", "## LiDAR methods by dynamic level (APE RMSE, m), CARLA-Loc's Table V", ""]
        lines += ["| map | dynamic level | " + " | ".join(lidar) + " |"]
        lines += ["|---|---|" + "---|" * len(lidar)]
        for cell in maps:
            for k, level in enumerate(LIDAR_LEVELS):
                row = []
                for m in lidar:
                    method, name = {
                        "raw (s)": (m, "CN(s)"),
                        "seg (d)": (f"{m}{_SEG_SUFFIX}", "CN(d)"),
                        "raw (d)": (m, "CN(d)"),
                    }[level]
                    row.append(_cell(results.get((cell, name, method))))
                lines.append(f"| {cell if k == 0 else ''} | {level} | " + " | ".join(row) + " |")
    lines += ["", "CN, FN, RN: Clear Noon, Foggy Noon, Rainy Night; (s) static, (d) dynamic; "]
    lines[-1] += f"seg (d): the method's `{_SEG_SUFFIX}` variant on CN(d); fail: no trial tracked."
    return "\n".join(lines) + "\n"
