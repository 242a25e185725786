"""Registers the built-in world generators (imported by the registry on its first look-up)."""

from twinsim.registries import GENERATORS
from twinsim.scene.worlds.apartment.config import Apartment
from twinsim.scene.worlds.town.generator import Town
from twinsim.scene.worlds.warehouse.generator import Warehouse

GENERATORS.register(Apartment.name, Apartment())
GENERATORS.register(Warehouse.name, Warehouse())
GENERATORS.register(Town.name, Town())
