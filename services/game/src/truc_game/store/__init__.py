"""Storage adapters: the game store on Redis (keys, Lua scripts, event log)."""
