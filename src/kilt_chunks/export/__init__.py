"""The export: the Hugging Face dataset folder of a build (Parquet configs,
figures, dataset card) and its upload to the Hub. ``folder`` lays out and
writes the folder, ``dataset`` fills it, ``card`` and ``figures`` describe it,
``publish`` uploads it.

:class:`PushError` lives here, not in ``publish`` (which imports the Hub
client and ``datasets``, about a second): the command line catches it on
every command without importing them."""

__all__ = ["PushError"]


class PushError(RuntimeError):
    """The Hub could not be reached, or refused the upload; one line."""
