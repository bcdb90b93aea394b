"""Say where a result came from: code fingerprints, the ledger, the machine's numerics, the pins."""
