"""Every response carries a Permissions-Policy that refuses the browser's powerful
features (camera, microphone, location, ...): pages, downloads, the API, errors, /health/."""

from __future__ import annotations

import pytest
from django.conf import settings

REFUSED = ("camera", "microphone", "geolocation", "payment", "usb", "display-capture")


def policy_of(response) -> dict[str, str]:
    header = response["Permissions-Policy"]
    return dict(item.strip().split("=", 1) for item in header.split(","))


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/benchmarks/library/",
        "/benchmarks/library/leaderboard.csv",
        "/api/benchmarks/",
        "/api/no-such-endpoint/",
        "/no-such-page/",
        "/health/",
        "/accounts/login/",
    ],
)
def test_every_response_refuses_the_powerful_features(client, demo, url):
    response = client.get(url)
    policy = policy_of(response)
    for feature in REFUSED:
        assert policy[feature] == "()", (url, feature)
    assert set(policy) == set(settings.PERMISSIONS_POLICY)


def test_a_refused_post_carries_it_too(client, demo):
    response = client.post("/api/submissions/1/hide/")
    assert response.status_code in (401, 403)
    assert policy_of(response)["camera"] == "()"
