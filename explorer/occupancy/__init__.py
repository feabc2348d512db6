"""Occupancy workspace: calculator, the app's kernels, the papers' block-size choosers."""
