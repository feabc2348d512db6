"""Graph data: the :class:`~.graph.Graph` / CSR / int4 layouts and their files (:mod:`.graph`), the
seeded generators (:mod:`.generators`), paper 004's directed graphs (:mod:`.digraphs`), summary
statistics (:mod:`.stats`) and the uniform picking grid over vertex positions (:mod:`.spatial`).
"""
