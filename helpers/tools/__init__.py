"""Maintainers' tools, kept apart from what the lessons import.

``series`` runs the notebooks headless (and publishes a run), ``report`` builds the
results table from records, ``colab`` stamps the Colab cells into every notebook.
"""
