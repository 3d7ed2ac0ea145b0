"""Result tables published in reports and notes (markdown pipe tables, HTML ``<table>``).

A published table is kept in long form: one ``published_results`` row per cell, with the row's
key (its first cell), the column header, the number read from the cell and the unit the header
(or the cell) names, and the caption or heading the table was published under.
"""

from __future__ import annotations

from pydantic import Field

from .models import Provenance, Row, col


class PublishedTable(Provenance):
    __table__ = "published_tables"
    __description__ = "One row per result table found in a report or note."
    __foreign_keys__ = (("source_id", "sources", "id"),)

    id: int | None = None
    format: str | None = col("published_markdown or published_html.", facet=True)
    caption: str | None = col("The caption, bold line or heading the table was published "
                              "under.", facet=True)
    columns: list[str] | None = col("The header cells, in order.")
    rows: int | None = col("Body rows of the table.", "rows")


class PublishedResult(Row):
    __table__ = "published_results"
    __description__ = ("Every cell of a published result table in long form: row key, column, "
                       "number and unit, with the caption it came from.")
    __foreign_keys__ = (("table_id", "published_tables", "id"),)

    id: int | None = None
    table_id: int | None = col("The table (published_tables.id).")
    table_index: int | None = col("Line of the table in its source file (orders tables).")
    format: str | None = col("published_markdown or published_html.", facet=True)
    caption: str | None = col("The caption, bold line or heading the table was published "
                              "under.", facet=True)
    row_index: int = Field(description="Body row, 0-based.")
    row_key: str | None = col("The row's first cell (e.g. the preset or model).", facet=True)
    column_name: str = Field(description="The column's header text.",
                             json_schema_extra={"facet": True})
    value: float | None = col("The number the cell holds, if any.")
    value_text: str | None = col("The cell as printed, markup removed.")
    unit: str | None = col("Unit from the header (`Avg Latency (s)` → s, `Gen TPS` → tok/s) "
                           "or the cell (`63.0 GB`).", facet=True)
