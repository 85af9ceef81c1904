"""Re-anchor KILT's gold provenance onto the pages of another Wikipedia snapshot.

``kilt-chunks reanchor`` (:mod:`.command`): the evidence of each provenance
span is read on the 2019 page (:mod:`.evidence`), its page found in the new
snapshot by id, title or redirect (:mod:`.pages`), the text located there
exactly, after normalising or fuzzily (:mod:`.locate`), and the task files
written again with the new offsets (:mod:`.tasks`), with a mapping table and
a report (:mod:`.report`).
"""

from kilt_chunks.reanchor.command import ReanchorError, reanchor, reanchored_tasks
from kilt_chunks.reanchor.locate import (
    FUZZY_MIN_CHARS,
    FUZZY_THRESHOLD,
    locate,
    normalise,
)

__all__ = [
    "FUZZY_MIN_CHARS",
    "FUZZY_THRESHOLD",
    "ReanchorError",
    "locate",
    "normalise",
    "reanchor",
    "reanchored_tasks",
]
