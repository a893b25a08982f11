"""The seeded tick simulator of the db-19 design: clock, seeded network, partitions, dump digest."""

from .rng import splitmix64
from .simulator import (SimConfig, SimResult, Simulator, proposal_schedule, require_simulable,
                        simulate)

__all__ = ["splitmix64", "SimConfig", "SimResult", "Simulator", "proposal_schedule", "require_simulable",
           "simulate"]
