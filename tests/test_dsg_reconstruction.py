"""Estimated graph from RGB-D: TSDF mesh accuracy, objects, rooms, and the Kimera contrails."""

from __future__ import annotations

import json

import numpy as np
import pytest
import spark_dsg
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.dsg.evaluate import evaluate
from twinsim.dsg.reconstruct import ReconstructionOptions, reconstruct
from twinsim.scene.vocabulary import CLASS_ID
from twinsim.sequence import open_sequence

STRIDE = 2


@pytest.fixture(scope="module")
def reports(dynamic_sequence):
    reader = open_sequence(dynamic_sequence)
    out = {}
    for masked in (True, False):
        opts = ReconstructionOptions(frame_stride=STRIDE, voxel_m=0.05, mask_dynamic=masked)
        est = reconstruct(reader, options=opts)
        out[masked] = (est, evaluate(reader, est, stride=STRIDE))
    return out


def test_reconstruction_matches_the_static_world(reports):
    est, rep = reports[True]
    assert rep.mesh_accuracy_m < 0.08
    assert rep.mesh_completeness > 0.85
    assert rep.object_recall >= 0.5 and rep.object_precision >= 0.5
    assert sum(r["true"] for r in rep.objects_by_class.values()) >= 2
    assert rep.rooms_observed >= 1 and rep.room_recall > 0
    # fused labels: walls and floors present and where they should be
    floor = est.points[est.labels == CLASS_ID["floor"]]
    assert len(floor) > 100 and np.median(np.abs(floor[:, 2])) < 0.05
    assert (est.labels == CLASS_ID["wall"]).sum() > 100
    assert len(est.places.xy) > 0


def test_dynamic_masking_removes_people_contrails(reports):
    masked, unmasked = reports[True][1], reports[False][1]
    assert unmasked.trail_points > 0
    assert masked.trail_error_m < unmasked.trail_error_m
    assert masked.trail_outliers < unmasked.trail_outliers
    est_masked, est_unmasked = reports[True][0], reports[False][0]
    person = CLASS_ID["person"], CLASS_ID["clothing"]
    assert np.isin(est_masked.labels, person).sum() < np.isin(est_unmasked.labels, person).sum()


def test_cli_report_and_estimated_graph_in_spark_dsg(dynamic_sequence, tmp_path):
    report, graph_file = tmp_path / "report.json", tmp_path / "estimate.json"
    args = ["dsg-reconstruct", str(dynamic_sequence), "--out", str(report)]
    result = CliRunner().invoke(app, [*args, "--graph", str(graph_file), "--stride", "6"])
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    for key in ("masked", "unmasked"):
        assert {"mesh_accuracy_m", "trail_error_m", "object_recall"} <= set(data[key])
    graph = spark_dsg.DynamicSceneGraph.load(str(graph_file))
    assert graph.has_mesh()
    vertices = graph.mesh.get_vertices()
    labels = np.array(graph.mesh.get_labels())
    assert vertices.shape[1] == len(labels) > 1000
    floor = vertices[2, labels == CLASS_ID["floor"]]
    assert len(floor) > 50 and np.median(np.abs(floor)) < 0.05
    assert graph.get_layer("OBJECTS").num_nodes() >= 1
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2 and "exists" in again.output
