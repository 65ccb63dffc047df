"""Registers the Chaos Mesh controller and the node-OS ticker (their code lives in twin/chaos)."""

from __future__ import annotations

from sregym.twin.chaos.controller import ChaosController
from sregym.twin.chaos.nodeos import NodeOSController
from sregym.twin.controller import controller

controller(NodeOSController)
controller(ChaosController)
