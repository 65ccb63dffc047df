"""Hotel Reservation problems: one module per theme (application, network, platform ...)."""
