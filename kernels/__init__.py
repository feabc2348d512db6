"""GPU Science Explorer compute library.

Pure array code (CuPy on a CUDA GPU, NumPy otherwise).  Never imports Qt,
VisPy or pyqtgraph, so everything here runs and tests without a display.
"""
