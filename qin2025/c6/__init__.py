"""C6: the residual advantage across depth on SST-2: what it measures and decides (``residual_depth``),
its calibration families and the challenge families written from its words.
"""
