"""A bad-input and fault sweep of the CLI: bad configs, truncated and garbled files of every kind
a sequence holds, kills at several points of every writing command, a full disk, and the
hostile classes of `faults/` (links and FIFOs, two writers at once, hostile `serve`
clients, deep nesting, sizes and encodings, extreme seeds, a tampered run resumed).

Each case runs one `twinsim` command (in process, through typer's runner, or as a process with
a timeout) and is classed (`faults/cases.py`): `refused` (exit 2, one line, no traceback), `ok`
(exit 0 where the input is fine), `traceback` (any other exit or a traceback), `silent` (exit
0 on input that is broken, or an output folder that looks complete and is not), `hang` (no
exit or no reply within a timeout) or `escape` (anything written, changed or deleted outside
the command's output folder: through a link, in the source sequence, in the working
directory). The sweep and its commands run in empty working directories of their own. The
sweep passes when there are no tracebacks, silent successes, hangs or escapes. It prints the
counts per class and every failing case, and writes JSON.

Usage: python scripts/fault_sweep.py [--work DIR] [--json PATH] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from faults.cases import (
    FAILING,
    TIMEOUT_S,
    TWINSIM,
    Case,
    classify,
    differences,
    digest,
    invoke,
    remove,
    sandbox_leftovers,
    use_sandbox,
)
from faults.concurrent import sweep_concurrent
from faults.links import sweep_links
from faults.nesting import sweep_nesting
from faults.seeds import sweep_seeds
from faults.serve import sweep_serve
from faults.sizes import sweep_sizes
from faults.tamper import sweep_tamper

#: a tiny world with every stream kind: camera, IMU, LiDAR, event camera, people, flying objects
SEQUENCE_SETS = (
    "people.count=2",
    "flying_objects.count=1",
    "lidars.lidar0.model=vlp-16",
    "lidars.lidar0.columns=90",
    "event_cameras.ev0.width=32",
    "event_cameras.ev0.height=24",
    "event_cameras.ev0.rate_hz=120",
)
BAD_SETS = (
    "sim.duration_s=[1,2",
    "sim.duration_s='",
    "sim.duration_s=!!python/object:os.system",
    "sim.duration_s=-1",
    "sim.duration_s=inf",
    "sim.duration_s=0.001",
    "sim.physics_hz=0",
    "sim.physics_hz=7",
    "seed=-3",
    "nonsense.key=1",
    "sensors.cam0.width=0",
    "sensors.cam0.width=100000",
    "sensors.cam0.near_m=50",
    "sensors.cam0.rate_hz=7",
    "sensors.cam0.rate_hz=0",
    "sensors.imu0.rate_hz=200",
    "lidars.lidar0.min_range_m=500",
    "lidars.lidar0.model=nope",
    "cameras.a/b.kind=camera",
    "cameras.metadata.json.kind=camera",
    "sensors.odometry.kind=imu",
    "people.count=-1",
    "people.count=100000",
    "robot.kind=teleporter",
    "robot.path=/nonexistent.xml",
    "scene.generator=moon",
    "render.backend=vulkan",
    "output.checkpoint_s=-1",
    "output.rgb_png_level=12",
    "=1",
    "noequals",
)
#: per command: the arguments after the sequence path, and whether it writes a folder
READERS: dict[str, tuple[list[str], bool]] = {
    "validate": ([], False),
    "info": ([], False),
    "preview": (["--out", "{out}.png"], False),
    "noise": (["--profile", "rotors-default", "--out", "{out}"], True),
    "export-tum": (["--format", "tum", "--out", "{out}"], True),
    "export-euroc": (["--format", "euroc", "--out", "{out}"], True),
    "export-kitti": (["--format", "kitti", "--out", "{out}"], True),
    "export-rosbag2": (["--format", "rosbag2", "--out", "{out}"], True),
    "export-rosbag1": (["--format", "rosbag1", "--out", "{out}"], True),
    "export-coco": (["--format", "coco", "--out", "{out}"], True),
    "export-yolo": (["--format", "yolo", "--out", "{out}"], True),
    "dsg": (["--out", "{out}.json", "--no-mesh"], False),
    "replay": (["--out", "{out}"], True),
}
MUTATIONS = ("truncate", "empty", "flip", "delete", "junk")


def sweep_configs(work: Path) -> list[Case]:
    """`run` with each bad override, and bad config files and output folders."""
    cases = []
    for i, assignment in enumerate(BAD_SETS):
        out = work / f"cfg{i}"
        result = invoke(["run", "--config", "tiny", "--set", assignment, "--out", str(out)])
        outcome, detail = classify(result, broken=True)
        leftover = out.exists() and any(out.iterdir())
        if leftover and outcome == "refused":
            outcome, detail = "silent", f"refused but left {sorted(os.listdir(out))[:3]}"
        cases.append(Case("config", assignment, outcome, detail))
    files = {
        "not-utf8.yaml": b"\xff\xfe\x00bad",
        "malformed.yaml": b"sim: [1, 2\n",
        "list.yaml": b"- 1\n- 2\n",
        "unknown.yaml": b"extends: tiny\nwat: 1\n",
        "extends-loop.yaml": b"extends: extends-loop.yaml\n",
    }
    for name, content in files.items():
        path = work / name
        path.write_bytes(content)
        result = invoke(["run", "--config", str(path), "--out", str(work / f"out-{name}")])
        cases.append(Case("config", name, *classify(result, broken=True)))
    outs = {"300-char name": work / ("x" * 300), "a file": work / "not-utf8.yaml"}
    for name, out in outs.items():
        result = invoke(["run", "--config", "tiny", "--out", str(out)])
        cases.append(Case("config", f"--out {name}", *classify(result, broken=True)))
    for option in (["--seed", "-1"], ["--duration", "-5"], ["--duration", "nan"]):
        result = invoke(["run", "--config", "tiny", *option, "--out", str(work / "o")])
        cases.append(Case("config", " ".join(option), *classify(result, broken=True)))
    return cases


def targets(seq: Path) -> list[Path]:
    """One file of every kind in every stream (first frame, first sweep, tables, indexes)."""
    picked: dict[tuple[str, str], Path] = {}
    for path in sorted(seq.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(seq)
        key = (rel.parts[0] if len(rel.parts) > 1 else "", "/".join(rel.parts[1:-1]) + path.suffix)
        picked.setdefault(key, path)
    return list(picked.values())


def mutate(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "flip":
        i = len(data) * 2 // 3
        path.write_bytes(data[:i] + bytes([data[i] ^ 0x5A]) + data[i + 1 :] if data else b"x")
    elif how == "delete":
        path.unlink()
    elif how == "junk":
        path.write_bytes(data + b"\x00garbage,1,2\n")


def sweep_sequences(seq: Path, work: Path, quick: bool) -> list[Case]:
    """Every reader on a copy of `seq` with one file mutated, for each file kind and mutation."""
    cases = []
    commands = list(READERS) if not quick else ["validate", "info", "export-tum", "noise"]
    for n, target in enumerate(targets(seq)):
        rel = target.relative_to(seq).as_posix()
        for how in MUTATIONS:
            copy = work / f"seq{n}-{how}"
            shutil.copytree(seq, copy)
            mutate(copy / rel, how)
            for command in commands:
                args, _ = READERS[command]
                out = work / f"out{n}-{how}-{command}"
                verb = ["export"] if command.startswith("export") else [command]
                filled = [a.replace("{out}", str(out)) for a in args]
                result = invoke([*verb, str(copy), *filled])
                outcome, detail = classify(result, broken=True)
                if outcome == "silent" and command == "info":
                    outcome = "ok"  # info summarises what is there, broken or not
                cases.append(Case(f"file:{command}", f"{rel} {how}", outcome, detail))
                remove(out, out.with_suffix(".png"), out.with_suffix(".json"))
            shutil.rmtree(copy)
    return cases


def looks_complete(out: Path) -> bool:
    """Whether an output a killed command left looks like a finished one."""
    if not out.exists():
        return False
    if out.is_file():
        return True
    if (out / "metadata.json").exists() or (out / "INCOMPLETE").exists():
        return not (out / "INCOMPLETE").exists()
    return any(out.iterdir()) and not any(p.name.startswith(".") for p in out.iterdir())


#: commands whose report folder is finished when it holds this file, and that a second run of
#: the same command resumes
RESUMED = {"bench": "results.csv", "navbench": "results.csv"}
#: where each command is killed, as fractions of its unkilled wall time
KILL_AT = (0.2, 0.45, 0.7, 0.9)
BENCH = ("bench", "--methods", "rgbd_odometry", "--trials", "2", "--workers", "1")
NAVBENCH = (
    *("navbench", "--methods", "planner", "--worlds", "apartment", "--adversity", "none"),
    *("--trials", "2", "--workers", "1", "--duration", "4", "--preset", "tiny"),
)


def sweep_kills(seq: Path, work: Path) -> list[Case]:
    """Each writing command killed (SIGKILL) at four points of its run: nothing may look
    complete (unless it is byte for byte an unkilled run's), and a
    run or a bench killed midway is finished by running again (`run --resume`, bench resume)
    without losing or redoing what was done."""
    cases = []
    commands = {
        "run": ["run", "--config", "tiny", "--set", "output.checkpoint_s=0.2", "--out", "{out}"],
        **{
            name: ["export" if name.startswith("export") else name, str(seq), *args]
            for name, (args, writes) in READERS.items()
            if writes
        },
        "dsg": ["dsg", str(seq), "--out", "{out}.json"],
        "bench": [*BENCH, "--sequences", str(seq), "--out", "{out}"],
        "navbench": [*NAVBENCH, "--out", "{out}"],
    }
    for name, template in commands.items():
        whole = _reference(name, template, work)
        for fraction in KILL_AT:
            delay = round(fraction * whole, 2)
            out = work / f"kill-{name}-{fraction}"
            args = [a.replace("{out}", str(out)) for a in template]
            proc = subprocess.Popen(
                [str(TWINSIM), *args],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            time.sleep(delay)
            finished = proc.poll() is not None
            if not finished:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            label = f"{name} @{fraction:.0%} ({delay}s)"
            if finished:
                outcome = {0: "ok", 2: "refused"}.get(proc.returncode, "traceback")
                cases.append(Case("kill", label, outcome, f"finished first ({proc.returncode})"))
                remove(out, out.with_suffix(".json"))
                continue
            if name in RESUMED:  # its last file: present only once the report is whole
                whole_report = (out / RESUMED[name]).exists()
                outcome, detail = ("ok", "finished") if whole_report else ("refused", "")
            else:
                outcome, detail = _killed_output(name, args, out, work)
            cases.append(Case("kill", label, outcome, detail))
            if name == "run" or name in RESUMED:
                cases.append(_finish_again(name, args, out, label))
            remove(out, out.with_suffix(".json"))
    return cases


def _reference(name: str, template: list[str], work: Path) -> float:
    """Run the command once unkilled into `ref-<name>`: its output (what a kill that came
    just after it finished must match) and its wall time (where the kills go)."""
    reference = work / f"ref-{name}"
    args = [a.replace("{out}", str(reference)) for a in template]
    start = time.perf_counter()
    subprocess.run([str(TWINSIM), *args], capture_output=True, check=True, timeout=900)
    return time.perf_counter() - start


def _killed_output(name: str, args: list[str], out: Path, work: Path) -> tuple[str, str]:
    """A killed command's output: absent or marked partial (refused), or, where it looks
    complete (the kill came just after it finished), byte-identical to an unkilled run's."""
    target = next((t for t in (out, out.with_suffix(".json")) if t.exists()), None)
    if target is None or not looks_complete(target):
        return "refused", ""
    reference = work / f"ref-{name}"
    ref = next(t for t in (reference, reference.with_suffix(".json")) if t.exists())
    if digest(target) == digest(ref):
        return "ok", "finished just before the kill"
    return "silent", "looks complete but differs from an unkilled run"


def _finish_again(name: str, args: list[str], out: Path, label: str) -> Case:
    """Run a killed run or bench again: it must finish, and a resumed run must validate."""
    if name == "run":
        again = ["run", "--resume", str(out)] if (out / "resume.npz").exists() else None
        if again is None:  # killed before its first checkpoint: only a new run can follow
            return Case("resume", label, "ok", "no checkpoint yet")
    else:
        again = args
    try:
        done = subprocess.run(
            [str(TWINSIM), *again], capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        return Case("resume", label, "hang", f"no exit within {TIMEOUT_S} s")
    if done.returncode != 0 or "Traceback" in done.stderr:
        return Case("resume", label, "traceback", done.stderr.strip()[-200:])
    if name == "run":
        valid = invoke(["validate", str(out)]).exit_code == 0
        return Case("resume", label, "ok" if valid else "silent", "" if valid else "invalid")
    complete = (out / RESUMED[name]).exists()
    return Case("resume", label, "ok" if complete else "silent", "" if complete else "no report")


def sweep_full_disk(seq: Path, work: Path) -> list[Case]:
    """Writing commands (the real `twinsim` script) into a tmpfs a filler has filled: a
    one-line error, exit 2, and nothing that looks complete."""
    mount = work / "full"
    mount.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True
    )
    if mounted.returncode != 0:
        return [Case("disk", "tmpfs", "skipped", mounted.stderr.decode().strip()[:120])]
    cases = []
    try:
        runs = {
            "run": ["run", "--config", "tiny", "--out", "{out}"],
            "noise": ["noise", str(seq), "--profile", "rotors-default", "--out", "{out}"],
            "export-rosbag2": ["export", str(seq), "--format", "rosbag2", "--out", "{out}"],
            "export-kitti": ["export", str(seq), "--format", "kitti", "--out", "{out}"],
            "export-tum": ["export", str(seq), "--format", "tum", "--out", "{out}"],
            "dsg --mesh": ["dsg", str(seq), "--out", "{out}.json"],
            "replay": ["replay", str(seq), "--out", "{out}"],
            "preview": ["preview", str(seq), "--out", "{out}.png"],
        }
        for name, template in runs.items():
            filler = mount / "filler"
            free = shutil.disk_usage(mount).free
            filler.write_bytes(b"\0" * free)
            out = mount / name.replace(" ", "_").replace("-", "_")
            args = [a.replace("{out}", str(out)) for a in template]
            try:
                done = subprocess.run(
                    [str(TWINSIM), *args], capture_output=True, text=True, timeout=TIMEOUT_S
                )
            except subprocess.TimeoutExpired:
                cases.append(Case("disk", name, "hang", f"no exit within {TIMEOUT_S} s"))
                remove(filler, out, out.with_suffix(".json"), out.with_suffix(".png"))
                continue
            text = done.stdout + done.stderr
            lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
            targets = (out, out.with_suffix(".json"), out.with_suffix(".png"))
            complete = any(looks_complete(t) for t in targets)
            if "Traceback" in text or done.returncode not in (0, 2):
                outcome, detail = "traceback", text.strip()[-200:]
            elif done.returncode == 0:
                outcome, detail = "silent", "exit 0 on a full disk"
            elif complete:
                outcome, detail = "silent", "refused but the output looks complete"
            else:
                outcome, detail = "refused", (lines[-1] if lines else "")[:200]
            cases.append(Case("disk", name, outcome, detail))
            remove(filler, *targets)
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)
    return cases


def _classes(seq: Path, work: Path, quick: bool) -> dict[str, Callable[[], list[Case]]]:
    """Each class of faults by name, in the order they run (quick: the ones that take about a
    minute or less, and fewer readers and seeds)."""
    classes = {
        "config": lambda: sweep_configs(work),
        "file": lambda: sweep_sequences(seq, work, quick),
        "links": lambda: sweep_links(seq, work, quick),
        "concurrent": lambda: sweep_concurrent(seq, work),
        "serve": lambda: sweep_serve(work),
        "nesting": lambda: sweep_nesting(seq, work),
        "sizes": lambda: sweep_sizes(seq, work),
        "seeds": lambda: sweep_seeds(work, quick),
        "tamper": lambda: sweep_tamper(work),
    }
    if not quick:
        classes["kill"] = lambda: sweep_kills(seq, work)
        classes["disk"] = lambda: sweep_full_disk(seq, work)
    return classes


def _run_class(name: str, sweep: Callable[[], list[Case]]) -> list[Case]:
    """One class's cases; the sweep's own failure is reported as a case, not a crash."""
    started = time.perf_counter()
    try:
        cases = sweep()
    except Exception as exc:  # a bug of the sweep: say so and go on with the other classes
        traceback.print_exc()
        cases = [Case(name, "the sweep itself failed", "traceback", f"{type(exc).__name__}: {exc}")]
    print(f"[{name}: {len(cases)} cases in {time.perf_counter() - started:.0f} s]", flush=True)
    return cases


def _whole_sweep(seq: Path, before: dict[str, str], home: Path) -> list[Case]:
    """Escapes of the sweep as a whole: the source sequence changed, files left in the
    sweep's own working directory or in the commands' one."""
    checks = {
        "source sequence unchanged": differences(before, digest(seq)),
        "sweep working directory empty": sorted(os.listdir(home)),
        "commands' working directory empty": sandbox_leftovers(clear=False),
    }
    cases = []
    for label, found in checks.items():
        cases.append(Case("sweep", label, "escape" if found else "ok", str(found[:5])[:300]))
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--quick", action="store_true", help="fewer readers and seeds, no kills or full disk"
    )
    args = parser.parse_args()
    work = (args.work or Path(tempfile.mkdtemp(prefix="twinsim-sweep-"))).resolve()
    json_path = args.json.resolve() if args.json else None
    work.mkdir(parents=True, exist_ok=True)
    home = work / "cwd"  # the sweep's own working directory (in-process commands): stays empty
    remove(home)
    home.mkdir()
    os.chdir(home)
    remove(work / "cwd-cli")
    use_sandbox(work / "cwd-cli")  # every process's: checked after each (`run_cli`)
    seq = work / "source"
    if not seq.exists():
        sets = [a for s in SEQUENCE_SETS for a in ("--set", s)]
        result = invoke(["run", "--config", "tiny", "--duration", "1", *sets, "--out", str(seq)])
        assert result.exit_code == 0, result.output
    before = digest(seq)
    started = time.perf_counter()
    cases = []
    for name, sweep in _classes(seq, work, args.quick).items():
        cases += _run_class(name, sweep)
    cases += _whole_sweep(seq, before, home)
    counts = Counter(c.outcome for c in cases)
    by_group = Counter((c.group.split(":")[0], c.outcome) for c in cases)
    print(f"{len(cases)} cases in {time.perf_counter() - started:.0f} s: {dict(counts)}")
    for (group, outcome), n in sorted(by_group.items()):
        print(f"  {group:10s} {outcome:10s} {n}")
    for case in cases:
        if case.outcome in FAILING:
            print(f"{case.outcome.upper():9s} {case.group} | {case.name} | {case.detail}")
    if json_path:
        json_path.write_text(
            json.dumps({"counts": dict(counts), "cases": [c.__dict__ for c in cases]}, indent=1)
            + "\n"
        )
    return 1 if any(counts[outcome] for outcome in FAILING) else 0


if __name__ == "__main__":
    sys.exit(main())
