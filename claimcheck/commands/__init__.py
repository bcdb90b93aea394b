"""The ``claimcheck`` command and what only it runs: suite runs in subprocesses, stability, mutants."""
