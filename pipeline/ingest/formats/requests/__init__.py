"""The request-log formats, one module each (see ``pipeline.ingest.formats``)."""
