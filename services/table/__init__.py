"""The table service: owns live tables, applies moves, runs clocks, streams each seat its view."""
