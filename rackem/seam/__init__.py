"""What lets ``rackem up`` skip sockets: its services reach each other in this process.

Only ``rackem/up.py`` wires this. The services themselves know nothing of it: the
gateway is given how to open a link to a replica address (``tables.LocalTables.link``)
and what to call the matchmaker through (``matchmaker.LocalMatchmaker``), the
matchmaker how to create a table on a replica address (``LocalTables.creators``), the
table replica what to ask its bots' moves of (``bots.LocalBots``); every other
deployment, and every test of the services, uses real gRPC channels instead. Each call
copies its messages as a wire would (``wire.copied``).
"""
