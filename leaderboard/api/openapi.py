"""The OpenAPI 3.1 document of the JSON API (``/api/schema/``), written by hand.

A test derives the routes from ``leaderboard.api.urls.urlpatterns`` and checks that every one
is described here with its methods and parameters.
"""

from __future__ import annotations

from typing import Any

from leaderboard.models import Submission


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(description: str, schema: dict) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    return {str(code): {"$ref": f"#/components/responses/{ERRORS[code][0]}"} for code in codes}


ERRORS = {
    400: (
        "BadRequest",
        "Invalid upload (`error` is the first reason, `file:line: reason`) or unknown "
        "measure (`details.suggestions`).",
    ),
    401: ("Unauthorized", "Missing (where required), malformed, unknown or revoked token."),
    403: ("Forbidden", "The benchmark is closed for submissions."),
    404: ("NotFound", "No such benchmark, run or endpoint, or not visible to the caller."),
    405: ("MethodNotAllowed", "Method not allowed; the `Allow` header lists the allowed ones."),
    413: ("TooLarge", "The upload is larger than the limit."),
    429: (
        "TooManyRequests",
        "The daily limit is used up, or too many unknown tokens came from the caller's "
        "address; `Retry-After` says how many seconds to wait.",
    ),
}
NULLABLE_NUMBER = {"type": ["number", "null"]}
SUMMARY = {
    "type": "object",
    "description": "Every measure, by trec_eval's name (`map`, `P_10`, `ndcg_cut_10`, ...).",
    "additionalProperties": NULLABLE_NUMBER,
}
SLUG = {"name": "slug", "in": "path", "required": True, "schema": {"type": "string"}}
SUBMISSION_ID = {
    "name": "submission_id",
    "in": "path",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
}
OPTIONAL_TOKEN: list[dict] = [{}, {"bearer": []}]


def openapi() -> dict[str, Any]:
    """The API's OpenAPI 3.1 document, written by hand (tests hold it to the routes)."""
    string, integer, boolean = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
    when = {"type": ["string", "null"], "format": "date-time"}
    benchmark = {
        "type": "object",
        "required": ["slug", "title", "primary_measure", "open", "judgments_version"],
        "properties": {
            "slug": string,
            "title": string,
            "description": string,
            "primary_measure": string,
            "shown_measures": {"type": "array", "items": string},
            "tested_measures": {
                "type": "array",
                "items": string,
                "description": "Measures every pair of runs is tested on (primary first).",
            },
            "interpolation": {
                "type": "string",
                "enum": ["exact", "trec_eval-9", "trec_eval-10"],
                "description": "How iprec_at_recall and 11pt_avg are computed.",
            },
            "open": {"type": "boolean", "description": "Open for submissions."},
            "daily_limit": {
                "type": "integer",
                "description": "Runs per participant per UTC day (failed ones do not count).",
            },
            "judgments_version": {"type": ["integer", "null"]},
            "num_needs": integer,
            "url": {"type": "string", "format": "uri"},
            "page": {"type": "string", "format": "uri"},
        },
    }
    run = {
        "type": "object",
        "properties": {
            "rank": {
                "type": ["integer", "null"],
                "description": "Competition rank on the value rounded to 4 decimals.",
            },
            "submission_id": integer,
            "run_name": string,
            "participant": string,
            "submitted": {"type": "string", "format": "date-time"},
            "baseline": boolean,
            "hidden": boolean,
            "num_needs": integer,
            "value": {**NULLABLE_NUMBER, "description": "The `ranked_by` measure."},
            "p_vs_leader_holm": {
                **NULLABLE_NUMBER,
                "description": "Paired t-test against #1, Holm-corrected over the board.",
            },
            "summary": SUMMARY,
        },
    }
    leaderboard = {
        "allOf": [
            _ref("Benchmark"),
            {
                "type": "object",
                "properties": {
                    "leaderboard": {
                        "type": "object",
                        "properties": {
                            "ranked_by": string,
                            "measures": {"type": "array", "items": string},
                            "significance": {"enum": ["stored", "computed", "unavailable", "none"]},
                            "notes": {"type": "array", "items": string},
                            "runs": {"type": "array", "items": _ref("LeaderboardRun")},
                        },
                    }
                },
            },
        ]
    }
    submission = {
        "type": "object",
        "required": ["id", "status", "failure_reason", "summary"],
        "properties": {
            "id": integer,
            "benchmark": string,
            "run_name": string,
            "participant": string,
            "description": string,
            "status": {"enum": [s.value for s in Submission.Status]},
            "waiting_for_queue": {
                "type": "boolean",
                "description": "True while a queued run is stored but not yet handed to the "
                "scoring queue (it was not answering); it is sent, and then scored, as soon as "
                "the queue answers.",
            },
            "failure_reason": {
                "type": "string",
                "description": "Why scoring failed, as `file:line: reason`; empty otherwise.",
            },
            "warnings": {"type": "array", "items": string},
            "baseline": boolean,
            "hidden": boolean,
            "submitted": {"type": "string", "format": "date-time"},
            "finished": when,
            "judgments_version": {"type": ["integer", "null"]},
            "summary": {
                "oneOf": [SUMMARY, {"type": "null"}],
                "description": "Null until the run has been scored.",
            },
            "url": {"type": "string", "format": "uri"},
            "per_need_url": {"type": "string", "format": "uri"},
            "page": {"type": "string", "format": "uri"},
        },
    }
    per_need = {
        "type": "object",
        "properties": {
            "id": integer,
            "run_name": string,
            "judgments_version": integer,
            "measures": {"type": "array", "items": string},
            "needs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "need_id": string,
                        "values": {"type": "object", "additionalProperties": NULLABLE_NUMBER},
                    },
                },
            },
        },
    }
    error = {
        "type": "object",
        "required": ["error", "details"],
        "properties": {
            "error": {"type": "string", "description": "What went wrong, for a person."},
            "details": {
                "type": "object",
                "description": "Per form field, the list of reasons (`non_field` for the "
                "others); `limit` and `resets_at` with a 429 for the daily limit, `retry_after` with "
                "one for unknown tokens; `allowed` with a 405.",
            },
        },
    }
    upload = {
        "type": "object",
        "required": ["file"],
        "properties": {
            "file": {
                "type": "string",
                "contentMediaType": "application/octet-stream",
                "description": "TREC run: `need_id Q0 doc_id rank score tag`; plain or gzip.",
            },
            "run_name": {
                "type": "string",
                "pattern": "^[A-Za-z0-9._-]{1,40}$",
                "description": "Defaults to the run's tag; unique on the benchmark.",
            },
            "description": string,
        },
    }
    paths = {
        "/api/benchmarks/": {
            "get": {
                "operationId": "listBenchmarks",
                "summary": "Benchmarks the caller may see",
                "security": OPTIONAL_TOKEN,
                "responses": {
                    "200": _json(
                        "The benchmarks.",
                        {
                            "type": "object",
                            "properties": {
                                "benchmarks": {"type": "array", "items": _ref("Benchmark")}
                            },
                        },
                    ),
                    **_errors(401, 405, 429),
                },
            }
        },
        "/api/benchmarks/{slug}/": {
            "get": {
                "operationId": "getBenchmark",
                "summary": "A benchmark and its leaderboard",
                "description": "Runs the caller may see (hidden ones only for their owner "
                "and the organizers), each with every summary measure.",
                "security": OPTIONAL_TOKEN,
                "parameters": [
                    SLUG,
                    {
                        "name": "measure",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string"},
                        "description": "Rank by this measure (default: the primary one), "
                        "in either name system (`nDCG@10` or `ndcg_cut_10`); an unknown name "
                        "is a 400 whose `details.suggestions` lists close matches.",
                    },
                ],
                "responses": {
                    "200": _json("The benchmark with its leaderboard.", _ref("Leaderboard")),
                    **_errors(400, 401, 404, 405, 429),
                },
            }
        },
        "/api/benchmarks/{slug}/submissions/": {
            "post": {
                "operationId": "submitRun",
                "summary": "Submit a run",
                "description": "Validated as the web form validates it and counted against "
                "the same daily limit; scored in the background (poll the run's `url`).",
                "security": [{"bearer": []}],
                "parameters": [SLUG],
                "requestBody": {
                    "required": True,
                    "content": {"multipart/form-data": {"schema": _ref("Upload")}},
                },
                "responses": {
                    "201": {
                        **_json("Stored and queued.", _ref("Submission")),
                        "headers": {
                            "Location": {
                                "description": "The run's API URL.",
                                "schema": {"type": "string"},
                            }
                        },
                    },
                    **_errors(400, 401, 403, 404, 405, 413, 429),
                },
            }
        },
        "/api/submissions/{submission_id}/": {
            "get": {
                "operationId": "getSubmission",
                "summary": "A run's status, failure reason and summary",
                "security": OPTIONAL_TOKEN,
                "parameters": [SUBMISSION_ID],
                "responses": {
                    "200": _json("The run.", _ref("Submission")),
                    **_errors(401, 404, 405, 429),
                },
            }
        },
        "/api/submissions/{submission_id}/per-need/": {
            "get": {
                "operationId": "getPerNeed",
                "summary": "A scored run's value of every measure on every need",
                "security": OPTIONAL_TOKEN,
                "parameters": [SUBMISSION_ID],
                "responses": {
                    "200": _json("Per-need values.", _ref("PerNeed")),
                    **_errors(401, 404, 405, 429),
                },
            }
        },
        "/api/schema/": {
            "get": {
                "operationId": "getSchema",
                "summary": "This document",
                "security": [{}],
                "responses": {
                    "200": _json("OpenAPI 3.1 document.", {"type": "object"}),
                    **_errors(405),
                },
            }
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Ranked retrieval leaderboards API",
            "version": "1",
            "description": "Benchmarks, leaderboards, submitting runs and polling their "
            "scores. Issue a token at /accounts/tokens/ and send it as "
            "`Authorization: Bearer <token>`. Without a token, GET requests see what an "
            'anonymous reader sees. Every error is `{"error": ..., "details": {...}}`.',
        },
        "servers": [{"url": "/"}],
        "security": OPTIONAL_TOKEN,
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "A token from /accounts/tokens/.",
                }
            },
            "schemas": {
                "Benchmark": benchmark,
                "Leaderboard": leaderboard,
                "LeaderboardRun": run,
                "Submission": submission,
                "PerNeed": per_need,
                "Upload": upload,
                "Error": error,
            },
            "responses": {
                name: _json(description, _ref("Error")) for name, description in ERRORS.values()
            },
        },
    }
