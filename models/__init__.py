"""Protocol models zabmc can check. Each sub-package implements `zabmc.model.Model`."""
