"""The matchmaker: quick match, private tables, room codes, seat tokens, table placement.

All state lives in a store (Redis, or memory for ``rackem up`` without Redis), so any
number of matchmaker replicas can run side by side. Entry points are in ``server``.
"""
