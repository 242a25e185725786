"""Mesh assets from catalogues: `catalogue` (the `assets.yaml` format and its checked paths),
`meshes` (a file read with trimesh: units, up axis, colours, checks), `collision` (CoACD's
convex parts, cached, or the hull), `placement` (copies drawn and placed by a generator, made
objects with their assets) and `posed` (a copy's triangles in the world, for the consumers).
The assets' arrays and byte form are `twinsim.meshdata`; docs/assets.md.
"""
