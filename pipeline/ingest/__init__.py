"""A file's journey into the ledger: reading its format, typing and checking its rows, the lake file."""
