"""A real S3 endpoint for the tests: moto's server mode, a separate process speaking HTTP
on a free port, and a fresh bucket per test that the platform's default storage uses.

``s3_server`` (one per test session) and ``bucket`` (per test) are fixtures;
``S3Server`` starts and stops a server (a test that needs one to stop starts its own).
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from dataclasses import dataclass

import boto3
import pytest
import requests

from leaderboard.environment import s3_storage
from tests.leaderboard.workers import free_port

KEY, SECRET, REGION = "testing", "testing-secret", "us-east-1"


class S3Server:
    """``python -m moto.server`` on 127.0.0.1 and a free port, until ``stop``."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(self.url, timeout=1)
                return
            except (requests.ConnectionError, requests.Timeout):  # not up, or slow to answer
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    pytest.fail(f"moto's S3 server did not start on port {self.port}")
                time.sleep(0.1)

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=KEY,
            aws_secret_access_key=SECRET,
            region_name=REGION,
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@dataclass
class Bucket:
    """A bucket of ``server``; ``keys()`` lists what is in it."""

    server: S3Server
    name: str

    def keys(self) -> list[str]:
        pages = self.server.client().get_paginator("list_objects_v2").paginate(Bucket=self.name)
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))

    def read(self, key: str) -> bytes:
        return self.server.client().get_object(Bucket=self.name, Key=key)["Body"].read()

    def storage(self, **overrides) -> dict:
        """STORAGES["default"] for this bucket (what the settings build from the env)."""
        options = {
            "bucket": self.name,
            "endpoint_url": self.server.url,
            "access_key": KEY,
            "secret_key": SECRET,
            "region": REGION,
            "timeout": 5,
        }
        return s3_storage(**{**options, **overrides})

    def env(self) -> dict[str, str]:
        """The environment a worker process needs to use this bucket."""
        return {
            "AWS_STORAGE_BUCKET_NAME": self.name,
            "AWS_S3_ENDPOINT_URL": self.server.url,
            "AWS_ACCESS_KEY_ID": KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_S3_REGION_NAME": REGION,
        }


@pytest.fixture(scope="session")
def s3_server():
    server = S3Server()
    yield server
    server.stop()


@pytest.fixture
def bucket(s3_server, settings) -> Bucket:
    """A fresh, empty bucket on the session's S3 server, the default storage for the test."""
    name = f"lb-test-{uuid.uuid4().hex[:12]}"
    s3_server.client().create_bucket(Bucket=name)
    created = Bucket(s3_server, name)
    settings.STORAGES = {**settings.STORAGES, "default": created.storage()}
    return created
