"""kilt-chunks: section-aware chunks of the KILT Wikipedia knowledge source."""

__version__ = "0.1.0"
