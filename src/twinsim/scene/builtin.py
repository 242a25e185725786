"""Registers the built-in world generators (imported by the registry on its first look-up)."""

from twinsim.registries import GENERATORS
from twinsim.scene.apartment_generator import Apartment
from twinsim.scene.town import Town
from twinsim.scene.warehouse import Warehouse

GENERATORS.register(Apartment.name, Apartment())
GENERATORS.register(Warehouse.name, Warehouse())
GENERATORS.register(Town.name, Town())
