"""The ``claimcheck`` command: re-render, compare, audit, ledger, calibrate, stability and mutants."""
