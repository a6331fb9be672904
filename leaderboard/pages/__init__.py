"""The reader's pages: what anyone may browse, and its downloads. Read-only.

Views, by page family:
- ``benchmarks``: the list of benchmarks (``/``) and a leaderboard (``/benchmarks/<slug>/``);
- ``runs``: one run (``/submissions/<id>/``);
- ``comparisons``: two runs side by side, and the all-pairs significance matrix;
- ``exports``: the same data as CSV and JSON.

What they show is assembled in ``boards`` (ranked leaderboards, ranks with ties, tests
against the leader), ``menus`` (measure menus grouped from the catalog), ``paging`` (a board's pages, its search, the pinned
leader and the reader's own runs) and ``pairs`` (one pair's tests, the all-pairs matrix),
drawn as SVG in ``plots``; ``richtext`` renders organizers' Markdown safely; ``shortcuts`` holds what every view shares (visibility, problem pages,
number formats, the validators of a page read through a lens). Templates are in ``templates/leaderboard/``.

May import ``leaderboard.models`` and the engine's read-only statistics; never writes a
row and never imports the pipeline, the API or the upload flow.
"""
