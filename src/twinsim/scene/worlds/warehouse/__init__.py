"""The `warehouse` generator: racks of pallets in aisles under high lights."""
