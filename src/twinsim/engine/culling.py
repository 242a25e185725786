"""Leave out of a camera's render the geoms that cannot change its image.

MuJoCo draws every visible geom in every pass (shadow map, colour, segmentation) with no
culling, so twenty people in other rooms, or a city's thousand buildings behind the camera, cost
as much as those in view. A geom can change a camera's pixels only if it is in view, or if its
shadow is. It is in view only if its bounding sphere meets the view frustum (the pyramid up to
the far clipping plane) and lies in a room the camera sees into: its own, or one seen through a
chain of door openings, the cone narrowed to each opening in turn (portal culling; walls reach
the ceiling and doors are the only openings; a world without rooms, a hall or a town, has the
frustum test alone). A shadow needs the geom lit by a shadow-casting light (in the light's cone
and in a room the light reaches the same way) and the shadow, followed down to the floor
(z = 0), in view. Every test is conservative, so images are identical to drawing everything (a
test checks pixels, depth and ids). With reflections on, a mirror can show what is out of view,
so the renderer culls nothing then.
"""

from __future__ import annotations

import mujoco
import numpy as np

from twinsim.model.scene import DoorSpec, SceneSpec

CULLED_GEOM_GROUP = 5  # hidden in every camera's visualisation options
_FRUSTUM_MARGIN = 1.05  # widen a camera's half-angle tangents by 5 %
_SHADOW_SAMPLES = 8  # spheres along each shadow, from the geom down to the floor
_ROOM_MARGIN_M = 0.25  # rooms grow by this (walls, rounding) when deciding what is in them
_DOOR_MARGIN_M = 0.02  # door openings grow by this (rounding) when looked through
_STRADDLE_M = 0.3  # an eye this close to a door's plane, within its width, looks through freely
_WIDEST_SPOT_DEG = 80.0  # a wider spotlight is bounded by the half-space it faces


class _Cone:
    """A convex cone, or a frustum: the points x with (x − apex)·n ≤ offset for every plane
    (unit outward normals n; offsets 0, planes through the apex, unless given)."""

    def __init__(
        self, apex: np.ndarray, normals: np.ndarray, offsets: np.ndarray | None = None
    ) -> None:
        self.apex, self.normals = np.asarray(apex, float), np.asarray(normals, float)
        self.offsets = np.zeros(len(self.normals)) if offsets is None else np.asarray(offsets)

    @classmethod
    def pyramid(
        cls, pos: np.ndarray, R: np.ndarray, tan_x: float, tan_y: float, far: float | None = None
    ) -> _Cone:
        """The pyramid of a camera at `pos` looking along −z of `R` (MuJoCo's camera frame),
        closed `far` metres along its axis if given (the far clipping plane)."""
        local = np.array(
            [[1.0, 0.0, tan_x], [-1.0, 0.0, tan_x], [0.0, 1.0, tan_y], [0.0, -1.0, tan_y]]
        )
        local /= np.linalg.norm(local, axis=1, keepdims=True)
        offsets = np.zeros(4)
        if far is not None:
            local, offsets = np.vstack([local, [0.0, 0.0, -1.0]]), np.append(offsets, far)
        return cls(pos, local @ np.asarray(R, float).T, offsets)

    def meets(self, centers: np.ndarray, radii: np.ndarray) -> np.ndarray:
        """Whether each sphere may reach into the cone (within its radius of every plane)."""
        reach = radii[:, None] + self.offsets[None, :]
        return ((centers - self.apex) @ self.normals.T <= reach).all(axis=1)

    def sees_polygon(self, corners: np.ndarray) -> bool:
        """False only when some plane has the whole convex polygon outside it."""
        outside = (corners - self.apex) @ self.normals.T > self.offsets[None, :]
        return not outside.all(axis=0).any()

    def through(self, corners: np.ndarray) -> _Cone:
        """The part of this cone that looks through a convex polygon (corners in order)."""
        rays = corners - self.apex
        normals = np.cross(rays, np.roll(rays, -1, axis=0))
        normals *= -np.sign(normals @ rays.mean(axis=0))[:, None]  # away from the middle
        normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-12)
        offsets = np.concatenate([self.offsets, np.zeros(len(normals))])
        return _Cone(self.apex, np.vstack([self.normals, normals]), offsets)


class _Door:
    """A door opening: the two rooms it joins and its rectangle in the wall's middle plane."""

    def __init__(self, door: DoorSpec, index: dict[int, int]) -> None:
        self.rooms = (index[door.rooms[0]], index[door.rooms[1]])
        self.along = np.array([1.0, 0.0, 0.0] if door.axis == "x" else [0.0, 1.0, 0.0])
        self.half_width = door.width / 2 + _DOOR_MARGIN_M
        base = np.array([*door.center, -_DOOR_MARGIN_M])
        up = np.array([0.0, 0.0, door.height + 2 * _DOOR_MARGIN_M])
        side = self.half_width * self.along
        self.corners = np.array([base - side, base + side, base + side + up, base - side + up])
        self.center = base + up / 2

    def straddles(self, eye: np.ndarray) -> bool:
        """Whether the eye is in or next to the opening, where a cone through it degenerates."""
        offset = eye - self.center
        across = np.cross(self.along, [0.0, 0.0, 1.0])
        return abs(offset @ across) < _STRADDLE_M and abs(offset @ self.along) < self.half_width


class RoomVisibility:
    """The rooms a viewer can see into through the apartment's door openings."""

    def __init__(self, scene: SceneSpec) -> None:
        index = {room.room_id: i for i, room in enumerate(scene.rooms)}
        bounds = [[*np.min(r.polygon, axis=0), *np.max(r.polygon, axis=0)] for r in scene.rooms]
        margin = np.array([-1.0, -1.0, 1.0, 1.0]) * _ROOM_MARGIN_M
        self._rects = np.array(bounds, float).reshape(-1, 4) + margin
        self._doors = [_Door(door, index) for door in scene.doors]

    def seen_rooms(self, eye: np.ndarray, view: _Cone) -> np.ndarray | None:
        """Mask of rooms visible from `eye` within `view`, following the view through door
        after door; None when the eye is in no room (nothing is ruled out then)."""
        start = self._overlaps(eye[None, :2], np.zeros(1))[0]
        if not start.any():
            return None
        seen = start.copy()
        stack = [(int(room), view, (int(room),)) for room in np.flatnonzero(start)]
        while stack:
            room, cone, path = stack.pop()
            for door in self._doors:
                if room not in door.rooms:
                    continue
                other = door.rooms[1] if room == door.rooms[0] else door.rooms[0]
                if other in path:
                    continue
                if door.straddles(eye):
                    narrowed = cone
                elif cone.sees_polygon(door.corners):
                    narrowed = cone.through(door.corners)
                else:
                    continue
                seen[other] = True
                stack.append((other, narrowed, (*path, other)))
        return seen

    def in_rooms(
        self, seen: np.ndarray | None, centers: np.ndarray, radii: np.ndarray
    ) -> np.ndarray:
        """Whether each sphere may be seen: it overlaps a seen room, or no room at all."""
        if seen is None:
            return np.ones(len(centers), bool)
        overlap = self._overlaps(centers[:, :2], radii)
        return (overlap & seen[None, :]).any(axis=1) | ~overlap.any(axis=1)

    def _overlaps(self, xy: np.ndarray, radii: np.ndarray) -> np.ndarray:
        """(n, rooms): whether each disc of radius r around xy overlaps each room's rectangle."""
        r, rects = radii[:, None], self._rects[None]
        return (
            (xy[:, None, 0] + r >= rects[..., 0])
            & (xy[:, None, 0] - r <= rects[..., 2])
            & (xy[:, None, 1] + r >= rects[..., 1])
            & (xy[:, None, 1] - r <= rects[..., 3])
        )


class ViewCulling:
    """Decides, per camera and instant, which of `geoms` (static or moving, never planes: their
    bound is 0) may be left out of the render."""

    def __init__(self, model: mujoco.MjModel, scene: SceneSpec, geoms: np.ndarray) -> None:
        self.geoms = np.asarray(geoms, dtype=int)
        self._far = float(model.vis.map.zfar * model.stat.extent)
        self._rbound = model.geom_rbound[self.geoms].copy()
        self._rooms = RoomVisibility(scene)
        self._shadow_lights = np.flatnonzero(model.light_castshadow)
        self._cutoff = model.light_cutoff.copy()  # spotlight half-angle, degrees
        self._directional = np.asarray(model.light_type == mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
        self._lit_rooms: dict[int, tuple] = {}  # light → (its pose, the rooms it lights)

    def hidden(
        self, model: mujoco.MjModel, data: mujoco.MjData, cam_id: int, aspect: float
    ) -> np.ndarray:
        """Model geom ids that neither appear in camera `cam_id` nor shadow anything it sees."""
        if len(self.geoms) == 0:
            return self.geoms[:0]
        centers, radii = data.geom_xpos[self.geoms], self._rbound
        tan_y = np.tan(np.deg2rad(model.cam_fovy[cam_id]) / 2) * _FRUSTUM_MARGIN
        eye = data.cam_xpos[cam_id]
        R = data.cam_xmat[cam_id].reshape(3, 3)
        view = _Cone.pyramid(eye, R, tan_y * aspect, tan_y, self._far * _FRUSTUM_MARGIN)
        keep = view.meets(centers, radii)
        seen = self._rooms.seen_rooms(eye, view)
        keep[keep] = self._rooms.in_rooms(seen, centers[keep], radii[keep])
        for light in self._shadow_lights:
            rest = np.flatnonzero(~keep)
            if len(rest):
                keep[rest] = self._casts_shadow_into(
                    view, centers[rest], radii[rest], data, int(light)
                )
        return self.geoms[~keep]

    def _casts_shadow_into(
        self, view: _Cone, centers: np.ndarray, radii: np.ndarray, data, light: int
    ) -> np.ndarray:
        """Whether each sphere is lit by `light` and its shadow, down to the floor, is in view."""
        if self._directional[light]:
            direction = data.light_xdir[light] / np.linalg.norm(data.light_xdir[light])
            if direction[2] >= -1e-6:  # light from below the horizon: keep everything
                return np.ones(len(centers), bool)
            floor = centers + direction * (centers[:, 2:3] / -direction[2])
            return _segments_meet(view, centers, floor, radii)
        source = data.light_xpos[light]
        lit = self._lit_by_spot(light, source, data.light_xdir[light], centers, radii)
        height = source[2] - centers[:, 2]
        below = lit & (height > 1e-3)
        meets = lit.copy()  # lit at or above the light: its shadow is unbounded, keep it
        scale = source[2] / height[below]
        floor = source + (centers[below] - source) * scale[:, None]
        meets[below] = _segments_meet(view, centers[below], floor, radii[below] * scale)
        return meets

    def _lit_by_spot(
        self,
        light: int,
        source: np.ndarray,
        axis: np.ndarray,
        centers: np.ndarray,
        radii: np.ndarray,
    ) -> np.ndarray:
        """Spheres inside a spotlight's cone and in a room its light reaches through doors."""
        axis = axis / np.linalg.norm(axis)
        offset = centers - source
        dist = np.maximum(np.linalg.norm(offset, axis=1), 1e-9)
        angle = np.arccos(np.clip(offset @ axis / dist, -1.0, 1.0))
        reach = np.arcsin(np.clip(radii / dist, 0.0, 1.0))
        cutoff = float(self._cutoff[light])
        in_cone = (angle <= np.deg2rad(cutoff) + reach) | (dist <= radii)
        key = (source.tobytes(), axis.tobytes())  # lights rarely move: reuse their rooms
        if self._lit_rooms.get(light, (None,))[0] != key:
            if cutoff < _WIDEST_SPOT_DEG:
                tan = np.tan(np.deg2rad(cutoff)) * _FRUSTUM_MARGIN
                cone = _Cone.pyramid(source, _frame_looking_along(axis), tan, tan)
            else:
                cone = _Cone(source, -axis[None, :])
            self._lit_rooms[light] = (key, self._rooms.seen_rooms(source, cone))
        seen = self._lit_rooms[light][1]
        return in_cone & self._rooms.in_rooms(seen, centers, radii)


def _frame_looking_along(axis: np.ndarray) -> np.ndarray:
    """A rotation whose −z column is `axis` (a MuJoCo camera frame looking along it)."""
    z = -axis
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _segments_meet(
    view: _Cone, start: np.ndarray, end: np.ndarray, radius: np.ndarray
) -> np.ndarray:
    """Whether the volume swept by spheres from start to end (radius at the end) meets `view`:
    spheres along the segment, each wide enough to cover the gap to its neighbours."""
    s = np.linspace(0.0, 1.0, _SHADOW_SAMPLES)
    points = start[:, None, :] + (end - start)[:, None, :] * s[None, :, None]
    spacing = np.linalg.norm(end - start, axis=1) / (_SHADOW_SAMPLES - 1)
    cover = np.repeat(spacing / 2 + radius, _SHADOW_SAMPLES)
    meets = view.meets(points.reshape(-1, 3), cover)
    return meets.reshape(-1, _SHADOW_SAMPLES).any(axis=1)
