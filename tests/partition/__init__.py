"""A real network between the services, and faults on it (docs/partitions.md)."""
