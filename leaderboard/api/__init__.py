"""The JSON API under ``/api/``, on Django REST framework; the OpenAPI schema is generated
by drf-spectacular from the views and serializers.

- ``views``: reading (benchmarks, a leaderboard, runs, per-need values, the daily quota);
- ``submit``: submitting a run (409 on duplicates, ``Idempotency-Key``);
- ``compare``: comparisons, the significance matrix, CSV and JSON exports;
- ``owners``: a participant's own run: edit, hide, show again, withdraw;
- ``uploads``: presigned uploads straight to the bucket (start, confirm);
- ``organizers``: creating benchmarks, loading needs and judgments, rescoring;
- ``splits``: a benchmark's private needs (organizers only);
- ``tokens``: logging in for a token, listing and revoking tokens;
- ``authentication``, ``throttling``, ``errors``, ``base``, ``serializers``, ``schema``:
  the bearer tokens, rate limits, JSON errors and what the views share;
- ``docs``: Swagger UI at ``/api/docs/``; ``urls``: the routes (under ``api/``).

May import ``leaderboard.models``, ``leaderboard.accounts``, the pages' assembling modules
(the API shows what the pages show, ranked the same way), the upload flow (the API submits
through it, and queues comparisons when a run is shown again as the pages do) and ``leaderboard.pipeline.loading`` (organizers load files as the admin does).
"""
