"""Development tooling beside the ledger, not shipped in its wheel: the benchmark against its peers
(``costledger benchmark``), the large sample data it runs on (``costledger sample --requests N``) and the
measured lower bound of the nightly (``python benchmarks/lower_bound.py``). They run from a source checkout."""
