"""Social Network problems: one module per theme (network, kubernetes, datastores, metastable)."""
