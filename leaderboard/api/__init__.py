"""The JSON API under ``/api/``, on Django REST framework; the OpenAPI schema is generated
by drf-spectacular from the views and serializers.

- ``views``: reading (benchmarks, a leaderboard, runs, per-need values, the daily quota);
- ``submit``: submitting a run (409 on duplicates, ``Idempotency-Key``);
- ``comparisons``: two runs compared, the all-pairs significance matrix;
- ``exports``: the CSV and JSON downloads (a leaderboard, a run's per-need values);
- ``owners``: a participant's own run: edit, hide, show again, withdraw;
- ``uploads``: presigned uploads straight to the bucket (start, confirm);
- ``campaigns``: final runs, a run's per-need results, pools and the campaign summary;
- ``organizers``: creating benchmarks, loading needs and judgments, rescoring;
- ``phases``: a benchmark's phases (organizers only);
- ``splits``: a benchmark's private needs (organizers only);
- ``tokens``: logging in for a token, listing and revoking tokens;
- ``lenses``: the ``?judgments=`` and ``?needs=`` query every reading endpoint takes;
- ``authentication``, ``throttling``, ``errors``, ``base``, ``serializers``, ``schema``:
  the bearer tokens, rate limits, JSON errors and what the views share;
- ``docs``: Swagger UI at ``/api/docs/``; ``urls``: the routes (under ``api/``).

May import ``leaderboard.models``, the engine (its errors and measure names), the read
layer ``leaderboard.reading`` (the API shows what the pages show, ranked the same way),
``leaderboard.accounts.throttle`` (failed log-ins, unknown tokens), the upload flow's
modules that are not pages (``uploads.receiving``, ``uploads.presigned``,
``uploads.forms``: the API submits through them as the form does), ``campaigns.exports``
(a pool's download), ``leaderboard.admin_forms`` and the pipeline (to queue scoring,
comparisons and pools, and ``pipeline.loading`` to load files as the admin does). Never a
page: nothing of ``leaderboard.pages`` and no other package's ``views`` module
(tests/test_layout.py checks).
"""
