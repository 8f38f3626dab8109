"""``costledger pull``: fetch what the ledger reads from where teams keep it (a Prometheus server, the providers'
organisation usage and cost endpoints) into the landing folder, where the nightly then loads it. Nothing here writes
the ledger itself: a pulled page is a landing file like any other, named by what it holds, written whole or not at
all, and not pulled again once there."""
