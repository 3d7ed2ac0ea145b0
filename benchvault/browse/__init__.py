"""What Datasette shows on top of the warehouse: canned queries, a cell-rendering plugin, CSS.

``benchvault.serve`` builds Datasette's metadata from the row models and these declarations;
nothing here is kept by hand next to the models.
"""
