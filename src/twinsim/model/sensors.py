"""The sensors of a scene as plain data: each `SensorSpec` (its kind's own model, picked by its
`type` through the `SENSORS` registry) with the LiDAR, event-camera and GNSS settings it may
carry; a sensor of a kind not installed here reads as `ForeignSensorSpec`."""

from __future__ import annotations

from typing import Any

from pydantic import (
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from twinsim.model.base import FrozenSpec, Quat, Vec3
from twinsim.plugins import keyed_config
from twinsim.registries import DEFAULT_ROBOT, SENSORS


class LidarSpec(FrozenSpec):
    """A spinning multi-beam LiDAR: one elevation per ring (ring 0 lowest), columns per turn."""

    model: str
    elevations_deg: tuple[float, ...]
    columns: int = Field(gt=0)
    min_range_m: float = Field(ge=0.0)
    max_range_m: float = Field(gt=0.0)


class EventSpec(FrozenSpec):
    """Event camera model (ESIM / v2e): log-intensity contrast thresholds, refractory period."""

    threshold_pos: float = Field(gt=0.0)
    threshold_neg: float = Field(gt=0.0)
    refractory_ns: int = Field(ge=0)
    log_eps: float = Field(gt=0.0)


class GnssSpec(FrozenSpec):
    """A GNSS receiver's datum: the WGS-84 point (deg, deg, m) at the world ENU origin."""

    origin_lat_deg: float = Field(ge=-90.0, le=90.0)
    origin_lon_deg: float = Field(ge=-180.0, le=180.0)
    origin_alt_m: float


class SensorSpec(FrozenSpec):
    """A sensor on the body of the robot `robot`; `pos`/`quat` give T_body_sensor (camera: its
    optical frame).

    A LiDAR's frame is x forward, y left, z up; an event camera's is an OpenCV optical frame and
    its `rate_hz` is the internal render rate events are interpolated between. A camera's
    `exposure_s` and `rolling_shutter_readout_s` are simulated at render time (0: one instant);
    `normals` and `flow` add per-frame surface normals and forward optical flow.
    """

    name: str
    type: str  # a registered sensor kind (`twinsim.registries.SENSORS`)
    robot: str = DEFAULT_ROBOT
    rate_hz: int
    pos: Vec3
    quat: Quat
    width: int | None = None
    height: int | None = None
    hfov_deg: float | None = None
    near_m: float | None = None
    far_m: float | None = None
    lidar: LidarSpec | None = None
    events: EventSpec | None = None
    gnss: GnssSpec | None = None
    exposure_s: float = Field(0.0, ge=0.0)
    rolling_shutter_readout_s: float = Field(0.0, ge=0.0)
    normals: bool = False
    flow: bool = False

    @model_serializer(mode="wrap")
    def _leave_out_surface_off(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The dump without `normals` / `flow` when off (scenes without them keep their
        bytes)."""
        data = handler(self)
        for key in ("normals", "flow"):
            if not getattr(self, key):
                data.pop(key, None)
        return data


class ForeignSensorSpec(SensorSpec):
    """A sensor of a kind this twinsim does not have (a sequence made with a plug-in that is not
    installed): read, and written back, with its own settings as they are."""

    model_config = ConfigDict(extra="allow")


#: a sensor of the scene, validated by its kind's `spec_model` (picked by its `type`; a kind
#: that is not registered reads as `ForeignSensorSpec`), its kind's own fields written with it
SENSOR_SPEC = keyed_config(
    SENSORS, "type", None, lambda entry: entry.spec_model, unknown=ForeignSensorSpec
)
