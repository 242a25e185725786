"""Blender Cycles as a renderer of twinsim worlds: the only package that imports `bpy`.

`settings` (what a Cycles render is asked for), `blender` (importing bpy lazily, with the
install hint), `camera` (OpenCV optical frame and K ↔ Blender camera), `geometry` (the
MuJoCo-built geoms as triangle meshes), `materials` and `lights` (MuJoCo's look as Cycles
materials and lights), `scene` (a Blender scene kept in step with a running `World`) and
`passes` (reading the rendered colour, z-depth and object-index passes back).
"""
