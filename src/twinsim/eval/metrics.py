"""Trajectory metrics on top of evo: ATE, RPE, GRADE's tracking rate, coverage and scaled ATE."""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from twinsim.eval.trajectory import Trajectory, TrajectoryError

#: Keys of `Evaluation.summary()`, the numbers `twinsim eval --json` prints.
SUMMARY_KEYS = (
    "ate_rmse",
    "rpe_trans_rmse",
    "rpe_rot_rmse",
    "rpe_trans_per_m_rmse",
    "rpe_rot_per_m_rmse",
    "tracking_rate",
    "coverage",
    "scaled_ate",
    "matched_poses",
    "gt_poses",
    "est_poses",
    "scale",
)


@dataclass
class Evaluation:
    """Every metric of one estimate against its ground truth, plus what association did.

    ATE in m (RMSE of the aligned positions); RPE per frame pair (m, deg) and per metre of
    travel (m, deg over 1 m segments); tracking rate in [0, 1]; coverage = aligned estimate path
    length ÷ ground-truth path length; scaled ATE = ATE ÷ coverage.
    """

    ate_rmse: float
    rpe_trans_rmse: float
    rpe_rot_rmse: float
    rpe_trans_per_m_rmse: float
    rpe_rot_per_m_rmse: float
    tracking_rate: float
    coverage: float
    scaled_ate: float
    matched_poses: int
    gt_poses: int
    est_poses: int
    scale: float
    alignment: str
    notes: list[str] = field(default_factory=list)
    t_s: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    ate_errors: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    est_aligned_xyz: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)), repr=False)

    def summary(self) -> dict:
        """The scalar metrics and notes as a strict-JSON dict: an undefined metric is None (null),
        and `notes` says why."""
        data = {k: v for k, v in asdict(self).items() if k in SUMMARY_KEYS}
        data = {
            k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in data.items()
        }
        return data | {"alignment": self.alignment, "notes": list(self.notes)}

    def rows(self) -> list[tuple[str, str]]:
        """(label, text) rows of the metrics as `twinsim eval` prints them ("n/a" where one is
        undefined), then the poses matched and the alignment."""
        rows = []
        for label, key, unit in _ROWS:
            value = getattr(self, key)
            shown = "n/a" if not math.isfinite(value) else f"{value:.6g} {unit}".strip()
            rows.append((label, shown))
        matched = (
            f"{self.matched_poses} (estimate {self.est_poses}, ground truth {self.gt_poses}), "
            f"{self.alignment.upper()} alignment"
        )
        return [*rows, ("matched poses", matched)]


#: the metrics `Evaluation.rows` shows: label, field, unit
_ROWS = (
    ("ATE RMSE", "ate_rmse", "m"),
    ("RPE translation (per frame)", "rpe_trans_rmse", "m"),
    ("RPE rotation (per frame)", "rpe_rot_rmse", "deg"),
    ("RPE translation (per 1 m)", "rpe_trans_per_m_rmse", "m"),
    ("RPE rotation (per 1 m)", "rpe_rot_per_m_rmse", "deg"),
    ("tracking rate", "tracking_rate", ""),
    ("coverage", "coverage", ""),
    ("scaled ATE", "scaled_ate", "m"),
)


def evaluate(
    gt: Trajectory,
    est: Trajectory,
    *,
    sim3: bool = False,
    max_diff_s: float = 0.01,
    frame_period_s: float | None = None,
) -> Evaluation:
    """Associate `est` to `gt` by timestamp (within `max_diff_s`), align it by Umeyama (SE(3),
    or Sim(3) for monocular estimates; at the first pose where a straight path leaves SE(3)
    degenerate, noted) and compute every metric exactly as evo's tools do."""
    from evo.core import metrics, sync
    from evo.core.filters import FilterException
    from evo.core.geometry import GeometryException

    if not max_diff_s >= 0.0:
        raise TrajectoryError(f"max_diff_s={max_diff_s} must be >= 0 s")
    if frame_period_s is not None and not frame_period_s > 0.0:
        raise TrajectoryError(f"frame_period_s={frame_period_s} must be > 0 s")
    notes = [*gt.notes, *est.notes]
    ref_full, est_full = gt.to_evo(), est.to_evo()
    try:
        ref, est_sync = sync.associate_trajectories(ref_full, est_full, max_diff=max_diff_s)
    except sync.SyncException:
        raise TrajectoryError(
            f"no estimate pose is within {max_diff_s} s of a ground-truth pose: ground truth "
            f"spans {_span(gt)}, the estimate {_span(est)} (same clock?)"
        ) from None
    matched = ref.num_poses
    if matched < len(est):
        notes.append(
            f"{est.name}: {len(est) - matched} of {len(est)} poses have no ground truth within "
            f"{max_diff_s} s and were left out"
        )
    if matched < 3:
        raise TrajectoryError(
            f"only {matched} estimate pose(s) matched the ground truth; need at least 3 to align"
        )
    alignment = "sim3" if sim3 else "se3"
    try:
        scale = est_sync.align(ref, correct_scale=sim3)[2]
    except GeometryException as exc:
        if sim3:  # a scale needs a path that is not a line
            raise TrajectoryError(f"cannot align {est.name} to {gt.name} ({exc})") from None
        # a straight drive leaves the rotation about its line free: align the first poses
        est_sync.align_origin(ref)
        scale, alignment = 1.0, "origin"
        notes.append(
            f"{est.name}: Umeyama alignment is degenerate on this path ({exc}); aligned at "
            "the first pose instead"
        )

    ape = metrics.APE(metrics.PoseRelation.translation_part)
    ape.process_data((ref, est_sync))
    ate = float(ape.get_statistic(metrics.StatisticsType.rmse))

    def rpe(relation: metrics.PoseRelation, delta: float, unit: metrics.Unit) -> float:
        metric = metrics.RPE(relation, delta, unit, all_pairs=False)
        try:
            metric.process_data((copy.deepcopy(ref), copy.deepcopy(est_sync)))
        except FilterException:
            return math.nan
        return float(metric.get_statistic(metrics.StatisticsType.rmse))

    trans, angle = metrics.PoseRelation.translation_part, metrics.PoseRelation.rotation_angle_deg
    frames, metres = metrics.Unit.frames, metrics.Unit.meters
    per_m = (rpe(trans, 1.0, metres), rpe(angle, 1.0, metres))
    if math.isnan(per_m[0]):
        notes.append("RPE per metre: undefined (null), the estimate travels less than 1 m")

    gt_length = ref_full.path_length
    coverage = est_sync.path_length / gt_length if gt_length > 0 else math.nan
    return Evaluation(
        ate_rmse=ate,
        rpe_trans_rmse=rpe(trans, 1, frames),
        rpe_rot_rmse=rpe(angle, 1, frames),
        rpe_trans_per_m_rmse=per_m[0],
        rpe_rot_per_m_rmse=per_m[1],
        tracking_rate=tracking_rate(gt.t_ns, est.t_ns, frame_period_s),
        coverage=coverage,
        scaled_ate=ate / coverage if coverage > 0 else math.nan,
        matched_poses=int(matched),
        gt_poses=len(gt),
        est_poses=len(est),
        scale=float(scale),
        alignment=alignment,
        notes=notes,
        t_s=np.asarray(ref.timestamps, dtype=np.float64),
        ate_errors=np.asarray(ape.error, dtype=np.float64),
        est_aligned_xyz=np.asarray(est_sync.positions_xyz),
    )


def tracking_rate(
    gt_t_ns: np.ndarray, est_t_ns: np.ndarray, frame_period_s: float | None = None
) -> float:
    """GRADE's tracking rate: (duration − Σ estimate gaps longer than one frame period) ÷ duration.

    The duration is the ground truth's time span; gaps include the stretch before the first and
    after the last estimate pose. A gap counts when it exceeds 1.5 frame periods (half a period
    of slack for stamp jitter) and is then subtracted whole. The frame period defaults to the
    median spacing of the estimate's stamps.
    """
    gt_t = np.asarray(gt_t_ns, dtype=np.int64)
    start, end = int(gt_t.min()), int(gt_t.max())
    if end <= start:
        raise TrajectoryError("ground truth spans no time; tracking rate is undefined")
    est_t = np.asarray(est_t_ns, dtype=np.int64)
    est_t = np.unique(est_t[(est_t >= start) & (est_t <= end)])
    if not len(est_t):
        return 0.0
    if frame_period_s is None:
        if len(est_t) < 2:
            raise TrajectoryError("one estimate pose: pass the frame period for the tracking rate")
        period_ns = float(np.median(np.diff(est_t)))
    else:
        period_ns = frame_period_s * 1e9
    gaps = np.diff(np.concatenate([[start], est_t, [end]])).astype(np.float64)
    lost = gaps[gaps > 1.5 * period_ns].sum()
    return float((end - start - lost) / (end - start))


def _span(traj: Trajectory) -> str:
    return f"{traj.t_ns[0] / 1e9:.3f}–{traj.t_ns[-1] / 1e9:.3f} s ({len(traj)} poses)"
