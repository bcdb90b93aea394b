"""C8: the multi-layer linear rate (its measurement and decision are C1's, per depth): what it measures
and decides (none of its own), its calibration families and the challenge families written from its
words.
"""
