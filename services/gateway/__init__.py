"""The gateway: the public surface. JSON over WebSocket in, gRPC to matchmaker and table out."""
