"""PyPTO: a tile-kernel compiler with built-in compile profiling."""
__version__ = "0.1.0"
