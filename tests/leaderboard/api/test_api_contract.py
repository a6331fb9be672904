"""What the schema promises, the code keeps: the measures ``?measure=`` lists are taken,
the ``Idempotency-Key`` pattern is the one the code checks, a withdrawn run refuses a
change with a 409, every path under /api/ that no route matches is a JSON 404, and the
presigned upload endpoints are offered only where files live in a bucket."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from evaluation.measures import resolve
from leaderboard.api.lenses import measure_names
from leaderboard.models import Submission
from tests.leaderboard import pages_data as data
from tests.leaderboard.api.test_api import bearer, documented_routes, error_of, upload

demo_user = data.demo_user


def schema_of(client) -> dict:
    response = client.get("/api/schema/")
    assert response.status_code == 200
    return response.json()


def parameter(operation: dict, name: str) -> dict:
    return next(p for p in operation["parameters"] if p["name"] == name)


@pytest.mark.long
def test_every_measure_the_schema_lists_ranks_the_board_and_compares_two_runs(client, demo):
    schema = schema_of(client)
    paths = schema["paths"]
    board = parameter(paths["/api/benchmarks/{slug}/"]["get"], "measure")["schema"]
    assert board["enum"] == measure_names()
    compare = paths["/api/benchmarks/{slug}/compare/{a}/{b}/"]["get"]
    assert parameter(compare, "measure")["schema"]["enum"] == measure_names()
    # the trec_eval names of the catalog, each once, no counts and no summary-only ones
    assert len(set(board["enum"])) == len(board["enum"]) > 60
    assert {"map", "P_10", "ndcg_cut_10", "recip_rank_cut_10", "judged_10"} <= set(board["enum"])
    assert not {"num_ret", "num_rel", "num_q", "gm_map", "runid"} & set(board["enum"])
    assert all(resolve(name).column == name for name in board["enum"])
    a, b = Submission.objects.filter(benchmark__slug="library").order_by("pk")[:2]
    for name in board["enum"]:
        ranked = client.get(f"/api/benchmarks/library/?measure={name}")
        assert ranked.status_code == 200, (name, ranked.content[:300])
        assert ranked.json()["leaderboard"]["ranked_by"] == name
        compared = client.get(f"/api/benchmarks/library/compare/{a.pk}/{b.pk}/?measure={name}")
        assert compared.status_code == 200, (name, compared.content[:300])
    # what the schema does not list: a count, an unknown name, still a 400 with its body
    assert "count" in error_of(client.get("/api/benchmarks/library/?measure=num_ret"), 400)["error"]
    unknown = error_of(client.get("/api/benchmarks/library/?measure=P@1O"), 400)
    assert "suggestions" in unknown["details"]
    # the significance matrix takes the benchmark's tested measures only: a documented 400
    significance = paths["/api/benchmarks/{slug}/significance/"]["get"]
    assert significance["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
    untested = error_of(client.get("/api/benchmarks/library/significance/?measure=P_5"), 400)
    assert "map" in untested["details"]["measure"][0]


def test_the_idempotency_key_pattern_is_the_one_the_code_checks(client, library, participant):
    schema = schema_of(client)
    post = schema["paths"]["/api/benchmarks/{slug}/submissions/"]["post"]
    key = parameter(post, "Idempotency-Key")["schema"]
    assert (key["minLength"], key["maxLength"]) == (1, 255)
    pattern = re.compile(key["pattern"])
    assert "400" in post["responses"]
    accepted = ["k", "0f8fad5b-d9cb-469f-a165-70867728950e", "~" * 255, 'a!b"c#{}']
    refused = ["", "x" * 256, "caf\u00e9", "two words", "tab\there"]
    for value in accepted:
        assert pattern.fullmatch(value) and len(value) <= 255, value
        headers = {**bearer(participant), "Idempotency-Key": value}
        response = upload(client, headers)
        assert response.status_code in (201, 409), (value, response.content)  # 409: same file
    for value in refused:
        assert not (pattern.fullmatch(value) and 1 <= len(value) <= 255), value
        body = error_of(upload(client, {**bearer(participant), "Idempotency-Key": value}), 400)
        assert "Idempotency-Key" in body["error"], value


def test_a_change_to_a_withdrawn_run_is_a_documented_409(client, demo):
    run = Submission.objects.filter(benchmark__slug="library").first()
    headers = bearer(run.participant)
    assert client.post(f"/api/submissions/{run.pk}/withdraw/", headers=headers).status_code == 200
    for method, path in [
        ("patch", f"/api/submissions/{run.pk}/"),
        ("post", f"/api/submissions/{run.pk}/hide/"),
        ("post", f"/api/submissions/{run.pk}/unhide/"),
    ]:
        response = getattr(client, method)(
            path, {}, content_type="application/json", headers=headers
        )
        assert error_of(response, 409)["details"] == {"status": "withdrawn"}, path
    paths = schema_of(client)["paths"]
    assert "409" in paths["/api/submissions/{submission_id}/"]["patch"]["responses"]
    assert "409" in paths["/api/submissions/{submission_id}/hide/"]["post"]["responses"]
    assert "400" not in paths["/api/submissions/{submission_id}/hide/"]["post"]["responses"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/nothing-here/",
        "/api/submissions/%0A/",  # a newline: no route's pattern matches it
        "/api/benchmarks/library/compare/1/%0A2/",
        "/api/\n",
        "/api/schema/%0A",
    ],
)
def test_a_path_under_api_no_route_matches_is_a_json_404(client, db, path):
    response = client.get(path)
    assert response["Content-Type"] == "application/json"
    assert "routes are listed" in error_of(response, 404)["error"]


@pytest.mark.parametrize(
    "path", ["/api/benchmarks", "/api/benchmarks/library", "/api/submissions/1/per-need"]
)
def test_a_path_missing_its_trailing_slash_is_told_the_one_it_meant(client, db, path):
    """curl $URL/api/benchmarks/library answered only "No such endpoint"."""
    body = error_of(client.get(path), 404)
    assert body["error"] == f"No such endpoint; did you mean {path}/ (with the final slash)?"
    for other in ("/api/nothing-here", "/api/submissions/1/per-needs"):  # no route with "/"
        assert "routes are listed" in error_of(client.get(other), 404)["error"]


def test_a_page_no_route_matches_outside_api_is_still_the_sites_page(client, db):
    response = client.get("/no-such-page/%0A")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_presigned_uploads_are_in_the_schema_only_with_a_bucket(client, db, settings):
    presigned = set(documented_routes(presigned=True)) - set(documented_routes())
    assert presigned == {"/api/benchmarks/{slug}/uploads/", "/api/uploads/{token}/confirm/"}
    assert not presigned & set(schema_of(client)["paths"])


def test_presigned_uploads_are_documented_with_a_bucket(client, bucket, db):
    paths = schema_of(client)["paths"]
    assert "201" in paths["/api/benchmarks/{slug}/uploads/"]["post"]["responses"]
    assert "/api/uploads/{token}/confirm/" in paths


def test_the_board_significance_states_are_all_in_the_schema(client, demo_user):
    schema = schema_of(client)["components"]["schemas"]
    ref = schema["Leaderboard"]["properties"]["significance"]["$ref"]
    states = set(schema[ref.rsplit("/", 1)[-1]]["enum"])
    assert {"stored", "computed", "unavailable", "untested", "none"} == states
    # GMAP is a summary over needs: no per-need values to pair, the board says "untested"
    benchmark = data.make_benchmark("gmap", {"n1": "one", "n2": "two"})
    for name, value in (("a", 0.5), ("b", 0.3)):
        frame = pd.DataFrame({"map": [value, value]}, index=["n1", "n2"])
        data.add_run(benchmark, demo_user, name, frame, summary={"map": value, "gm_map": value})
    answer = client.get("/api/benchmarks/gmap/", {"measure": "gm_map"}).json()
    assert answer["leaderboard"]["significance"] == "untested"
