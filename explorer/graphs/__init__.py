"""Graphs workspace: generators, APSP and clustering of papers 000/001/002/004, drawn with VisPy."""
