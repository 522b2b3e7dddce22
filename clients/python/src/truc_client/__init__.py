"""Python client of truc: bots (and, later, the typed client)."""
