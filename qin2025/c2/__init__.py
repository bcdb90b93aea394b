"""C2: monotone decrease: what it measures and decides (``monotone``), its calibration families and the
challenge families written from its words.
"""
