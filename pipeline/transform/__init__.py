"""The SQL models run: incremental strategies, the build and its audits."""
