"""Demo and benchmark landing data: realistic files for every kind the ledger loads."""
