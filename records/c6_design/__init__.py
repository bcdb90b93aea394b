"""C6 v3 design scripts: exploratory seeds only (0-999, or the exploratory pool); see records/claims/c6.md."""
