"""The files: DuckDB connections, the lake, the meta tables, the published snapshots."""
