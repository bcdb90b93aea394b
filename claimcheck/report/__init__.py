"""Write a run down: its data, the markdown report, figures, and the report's set of files."""
