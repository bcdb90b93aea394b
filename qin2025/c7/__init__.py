"""C7: the rate set by the conditioning of Z: what it measures and decides (``conditioning``,
``rotation``), its calibration families and the challenge families written from its words.
"""
