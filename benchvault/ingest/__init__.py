"""The ingest pipeline: one module per stage, in the order a file's data passes through them.

    find      which files to read, and whether each is stored as it is now
    read      a file cut into pieces: blocks, lines, pasted files (reading/ does the cutting)
    parse     each piece built into validated rows by its format (parsers/)
    workers   many small files read and parsed in a process pool
    tail      a file still being written, read as far as it is and waiting for more
    link      rows tied to the server launch they ran against, within a file
    identify  a row seen before becomes a sighting of the stored one (experiments/identity)
    store     a file's rows, sightings and warnings written in one transaction
    pipeline  the stages run in turn for each file: ``ingest_paths``, ``ingest_file``
    watch     ``ingest --watch``: the pipeline run on files as they grow, a part at a time

A stage imports only the stages before it; ``outcome`` (what ingest says of a file) is shared
by all.  Nothing is imported here, so that ``find`` answers an ingest of unchanged files
before the parsers load: import ``benchvault.ingest.pipeline`` for the library's entry points.
"""
