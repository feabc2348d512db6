"""Flint model runner workspace (paper 004 ch. 5)."""
