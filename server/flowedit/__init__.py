"""flowedit: a real-time AI editing language server."""
__version__ = "0.1.0"
