"""costledger: what moves rows (ingest, build, nightly, report) into the one DuckDB file."""

__version__ = "0.37.0"
