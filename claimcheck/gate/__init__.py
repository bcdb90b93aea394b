"""Compare a run with a baseline: paired statistics, the gate's judgement and reserve, accept, history."""
