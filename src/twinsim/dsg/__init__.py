"""Ground-truth 3D dynamic scene graphs (Kimera's layers, saved with spark-dsg), queries,
hierarchical planning, and graphs estimated from RGB-D with their evaluation."""

from twinsim.dsg.errors import DsgError, QueryError
from twinsim.dsg.ground_truth import build_scene_graph, sequence_graph
from twinsim.dsg.places import free_grid, sample_places
from twinsim.dsg.planning import HierarchicalPlanner, NoPathError, PlanResult, plan_flat
from twinsim.dsg.queries import SceneGraphQueries, load_graph
from twinsim.dsg.tracks import AgentTrack, sequence_tracks

__all__ = [
    "AgentTrack",
    "DsgError",
    "HierarchicalPlanner",
    "NoPathError",
    "PlanResult",
    "QueryError",
    "SceneGraphQueries",
    "build_scene_graph",
    "free_grid",
    "load_graph",
    "plan_flat",
    "sample_places",
    "sequence_graph",
    "sequence_tracks",
]
