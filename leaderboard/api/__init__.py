"""The JSON API under ``/api/``: token-authenticated reads and run submission.

- ``views``: the endpoints, the bearer-token check and the JSON errors;
- ``openapi``: the OpenAPI document served at ``/api/schema/``;
- ``urls``: the routes (included by ``leaderboard.urls`` under ``api/``).

May import ``leaderboard.models``, the pages' assembling modules (the API shows what the
pages show, ranked the same way) and the upload flow (the API submits through it).
"""
