"""Mechanism moved to :mod:`multibody.model.mechanism` (a model type, not a catalogue entry);
this name stays importable."""
from ..model.mechanism import Mechanism

__all__ = ["Mechanism"]
