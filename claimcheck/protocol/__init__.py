"""A claim's protocol, stated before it runs: statistics, thresholds, units, seeds, budgets."""
