"""The source papers behind the workspaces (shown in Help ▸ About)."""

PAPERS = [
    ("000", "A. Leist, D. P. Playne, K. A. Hawick",
     "Exploiting graphical processing units for data-parallel scientific applications",
     "Concurrency Computat.: Pract. Exper. 21:2400–2437, 2009 (DOI 10.1002/cpe.1462)"),
    ("001", "K. A. Hawick, A. Leist, D. P. Playne",
     "Mixing Multi-Core CPUs and GPUs for Scientific Simulation Software",
     "Massey University technical report, c. 2009"),
    ("002", "P. Carrega, V. Ferreira",
     "A Study in CUDA Usage (Floyd–Warshall on CUDA)",
     "Universidade de Lisboa"),
    ("003", "L. Solano-Quinde, B. Bode, Z. J. Wang, A. K. Somani",
     "Unstructured Grid Applications on GPU: Performance Analysis and Improvement",
     "GPGPU-4, Newport Beach, 2011"),
    ("004", "T. Okuyama",
     "Accelerating GPU Programs by Reducing Irregular Control Flow and Memory Access "
     "(includes the Flint chapter)",
     "PhD thesis, Osaka University, 2013"),
]
