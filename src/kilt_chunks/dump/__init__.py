"""Build KILT pages from a MediaWiki XML dump (any wiki, any language).

The pieces, in the order a build runs them:

* :mod:`~kilt_chunks.dump.request`: every option of a build, declared once
  (:class:`~kilt_chunks.dump.request.DumpRequest`: default, check,
  description; the command line, the manifest's request and the reuse key
  are made from it);
* :mod:`~kilt_chunks.dump.siteinfo`: namespaces, base URL and site name from
  the dump's ``<siteinfo>``, with MediaWiki's own names of the wiki's
  language (``namespace_aliases.json``);
* :mod:`~kilt_chunks.dump.xmlpages`: the ``<page>`` elements of a stretch of
  XML (a byte range of a multistream dump, or a whole file), each parsed on
  its own so that a broken one is skipped alone;
* :mod:`~kilt_chunks.dump.multistream`: Wikimedia's multistream index, split
  planning on stream boundaries, and a writer of multistream files;
* :mod:`~kilt_chunks.dump.render`: wikitext to KILT paragraphs and anchors
  (WikiExtractor 2.75's rules with KILT's joined headings, on
  mwparserfromhell);
* :mod:`~kilt_chunks.dump.shards`: the pure function that turns one split
  into one shard;
* :mod:`~kilt_chunks.dump.resolve`: anchor targets through redirects (DuckDB);
* :mod:`~kilt_chunks.dump.build`: the whole run (process pool or Ray),
  resume, manifest;
* :mod:`~kilt_chunks.dump.compare`: page-by-page fidelity of two KILT files.
"""

from kilt_chunks.dump.build import DumpBuildError, build_from_dump
from kilt_chunks.dump.compare import compare_page_files
from kilt_chunks.dump.render import render_page

__all__ = ["DumpBuildError", "build_from_dump", "compare_page_files", "render_page"]
