"""The db-19 ZAB design (docs/semantics.md): state, RPCs, handlers, codecs and the model adapter."""

from .model import MODEL, Db19Model

__all__ = ["MODEL", "Db19Model"]


def register() -> None:
    """Add the db-19 model, zabmc's default, to its registry (the entry point `db19` of the group
    `zabmc.models`, pyproject.toml)."""
    from zabmc.core.model import register_model

    from . import model

    register_model(model, "MODEL")
