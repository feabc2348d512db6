"""Qt/VisPy front end of GPU Science Explorer (views only; algorithms live in ``kernels``)."""
