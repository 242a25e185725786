"""The `usd` export read back with OpenUSD's own reader (`pxr.Usd.Stage.Open`): the stage's
prims against the scene, the static meshes against the `mesh` export's PLY (read by trimesh),
and every time sample against what the run recorded: the ground-truth body poses, the camera
frames' poses and pixels, people's joints and flying objects' 3D boxes."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import trimesh
from pxr import Usd, UsdGeom, UsdLux, UsdSemantics, UsdShade
from typer.testing import CliRunner

from twinsim.actors.human import JOINT_NAMES
from twinsim.cli import app
from twinsim.export import export_sequence
from twinsim.export.usd import REFERENCE_LUX, _lens
from twinsim.sequence import open_sequence

OVERRIDES = ("people.count=2", "flying_objects.count=2")  # seed 2: a ball in every frame
#: the part whose frame sits at each joint (`twinsim.actors.human`: a part's frame is placed at
#: the joint that rotates it)
JOINT_PARTS = {
    "pelvis": "pelvis",
    "spine": "torso",
    "neck": "neck",
    "head": "head",
    "l_shoulder": "l_upper_arm",
    "r_shoulder": "r_upper_arm",
    "l_elbow": "l_lower_arm",
    "r_elbow": "r_lower_arm",
    "l_wrist": "l_hand",
    "r_wrist": "r_hand",
    "l_hip": "l_thigh",
    "r_hip": "r_thigh",
    "l_knee": "l_shin",
    "r_knee": "r_shin",
    "l_ankle": "l_foot",
    "r_ankle": "r_foot",
}
FLIP = np.diag([1.0, -1.0, -1.0, 1.0])  # OpenCV's optical frame → USD's camera frame


@pytest.fixture(scope="module")
def sequence(tmp_path_factory, gl_backend):
    """A 1 s tiny world with two people and two flying objects."""
    from twinsim.config import load_config
    from twinsim.sim import run

    out = tmp_path_factory.mktemp("usd") / "seq"
    return run(load_config("tiny", OVERRIDES, seed=2, duration_s=1.0), out)


@pytest.fixture(scope="module")
def usda(sequence, tmp_path_factory):
    return export_sequence(sequence, "usd", tmp_path_factory.mktemp("usda") / "usd")


@pytest.fixture(scope="module")
def stage(usda):
    return Usd.Stage.Open(str(usda))


def world_matrix(prim: Usd.Prim, code: float) -> np.ndarray:
    """The prim's local-to-world transform at a time code as a column-vector 4×4 (USD's
    matrices act on row vectors: their transpose)."""
    return np.array(UsdGeom.Xformable(prim).ComputeLocalToWorldTransform(code)).T


def code_of(t_ns: int, rate_hz: int) -> float:
    """The stage's time code of a stamp (whole on the pose grid)."""
    code = t_ns * rate_hz / 1e9
    assert abs(code - round(code)) < 1e-6
    return float(round(code))


def srgb_to_linear(c: np.ndarray) -> np.ndarray:
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def test_the_stage_holds_the_scene(sequence, usda, stage) -> None:
    assert usda.name == "world.usda"
    seq = open_sequence(sequence)
    scene, rate = seq.scene, seq.stream_info("groundtruth_body")["rate_hz"]
    assert UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0
    assert stage.GetTimeCodesPerSecond() == stage.GetFramesPerSecond() == rate == 60
    t_ns, _ = seq.groundtruth()
    assert stage.GetStartTimeCode() == code_of(t_ns[0], rate) == 60.0  # 1 s bootstrap
    assert stage.GetEndTimeCode() == code_of(t_ns[-1], rate) == 119.0
    assert stage.GetDefaultPrim().GetPath() == "/World"

    def children(scope: str) -> list[Usd.Prim]:
        return list(stage.GetPrimAtPath(f"/World/{scope}").GetChildren())

    static = children("Static")
    assert [p.GetName() for p in static] == [
        f"{o.semantic_class}_{o.instance_id}" for o in scene.objects
    ]
    assert [p.GetName() for p in children("Robots")] == [r.name for r in scene.robots]
    dynamic = children("Dynamic")
    assert len(dynamic) == len(scene.people) + len(scene.flying_objects) == 4
    assert len(children("Lights")) == len(scene.lights) + 1  # and the ambient dome
    for prim in static:
        labels = UsdSemantics.LabelsAPI(prim, "class").GetLabelsAttr().Get()
        assert list(labels) == [prim.GetAttribute("twinsim:semanticClass").Get()]
    labelled = {
        p.GetAttribute("twinsim:instanceId").Get(): p.GetAttribute("twinsim:semanticClass").Get()
        for scope in dynamic
        for p in Usd.PrimRange(scope)
        if p.IsA(UsdGeom.Mesh)
    }
    moving = {
        i["instance_id"]: i["semantic_class"] for i in seq.metadata["instances"] if i["dynamic"]
    }
    assert labelled == moving  # every person's body and clothing, every flying object


def test_static_meshes_are_the_mesh_exports(sequence, stage, tmp_path) -> None:
    ply = trimesh.load(
        export_sequence(sequence, "mesh", tmp_path / "mesh") / "world.ply", process=False
    )
    face_instance = np.asarray(ply.metadata["_ply_raw"]["face"]["data"]["instance"])
    colours = np.asarray(ply.visual.vertex_colors)
    for prim in stage.GetPrimAtPath("/World/Static").GetChildren():
        mesh = UsdGeom.Mesh(prim)
        faces = ply.faces[face_instance == prim.GetAttribute("twinsim:instanceId").Get()]
        first = faces.min()
        points = np.array(mesh.GetPointsAttr().Get())
        np.testing.assert_array_equal(points, ply.vertices[first : faces.max() + 1])
        indices = np.array(mesh.GetFaceVertexIndicesAttr().Get()).reshape(-1, 3)
        np.testing.assert_array_equal(indices + first, faces)
        assert set(mesh.GetFaceVertexCountsAttr().Get()) == {3}
        # each face's bound material has the face's colour (sRGB to linear)
        binding = UsdShade.MaterialBindingAPI(prim)
        subsets = binding.GetMaterialBindSubsets()
        groups = [(s, np.array(s.GetIndicesAttr().Get())) for s in subsets] or [
            (prim, np.arange(len(faces)))
        ]
        assert sum(len(f) for _, f in groups) == len(faces)
        for holder, face_ids in groups:
            material = UsdShade.MaterialBindingAPI(holder).ComputeBoundMaterial()[0]
            shader = UsdShade.Shader(material.GetPrim().GetChild("PreviewSurface"))
            diffuse = np.array(shader.GetInput("diffuseColor").Get())
            rgb = colours[faces[face_ids].ravel(), :3] / 255.0
            np.testing.assert_allclose(
                srgb_to_linear(rgb), np.tile(diffuse, (len(rgb), 1)), atol=1e-6
            )


def test_the_robot_moves_as_its_ground_truth(sequence, stage) -> None:
    seq = open_sequence(sequence)
    t_ns, T_world_body = seq.groundtruth()
    robot = stage.GetPrimAtPath(f"/World/Robots/{seq.robots[0]}")
    codes = [code_of(t, 60) for t in t_ns]
    translate = robot.GetAttribute("xformOp:translate")
    assert translate.GetTimeSamples() == codes  # every row, nothing else
    for code, T in zip(codes, T_world_body, strict=True):
        np.testing.assert_allclose(world_matrix(robot, code), T, atol=1e-12)
    body = UsdGeom.Mesh(robot.GetChild("body"))
    half = np.asarray(seq.scene.robot.half_size)  # the drone's box
    np.testing.assert_allclose(np.array(body.GetExtentAttr().Get()), [-half, half], atol=1e-7)


def test_the_camera_sees_what_the_recorded_camera_saw(sequence, stage) -> None:
    seq = open_sequence(sequence)
    cam = seq.camera("cam0")
    prim = stage.GetPrimAtPath(f"/World/Robots/{seq.robots[0]}/cam0")
    usd_camera = UsdGeom.Camera(prim)
    assert prim.IsA(UsdGeom.Camera)
    hfov = 2 * math.degrees(
        math.atan(
            usd_camera.GetHorizontalApertureAttr().Get() / 2 / usd_camera.GetFocalLengthAttr().Get()
        )
    )
    info = seq.stream_info("cam0")
    assert hfov == pytest.approx(info["hfov_deg"], abs=1e-4)
    clipping = np.array(usd_camera.GetClippingRangeAttr().Get())
    np.testing.assert_allclose(clipping, [info["near_m"], info["far_m"]], rtol=1e-7)  # float32
    height, width = cam.height, cam.width
    for i in (0, 14, 29):
        frame = cam[i]
        code = code_of(frame.t_ns, 60)
        np.testing.assert_allclose(world_matrix(prim, code), frame.T_world_cam @ FLIP, atol=1e-9)
        # every pixel with depth, back-projected with K, projects through USD's frustum onto itself
        v, u = np.nonzero(frame.depth > 0)
        z = frame.depth[v, u].astype(float)
        K = frame.K
        local = np.stack(
            [(u - K[0, 2]) * z / K[0, 0], (v - K[1, 2]) * z / K[1, 1], z, np.ones_like(z)]
        )
        world = (frame.T_world_cam @ local).T
        pixels = project(usd_camera, code, world, width, height)
        assert np.abs(pixels - np.column_stack([u, v])).max() < 1e-3


def project(camera: UsdGeom.Camera, code, world: np.ndarray, width: int, height: int):
    """Pixel coordinates (OpenCV's: centres at 0 .. W-1, rows down) of homogeneous world
    points (n, 4) through the USD camera's own frustum at a time code."""
    frustum = camera.GetCamera(code).frustum
    to_clip = np.array(frustum.ComputeViewMatrix() * frustum.ComputeProjectionMatrix())
    clip = world @ to_clip  # row vectors, as USD
    ndc = clip[:, :2] / clip[:, 3:]
    return np.column_stack([(ndc[:, 0] + 1) / 2 * width - 0.5, (1 - ndc[:, 1]) / 2 * height - 0.5])


def test_an_off_centre_lens() -> None:
    """A principal point off the image's middle and fx ≠ fy still project onto the pixels."""
    width, height = 80, 50
    K = np.array([[70.0, 0.0, 45.3], [0.0, 66.0, 21.7], [0.0, 0.0, 1.0]])
    stage = Usd.Stage.CreateInMemory()
    camera = UsdGeom.Camera.Define(stage, "/cam")
    _lens(camera, {"K": K.tolist(), "width": width, "height": height})
    u, v = np.meshgrid(np.arange(width, dtype=float), np.arange(height, dtype=float))
    u, v, z = u.ravel(), v.ravel(), np.linspace(0.5, 9.0, u.size)
    optical = np.stack(
        [(u - K[0, 2]) * z / K[0, 0], (v - K[1, 2]) * z / K[1, 1], z, np.ones_like(z)]
    )
    pixels = project(camera, Usd.TimeCode.Default(), (FLIP @ optical).T, width, height)
    assert np.abs(pixels - np.column_stack([u, v])).max() < 1e-3


def test_people_and_flying_objects_move_as_recorded(sequence, stage) -> None:
    seq = open_sequence(sequence)
    scene = seq.scene
    flying = {f.instance_id: f for f in scene.flying_objects}
    checked_people = checked_boxes = 0
    for line in (sequence / "cam0/boxes.jsonl").read_text().splitlines():
        record = json.loads(line)
        code = code_of(record["t_ns"], 60)
        for person in record["people"]:
            root = f"/World/Dynamic/person_{person['instance_id']}"
            recorded = dict(zip(JOINT_NAMES, person["joints_world"], strict=True))
            for joint, part in JOINT_PARTS.items():
                origin = world_matrix(stage.GetPrimAtPath(f"{root}/{part}"), code)[:3, 3]
                np.testing.assert_allclose(origin, recorded[joint], atol=1e-9)
            checked_people += 1
        for box in record["boxes"]:
            obj = flying.get(box["instance_id"])
            if obj is None:
                continue
            geometry = stage.GetPrimAtPath(
                f"/World/Dynamic/{obj.semantic_class}_{obj.instance_id}/geometry"
            )
            points = np.array(UsdGeom.Mesh(geometry).GetPointsAttr().Get(), float)
            T = world_matrix(geometry, code)
            world = points @ T[:3, :3].T + T[:3, 3]
            obb = box["obb"]
            R, centre, half = (np.array(obb[k]) for k in ("rotation", "center", "half_extents"))
            scale = np.linalg.norm(T[:3, 0])
            np.testing.assert_allclose(T[:3, :3] / scale, R, atol=1e-9)  # turned as recorded
            local = (world - centre) @ R
            assert (np.abs(local) <= half + 1e-6).all()  # inside the recorded box
            if obj.semantic_class == "ball":  # and filling it, within the facets' 1 mm
                np.testing.assert_allclose(local.max(0), half, atol=1e-3 * scale)
                np.testing.assert_allclose(local.min(0), -half, atol=1e-3 * scale)
            checked_boxes += 1
    assert checked_people >= 30 and checked_boxes >= 30


def test_lights_give_the_illuminance_of_their_diffuse_colour(sequence, stage) -> None:
    scene = open_sequence(sequence).scene
    for light in scene.lights:
        prim = stage.GetPrimAtPath(f"/World/Lights/{light.name}")
        sphere = UsdLux.SphereLight(prim)
        assert prim.IsA(UsdLux.SphereLight) and sphere.GetNormalizeAttr().Get()
        T = world_matrix(prim, Usd.TimeCode.Default())
        np.testing.assert_allclose(T[:3, 3], light.pos, atol=1e-12)
        np.testing.assert_allclose(-T[:3, 2], light.dir, atol=1e-12)  # shines down its −z
        # a normalized sphere: luminance I / (4 π r²), seen from the floor below under the
        # solid angle π r² / d²
        r, d = sphere.GetRadiusAttr().Get(), light.pos[2]
        lux = sphere.GetIntensityAttr().Get() / (4 * math.pi * r * r) * math.pi * r * r / d**2
        a0, a1, a2 = light.attenuation
        assert lux == pytest.approx(
            REFERENCE_LUX * max(light.diffuse) / (a0 + a1 * d + a2 * d * d), rel=1e-6
        )
        colour = np.array(sphere.GetColorAttr().Get()) * max(light.diffuse)
        np.testing.assert_allclose(colour, light.diffuse, atol=1e-6)
        shaping = UsdLux.ShapingAPI(prim)
        assert shaping.GetShapingConeAngleAttr().Get() == pytest.approx(light.cutoff_deg)
        assert UsdLux.ShadowAPI(prim).GetShadowEnableAttr().Get() == light.castshadow


def test_same_input_same_bytes_and_usdc_holds_the_same_stage(sequence, usda, tmp_path) -> None:
    again = export_sequence(sequence, "usd", tmp_path / "again")
    assert again.read_bytes() == usda.read_bytes()
    assert b"/tmp" not in usda.read_bytes() and str(sequence).encode() not in usda.read_bytes()
    crate = export_sequence(sequence, "usd", tmp_path / "c1", file_format="usdc")
    assert crate.name == "world.usdc" and crate.read_bytes()[:8] == b"PXR-USDC"
    assert export_sequence(sequence, "usd", tmp_path / "c2", file_format="usdc").read_bytes() == (
        crate.read_bytes()
    )
    binary, text = Usd.Stage.Open(str(crate)), Usd.Stage.Open(str(usda))  # held: layers live
    assert binary.GetRootLayer().ExportToString() == text.GetRootLayer().ExportToString()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "file_format=fbx"], r"file_format='fbx' must be usda \(text\) or usdc \(binary\)"),
        (
            ["-o", "binary=true"],
            r"--option 'binary=true': expected key=value with key in: file_format",
        ),
    ],
)
def test_bad_options_are_refused_in_one_line(sequence, tmp_path, args, message) -> None:
    out = tmp_path / "o"
    result = CliRunner().invoke(
        app, ["export", str(sequence), "-f", "usd", "--out", str(out), *args]
    )
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert text.startswith("error:") and re.search(message, text), text
    assert "Traceback" not in result.output and not out.exists()
