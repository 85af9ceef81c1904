"""The build: KILT pages loaded, cut into sections and chunks (resumable),
and what each build records (settings, versions, the input and the export it
owns)."""

__all__: list[str] = []
