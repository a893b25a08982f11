"""Protocol models zabmc can check. Each sub-package implements `zabmc.core.model.Model`."""
