"""Datasette plugins benchvault serves with (loaded by ``datasette --plugins-dir``)."""
