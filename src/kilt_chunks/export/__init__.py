"""The export: the Hugging Face dataset folder of a build (Parquet configs,
figures, dataset card) and its upload to the Hub. ``folder`` lays out and
writes the folder, ``dataset`` fills it, ``card`` and ``figures`` describe it,
``publish`` uploads it."""

__all__: list[str] = []
