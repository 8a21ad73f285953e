"""What the pieces of a replica's table set (adoption.py, creation.py) may ask of it
(``Tables``, tables.py): its settings and store, the live tables, the registry, the
leases, and the calls that serve, find and finish a table. They import this, never
tables.py, so the set and its pieces import no one in a circle."""

from __future__ import annotations

from typing import Protocol

from services.common.registry import Registry
from services.table.leases import Leases
from services.table.metrics import TableMetrics
from services.table.settings import TableSettings
from services.table.store import TableStore
from services.table.table import Table, TableConfig

__all__ = ["TablesApi"]


class TablesApi(Protocol):
    @property
    def settings(self) -> TableSettings: ...
    @property
    def config(self) -> TableConfig: ...
    @property
    def store(self) -> TableStore: ...
    @property
    def registry(self) -> Registry: ...
    @property
    def replica_id(self) -> str: ...
    @property
    def live(self) -> dict[str, Table]: ...
    @property
    def draining(self) -> bool: ...
    @property
    def leases(self) -> Leases: ...
    @property
    def metrics(self) -> TableMetrics | None: ...

    async def get(self, table_id: str) -> Table:
        """The table, taken over if its owner is gone (adoption.py)."""

    def serve(self, table: Table) -> None:
        """Start serving a table this replica now holds."""

    async def finish(self, table: Table) -> None:
        """Let a finished table go from the live set."""

    def ended(self, outcome: str) -> None:
        """Count a match that ended here, by outcome (metrics.py's ``OUTCOMES``)."""

    async def finished_elsewhere(self, table_id: str) -> None:
        """A table finished by a replica that died before it left the lease index."""
