"""The `car` kind: a saloon on a dynamic bicycle model, routed over a town's lanes."""
