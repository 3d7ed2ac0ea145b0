"""What the warehouse knows about its rows, decided in one place for ingest, reports and views.

- :mod:`.identity`: when two sightings are one row (a printed block and the --save-result JSON
  of that run, one note pasted twice), and how their values merge;
- :mod:`.sightings`: keeping every sighting in the database and the one row they make;
- :mod:`.configs`: what defines a run (its configuration), which configurations compare (a
  group), and the model family / quantization / hardware those rest on;
- :mod:`.refresh`: the ``configurations`` and ``experiment_groups`` tables kept up to date.
"""
