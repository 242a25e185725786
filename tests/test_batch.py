"""`twinsim batch`: a 2 × 2 plan (seeds × one `--set` axis) with a fog twin, a noisy copy and
a TUM export of every sequence, on local processes and on a local Ray instance killed midway
and resumed; bad plans; failures kept in the manifest; `twinsim info DATASET`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from twinsim.batch import plan_jobs, read_manifest, run_batch
from twinsim.batch.jobs import tree_checksum
from twinsim.cli import app
from twinsim.sequence import validate_sequence

PLAN = Path(__file__).parent / "data" / "batch_plan.yaml"
TWINSIM = Path(sys.executable).with_name("twinsim")
runner = CliRunner()


def _write_plan(folder: Path, **changes) -> Path:
    """A copy of the test plan with top-level sections replaced."""
    data = yaml.safe_load(PLAN.read_text()) | changes
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _file_digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _check_complete(dataset: Path, plan: Path) -> dict:
    """Every job of the plan is in the manifest once, done, its output there with the
    checksum recorded, every sequence valid, nothing left under a temporary name."""
    _, jobs = plan_jobs(plan)
    manifest = read_manifest(dataset)
    raw = (dataset / "dataset.json").read_text()
    assert sorted(manifest["jobs"]) == sorted(j.id for j in jobs)
    for job in jobs:
        assert raw.count(f'"id": "{job.id}"') == 1  # no duplicate entries
        entry = manifest["jobs"][job.id]
        assert entry["status"] == "done", (job.id, entry)
        assert entry["config_hash"] == job.config_hash
        assert tree_checksum(dataset / job.id)[0] == entry["checksum"]
        if job.type in ("run", "twin", "noise"):
            report = validate_sequence(dataset / job.id)
            assert report.ok, (job.id, report.problems[:3])
    assert not [p for p in dataset.rglob("*.partial")]
    assert (dataset / "README.md").is_file() and (dataset / "contact_sheet.png").is_file()
    return manifest


@pytest.fixture(scope="module")
def local_dataset(tmp_path_factory) -> Path:
    """The test plan run by two local worker processes into `<tmp>/dataset`, then moved to
    `<tmp>/local` (so Ray can write the same path and every byte can be compared)."""
    root = tmp_path_factory.mktemp("batch")
    result = run_batch(PLAN, root / "dataset", workers=2)
    assert result.ok and result.skipped == 0
    _check_complete(root / "dataset", PLAN)
    (root / "dataset").rename(root / "local")
    return root / "local"


def test_dry_run_prints_the_graph_and_writes_nothing(tmp_path):
    result = runner.invoke(app, ["batch", str(PLAN), "--dry-run", "--out", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    assert "twins/tiny-s1-scene.max_rooms=4/fog" in result.output
    cells = [[c.strip() for c in line.split("│")[1:-1]] for line in result.output.splitlines()]
    counts = {row[0]: row[1:] for row in cells if len(row) == 3}
    assert counts == {
        "run": ["4", "4"],
        "twin": ["4", "4"],
        "noise": ["4", "4"],
        "export": ["12", "12"],
        "all": ["24", "24"],
    }
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"twin": {"fog": {"fog": 0.3}}}, r"unknown plan key 'twin'; allowed here: runs, twins"),
        (
            {"runs": {"configs": ["tiny"], "axes": {"scene.max_roms": [3]}}},
            r"runs \(config 'tiny', seed 0, scene\.max_roms=3\): unknown config field "
            r"'scene\.max_roms'.*max_rooms",
        ),
        (
            {"resources": {"render": {"cpus": 1}}},
            r"resources: unknown job type 'render'; allowed: run, twin, noise, export, bench",
        ),
        ({"exports": ["tumm"]}, r"exports\.tumm\.format: unknown format 'tumm'; allowed: tum, "),
        ({"noise": {"n": {"profile": "rotor"}}}, r"noise\.n: unknown noise profile 'rotor'"),
        ({"twins": {"f": {"fogg": 1}}}, r"twins\.f: unknown variation 'fogg'; allowed here: "),
        ({"bench": {"methods": ["orb"]}}, r"bench\.methods: unknown method 'orb'; built-in: "),
        (
            {"runs": {"configs": ["tiny"], "duration": 1e12}},
            r"sim\.duration_s: Input should be less than or equal to 86400",
        ),
    ],
)
def test_bad_plans_fail_before_anything_runs(tmp_path, changes, expected):
    plan = _write_plan(tmp_path, **changes)
    out = tmp_path / "d"
    result = runner.invoke(app, ["batch", str(plan), "--out", str(out)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in lines[0]
    assert re.search(expected, " ".join(result.output.split())), result.output
    assert not out.exists()
    dry = runner.invoke(app, ["batch", str(plan), "--out", str(out), "--dry-run"])
    assert dry.exit_code == 2 and re.search(expected, " ".join(dry.output.split())), dry.output


def test_unreachable_ray_address_is_one_line(tmp_path):
    result = runner.invoke(
        app, ["batch", str(PLAN), "--out", str(tmp_path / "d"), "--ray", "127.0.0.1:9"]
    )
    assert result.exit_code == 2
    assert "--ray 127.0.0.1:9: no Ray cluster reachable there" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "d").exists()


@pytest.mark.slow
@pytest.mark.ray
def test_ray_killed_midway_resumes_to_the_same_bytes(local_dataset):
    """The driver on a local Ray instance is SIGKILLed (its whole process group) once a job
    is done, run again, and ends with a complete dataset whose outputs are the local
    executor's, byte for byte."""
    dataset = local_dataset.parent / "dataset"
    args = [str(TWINSIM), "batch", str(PLAN), "--out", str(dataset), "--ray", "local"]
    args += ["--workers", "2"]
    driver = subprocess.Popen(
        args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline, done_before = time.monotonic() + 120, []
    try:
        while time.monotonic() < deadline and driver.poll() is None:
            try:
                jobs = json.loads((dataset / "dataset.json").read_text())["jobs"]
            except (OSError, ValueError):
                jobs = {}
            done_before = [i for i, j in jobs.items() if j["status"] == "done"]
            if done_before:
                break
            time.sleep(0.05)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    assert done_before and len(done_before) < 24, "the driver was not killed midway"
    killed = read_manifest(dataset)
    assert sum(j["status"] == "done" for j in killed["jobs"].values()) < 24

    result = run_batch(PLAN, dataset, ray="local", workers=2)
    assert result.ok, result.failed
    assert result.skipped >= len(done_before)
    ray_manifest = _check_complete(dataset, PLAN)
    local_manifest = read_manifest(local_dataset)
    for job_id, entry in ray_manifest["jobs"].items():
        assert entry["checksum"] == local_manifest["jobs"][job_id]["checksum"], job_id
    for seq in ("runs/tiny-s1-scene.max_rooms=4", "twins/tiny-s0-scene.max_rooms=3/fog"):
        assert _file_digests(dataset / seq) == _file_digests(local_dataset / seq)
    assert ray_manifest["executor"].startswith("Ray at local")


@pytest.mark.slow
def test_rerun_skips_and_a_changed_axis_recomputes_only_its_cells(local_dataset, tmp_path):
    dataset = tmp_path / "d"
    shutil.copytree(local_dataset, dataset)
    again = run_batch(PLAN, dataset, workers=2)
    assert again.ok and again.skipped == 24
    before = read_manifest(dataset)["jobs"]
    runs = {
        "configs": ["tiny"],
        "seeds": [0, 1],
        "duration": 0.5,
        "axes": {"scene.max_rooms": [3, 5]},
    }
    plan = _write_plan(tmp_path, runs=runs)
    changed = run_batch(plan, dataset, workers=2)
    assert changed.ok and changed.skipped == 12  # the max_rooms=3 cells, all their jobs
    after = _check_complete(dataset, plan)
    kept = [i for i in after["jobs"] if "max_rooms=3" in i]
    assert len(kept) == 12
    assert all(after["jobs"][i]["finished"] == before[i]["finished"] for i in kept)
    assert sorted(after["stale"]) == sorted(i for i in before if "max_rooms=4" in i)


@pytest.mark.slow
def test_failed_job_keeps_error_and_log_and_the_others_go_on(tmp_path):
    """A twin that cannot be made (no instance 9999) fails twice (retries: 1) with its error
    and traceback kept; its export is blocked; the other twin, the exports and the benchmark
    of the run finish."""
    runs = {"configs": ["tiny"], "seeds": [0], "duration": 0.5}
    twins = {"fog": {"fog": 0.3}, "gone": {"remove_instances": [9999]}}
    bench = {"methods": ["rgbd_odometry"], "of": ["runs"]}
    plan = _write_plan(tmp_path, runs=runs, twins=twins, noise={}, exports=["tum"], bench=bench)
    out = tmp_path / "d"
    result = runner.invoke(app, ["batch", str(plan), "--out", str(out), "--workers", "2"])
    assert result.exit_code == 1, result.output
    jobs = read_manifest(out)["jobs"]
    failed = jobs["twins/tiny-s0/gone"]
    assert failed["status"] == "failed" and failed["attempts"] == 2
    assert "no instance 9999" in failed["error"]
    assert "Traceback" in (out / failed["log"]).read_text()
    assert jobs["exports/twins/tiny-s0/gone/tum"]["status"] == "blocked"
    ok = [i for i, j in jobs.items() if j["status"] == "done"]
    assert sorted(ok) == [
        "bench/runs/tiny-s0/rgbd_odometry",
        "exports/runs/tiny-s0/tum",
        "exports/twins/tiny-s0/fog/tum",
        "runs/tiny-s0",
        "twins/tiny-s0/fog",
    ]
    assert jobs["bench/runs/tiny-s0/rgbd_odometry"]["result"]["trials_ok"] == 1
    assert (out / "bench/runs/tiny-s0/rgbd_odometry/results.csv").is_file()
    assert "twins/tiny-s0/gone: " in " ".join(result.output.split())


def test_info_reads_the_dataset_card(local_dataset):
    text = (local_dataset / "README.md").read_text()
    assert "axis `scene.max_rooms`: 3, 4" in text and "contact_sheet.png" in text
    assert text.count("| `runs/") == 4 and "twinsim batch" in text
    result = runner.invoke(app, ["info", str(local_dataset), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["n_done"] == summary["n_jobs"] == 24
    assert summary["jobs"] == {"export:done": 12, "noise:done": 4, "run:done": 4, "twin:done": 4}
    assert summary["sequences"]["runs/tiny-s0-scene.max_rooms=3"]["frames"] == 15
    table = runner.invoke(app, ["info", str(local_dataset)])
    assert "(dataset: 24 of 24 jobs done)" in " ".join(table.output.split())
    sequence = runner.invoke(app, ["info", str(local_dataset / "runs/tiny-s0-scene.max_rooms=3")])
    assert sequence.exit_code == 0 and "(complete)" in sequence.output


@pytest.mark.slow
def test_a_killed_local_worker_costs_only_its_jobs(tmp_path):
    """SIGKILL a worker process while it runs a job: that attempt fails ('the worker process
    died'), a fresh pool takes over and the retry finishes the dataset."""
    import psutil

    runs = {"configs": ["tiny"], "seeds": [0, 1], "duration": 0.5}
    plan = _write_plan(tmp_path, runs=runs, twins={}, noise={}, exports=["tum"], retries=1)
    killed = []

    def kill_a_worker(progress) -> None:
        if not killed and progress.counts.get(("run", "running"), 0):
            for child in psutil.Process().children():
                try:  # the pool's spawned workers (not zombies of an earlier Ray instance)
                    if "spawn_main" in " ".join(child.cmdline()):
                        child.send_signal(signal.SIGKILL)
                        killed.append(child.pid)
                        return
                except psutil.Error:
                    continue

    result = run_batch(plan, tmp_path / "d", workers=2, progress=kill_a_worker)
    assert killed and result.ok, result.failed
    manifest = _check_complete(tmp_path / "d", plan)
    assert any(j["attempts"] == 2 for j in manifest["jobs"].values())


def test_ray_missing_is_one_line_with_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    result = runner.invoke(
        app, ["batch", str(PLAN), "--out", str(tmp_path / "d"), "--ray", "local"]
    )
    assert result.exit_code == 2
    assert "--ray needs Ray: pip install 'twinsim[ray]'" in " ".join(result.output.split())
    assert not (tmp_path / "d").exists()


@pytest.mark.ray
def test_a_killed_ray_worker_costs_only_its_job(tmp_path):
    """SIGKILL the Ray worker running a run: that attempt fails ('the Ray worker died'), the
    export Ray had queued on it is skipped without an attempt, and the retry finishes both."""
    import threading

    import psutil

    runs = {"configs": ["tiny"], "seeds": [0], "duration": 0.5}
    plan = _write_plan(tmp_path, runs=runs, twins={}, noise={}, exports=["tum"], retries=1)
    killed: list[str] = []

    def kill_the_run_worker() -> None:
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            for proc in psutil.process_iter(["cmdline"]):
                title = " ".join(proc.info["cmdline"] or [])
                if title.startswith("ray::runs/"):
                    proc.send_signal(signal.SIGKILL)
                    killed.append(title)
                    return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_the_run_worker)
    killer.start()
    try:
        result = run_batch(plan, tmp_path / "d", ray="local", workers=2)
    finally:
        killer.join()
    assert killed and result.ok, (killed, result.failed)
    jobs = _check_complete(tmp_path / "d", plan)["jobs"]
    assert jobs["runs/tiny-s0"]["attempts"] == 2
    assert jobs["exports/runs/tiny-s0/tum"]["attempts"] == 1


@pytest.mark.ray
def test_a_request_the_ray_cluster_cannot_meet_is_refused(tmp_path):
    plan = _write_plan(tmp_path, resources={"twin": {"gpus": 1}})
    args = ["batch", str(plan), "--out", str(tmp_path / "d"), "--ray", "local", "--workers", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "resources.twin.gpus=1: the Ray cluster has 0" in " ".join(result.output.split())
    assert not (tmp_path / "d").exists()
