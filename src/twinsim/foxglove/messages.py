"""Twinsim data as Foxglove messages (`foxglove.messages`), all pure functions.

Frames: `world` (z up), each robot's body frame by the robot's name, each sensor's frame by its
stream name (a camera's is its OpenCV optical frame). Stamps are the sequence's integer ns.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from foxglove import messages as fm

from twinsim.geometry import T_to_pos_quat_xyzw, quat_wxyz_to_matrix
from twinsim.model.scene import SceneSpec

WORLD = "world"
#: a LiDAR point as published: x, y, z, intensity, instance, semantic, ring
POINT_FIELDS = np.dtype(
    [
        ("x", "<f4"),
        ("y", "<f4"),
        ("z", "<f4"),
        ("intensity", "<f4"),
        ("instance", "<u4"),
        ("semantic", "<u2"),
        ("ring", "<u2"),
    ]
)
_NUMERIC = {
    "f4": fm.PackedElementFieldNumericType.Float32,
    "u4": fm.PackedElementFieldNumericType.Uint32,
    "u2": fm.PackedElementFieldNumericType.Uint16,
}


def topic(stream: str, suffix: str) -> str:
    """The topic of a stream's messages: `/cam0/rgb`, `/b/cam0/rgb` for robot b's `b.cam0`."""
    return "/" + "/".join([*stream.split("."), suffix])


def stamp(t_ns: int) -> fm.Timestamp:
    sec, nsec = divmod(int(t_ns), 1_000_000_000)
    return fm.Timestamp(sec, nsec)


def _parts(T: np.ndarray) -> tuple[fm.Vector3, fm.Quaternion]:
    x, y, z, qx, qy, qz, qw = (float(v) for v in T_to_pos_quat_xyzw(np.asarray(T, float)))
    return fm.Vector3(x=x, y=y, z=z), fm.Quaternion(x=qx, y=qy, z=qz, w=qw)


def pose(T: np.ndarray) -> fm.Pose:
    position, orientation = _parts(T)
    return fm.Pose(position=position, orientation=orientation)


def _raw_image(frame_id: str, t_ns: int, pixels: np.ndarray, encoding: str) -> fm.RawImage:
    """An image whose rows are `pixels`' rows, as they are in memory."""
    h, w = pixels.shape[:2]
    return fm.RawImage(
        timestamp=stamp(t_ns),
        frame_id=frame_id,
        width=w,
        height=h,
        encoding=encoding,
        step=pixels.nbytes // h,
        data=pixels.tobytes(),
    )


def rgb_image(frame_id: str, t_ns: int, rgb: np.ndarray) -> fm.RawImage:
    """An (H, W, 3) uint8 RGB image as `rgb8`."""
    return _raw_image(frame_id, t_ns, np.ascontiguousarray(rgb, dtype=np.uint8), "rgb8")


def depth_image(frame_id: str, t_ns: int, depth: np.ndarray) -> fm.RawImage:
    """An (H, W) z-depth in metres (0 = no reading) as `32FC1`."""
    return _raw_image(frame_id, t_ns, np.ascontiguousarray(depth, dtype="<f4"), "32FC1")


def calibration(
    frame_id: str, t_ns: int, K: np.ndarray, width: int, height: int
) -> fm.CameraCalibration:
    """A pinhole camera without distortion (twinsim's cameras are ideal pinholes)."""
    K = np.asarray(K, float).reshape(3, 3)
    P = np.hstack([K, np.zeros((3, 1))])
    return fm.CameraCalibration(
        timestamp=stamp(t_ns),
        frame_id=frame_id,
        width=int(width),
        height=int(height),
        distortion_model="plumb_bob",
        D=[0.0] * 5,
        K=[float(v) for v in K.ravel()],
        R=[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
        P=[float(v) for v in P.ravel()],
    )


def point_cloud(frame_id: str, scan) -> fm.PointCloud:
    """A LiDAR sweep (`LidarScan`) in its LiDAR frame, one `POINT_FIELDS` record a point."""
    rec = np.empty(len(scan), POINT_FIELDS)
    points = np.asarray(scan.points, np.float32).reshape(-1, 3)
    rec["x"], rec["y"], rec["z"] = points.T
    for name in POINT_FIELDS.names[3:]:
        rec[name] = getattr(scan, name)
    fields = [
        fm.PackedElementField(
            name=name,
            offset=POINT_FIELDS.fields[name][1],
            type=_NUMERIC[POINT_FIELDS.fields[name][0].str[1:]],
        )
        for name in POINT_FIELDS.names
    ]
    return fm.PointCloud(
        timestamp=stamp(scan.t_ns),
        frame_id=frame_id,
        pose=pose(np.eye(4)),
        point_stride=POINT_FIELDS.itemsize,
        fields=fields,
        data=rec.tobytes(),
    )


def transform(parent: str, child: str, t_ns: int, T: np.ndarray) -> fm.FrameTransform:
    translation, rotation = _parts(T)
    return fm.FrameTransform(
        timestamp=stamp(t_ns),
        parent_frame_id=parent,
        child_frame_id=child,
        translation=translation,
        rotation=rotation,
    )


def robot_transforms(
    robot: str, t_ns: int, T_world_body: np.ndarray, mounts: dict[str, np.ndarray]
) -> fm.FrameTransforms:
    """`world` → the robot's body, and the body → each sensor (`mounts`: stream → T_body_sensor)."""
    transforms = [transform(WORLD, robot, t_ns, T_world_body)]
    transforms += [transform(robot, stream, t_ns, T) for stream, T in mounts.items()]
    return fm.FrameTransforms(transforms=transforms)


def robot_pose(t_ns: int, T_world_body: np.ndarray) -> fm.PoseInFrame:
    return fm.PoseInFrame(timestamp=stamp(t_ns), frame_id=WORLD, pose=pose(T_world_body))


def box_annotations(t_ns: int, boxes: Iterable[dict]) -> fm.ImageAnnotations:
    """A camera frame's 2D boxes (inclusive pixel `tight` boxes) as outlined rectangles."""
    colour = fm.Color(r=1.0, g=0.8, b=0.0, a=1.0)
    points, texts = [], []
    for box in boxes:
        x0, y0, x1, y1 = (float(v) for v in box["tight"])
        x1, y1 = x1 + 1.0, y1 + 1.0  # inclusive pixels to edges
        corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
        points.append(
            fm.PointsAnnotation(
                timestamp=stamp(t_ns),
                type=fm.PointsAnnotationType.LineLoop,
                points=[fm.Point2(x=x, y=y) for x, y in corners],
                outline_color=colour,
                thickness=1.0,
            )
        )
        texts.append(
            fm.TextAnnotation(
                timestamp=stamp(t_ns),
                position=fm.Point2(x=x0, y=y0),
                text=f"{box['semantic_class']} {box['instance_id']}",
                font_size=10.0,
                text_color=colour,
            )
        )
    return fm.ImageAnnotations(timestamp=stamp(t_ns), points=points, texts=texts)


def moving_boxes(t_ns: int, boxes: Iterable[dict]) -> fm.SceneUpdate:
    """3D oriented boxes (`obb`) of moving things seen in a frame, in `world`; replaces the last."""
    entities = []
    for box in boxes:
        obb = box["obb"]
        T = np.eye(4)
        T[:3, :3] = np.asarray(obb["rotation"], float)
        T[:3, 3] = obb["center"]
        sx, sy, sz = (2.0 * float(h) for h in obb["half_extents"])
        entities.append(
            fm.SceneEntity(
                timestamp=stamp(t_ns),
                frame_id=WORLD,
                id=str(box["instance_id"]),
                metadata=[fm.KeyValuePair(key="class", value=str(box["semantic_class"]))],
                cubes=[
                    fm.CubePrimitive(
                        pose=pose(T),
                        size=fm.Vector3(x=sx, y=sy, z=sz),
                        color=fm.Color(r=1.0, g=0.3, b=0.1, a=0.5),
                    )
                ],
            )
        )
    deletion = fm.SceneEntityDeletion(timestamp=stamp(t_ns), type=fm.SceneEntityDeletionType.All)
    return fm.SceneUpdate(deletions=[deletion], entities=entities)


def scene_map(scene: SceneSpec, t_ns: int = 0) -> fm.SceneUpdate:
    """The static world (every object that does not move) as one entity per object, its box,
    cylinder and sphere geoms as cubes, cylinders and spheres in `world`."""
    grey = fm.Color(r=0.7, g=0.7, b=0.72, a=0.35)
    entities = []
    for obj in scene.objects:
        if obj.dynamic:
            continue
        T_obj = np.eye(4)
        T_obj[:3, :3] = quat_wxyz_to_matrix(obj.quat)
        T_obj[:3, 3] = obj.pos
        cubes, cylinders, spheres = [], [], []
        for g in obj.geoms:
            T_geom = np.eye(4)
            T_geom[:3, :3] = quat_wxyz_to_matrix(g.quat)
            T_geom[:3, 3] = g.pos
            p = pose(T_obj @ T_geom)
            s = [float(v) for v in g.size]
            if g.type == "box":
                size = fm.Vector3(x=2 * s[0], y=2 * s[1], z=2 * s[2])
                cubes.append(fm.CubePrimitive(pose=p, size=size, color=grey))
            elif g.type == "cylinder":
                size = fm.Vector3(x=2 * s[0], y=2 * s[0], z=2 * s[1])
                cylinders.append(
                    fm.CylinderPrimitive(
                        pose=p, size=size, bottom_scale=1.0, top_scale=1.0, color=grey
                    )
                )
            elif g.type == "sphere":
                size = fm.Vector3(x=2 * s[0], y=2 * s[0], z=2 * s[0])
                spheres.append(fm.SpherePrimitive(pose=p, size=size, color=grey))
        if cubes or cylinders or spheres:
            entities.append(
                fm.SceneEntity(
                    timestamp=stamp(t_ns),
                    frame_id=WORLD,
                    id=f"{obj.instance_id}",
                    metadata=[
                        fm.KeyValuePair(key="name", value=obj.name),
                        fm.KeyValuePair(key="class", value=obj.semantic_class),
                    ],
                    cubes=cubes,
                    cylinders=cylinders,
                    spheres=spheres,
                )
            )
    return fm.SceneUpdate(entities=entities)
