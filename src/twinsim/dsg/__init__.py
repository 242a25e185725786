"""Ground-truth 3D dynamic scene graphs (Kimera's layers, saved with spark-dsg), queries,
hierarchical planning, and graphs estimated from RGB-D with their evaluation."""

from twinsim._lazy import lazy_exports

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "DsgError": "twinsim.dsg.errors",
        "QueryError": "twinsim.dsg.errors",
        "build_scene_graph": "twinsim.dsg.ground_truth",
        "sequence_graph": "twinsim.dsg.ground_truth",
        "free_grid": "twinsim.dsg.places",
        "sample_places": "twinsim.dsg.places",
        "HierarchicalPlanner": "twinsim.dsg.planning",
        "NoPathError": "twinsim.dsg.planning",
        "PlanResult": "twinsim.dsg.planning",
        "plan_flat": "twinsim.dsg.planning",
        "SceneGraphQueries": "twinsim.dsg.queries",
        "load_graph": "twinsim.dsg.queries",
        "AgentTrack": "twinsim.dsg.tracks",
        "sequence_tracks": "twinsim.dsg.tracks",
    },
)

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
