"""Errors the compute library raises with a message meant for the user."""


class ExplorerError(Exception):
    """Base class: the message is shown as-is in the GUI and printed by the CLI."""


class InvalidParameter(ExplorerError, ValueError):
    """A parameter value is out of its allowed range."""


class GridTooLarge(ExplorerError, MemoryError):
    """The requested grid does not fit in the available (GPU or host) memory."""


class SimulationBlowUp(ExplorerError, FloatingPointError):
    """The field became NaN/Inf (or exploded); the last good state was kept."""


class BackendUnavailable(ExplorerError, RuntimeError):
    """A GPU backend was requested but no usable CUDA device/CuPy is present."""


class Unsupported(ExplorerError, NotImplementedError):
    """The input uses a construct this code does not handle; the message names the element.

    Refusing is the honest answer: the construct is never silently dropped."""
