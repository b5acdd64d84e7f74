"""Order reports for a small café."""

__version__ = "1.4.0"
