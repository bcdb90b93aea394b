"""Keep computed results on disk: cache keys, the content-addressed store, locks and atomic files."""
