"""The estimated graph as a spark-dsg graph: labelled triangle mesh, objects, places, rooms.

Same layers and node ids as the ground truth (`twinsim.dsg.layers`), so MIT-SPARK's tools and
ours read both alike. The mesh layer is the TSDF's marching-cubes mesh: vertices coloured by
class and labelled with the semantic class id, and its triangles.
"""

from __future__ import annotations

import numpy as np
import spark_dsg as dsg

from twinsim.dsg import layers
from twinsim.dsg.mesh import to_spark_mesh
from twinsim.dsg.reconstruct import EstimatedGraph
from twinsim.scene.vocabulary import CLASS_ID


def _edge(weight: float, clearance_m: float) -> dsg.EdgeAttributes:
    info = dsg.EdgeAttributes()
    info.weight, info.weighted = float(weight), True
    info.metadata.set({"clearance": float(clearance_m)})
    return info


def estimated_scene_graph(est: EstimatedGraph) -> dsg.DynamicSceneGraph:
    """Layers of the reconstruction, with room–place and room–object containment edges."""
    graph = layers.new_graph()
    graph.mesh = to_spark_mesh(est.vertices, est.faces, est.labels)

    for r, centre in enumerate(est.room_centroids):
        attrs = dsg.RoomNodeAttributes()
        attrs.position = np.array([centre[0], centre[1], 0.0])
        attrs.name = f"room_{r}"
        graph.add_node(layers.ROOMS, layers.room_id(r), attrs)
    for i, (xy, clear, room) in enumerate(
        zip(est.places.xy, est.places.clearance_m, est.places.room_id, strict=True)
    ):
        attrs = dsg.PlaceNodeAttributes()
        attrs.position = np.array([xy[0], xy[1], 0.0])
        attrs.distance = float(clear)
        graph.add_node(layers.PLACES, layers.place_id(i), attrs)
        if room >= 0:
            graph.insert_edge(layers.room_id(int(room)), layers.place_id(i))
    for (i, j), clear in zip(est.places.edges, est.places.edge_clearance_m, strict=True):
        length = np.linalg.norm(est.places.xy[i] - est.places.xy[j])
        graph.insert_edge(layers.place_id(int(i)), layers.place_id(int(j)), _edge(length, clear))
    for k, obj in enumerate(est.objects):
        attrs = dsg.ObjectNodeAttributes()
        attrs.name = f"{obj.semantic_class}_{k}"
        attrs.semantic_label = CLASS_ID[obj.semantic_class]
        attrs.position = obj.centroid.astype(float)
        dims, centre = obj.box_max - obj.box_min, (obj.box_max + obj.box_min) / 2
        attrs.bounding_box = dsg.BoundingBox(
            dims.astype(np.float32).reshape(3, 1), centre.astype(np.float32).reshape(3, 1)
        )
        attrs.metadata.set({"class": obj.semantic_class, "points": obj.n_points})
        graph.add_node(layers.OBJECTS, layers.object_id(k + 1), attrs)
        iy, ix = est.grid.cells(obj.centroid[:2])
        room = int(est.room_cells[iy, ix])
        if room >= 0:
            graph.insert_edge(layers.room_id(room), layers.object_id(k + 1))
    graph.metadata.set(
        {
            "format": "twinsim-dsg-estimate",
            "format_version": 2,
            "frames": "world: z up, metres",
            "mesh": "TSDF zero level set by marching cubes, label = semantic class id",
        }
    )
    return graph
