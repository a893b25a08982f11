"""The db-19 ZAB design (docs/semantics.md): state, RPCs, handlers, codecs and the model adapter."""

from .model import MODEL, Db19Model

__all__ = ["MODEL", "Db19Model"]
