"""Password reset end to end: the mail leaves through a real SMTP server (aiosmtpd, started
here), its link sets a new password, and the pages are the site's own."""

from __future__ import annotations

import email
import email.policy
import re
import socket
import threading

import pytest
from django.contrib.auth import get_user_model

from leaderboard.environment import email_from_url

aiosmtpd = pytest.importorskip("aiosmtpd.controller")


class Inbox:
    """An aiosmtpd handler that keeps every delivered message."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, list[str], email.message.EmailMessage]] = []
        self.arrived = threading.Event()

    async def handle_DATA(self, server, session, envelope) -> str:
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), message))
        self.arrived.set()
        return "250 Message accepted for delivery"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp(settings):
    """A real SMTP server on a free port, and the site's mail settings pointing at it
    through EMAIL_URL's parser (pytest-django's in-memory mail backend is replaced)."""
    inbox = Inbox()
    port = free_port()
    controller = aiosmtpd.Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    for name, value in email_from_url(f"smtp://127.0.0.1:{port}/?timeout=5").items():
        setattr(settings, name, value)
    settings.DEFAULT_FROM_EMAIL = "leaderboard@example.org"
    yield inbox
    controller.stop()


@pytest.fixture
def carol(db):
    return get_user_model().objects.create_user(
        "carol", email="carol@example.org", password="old-pass-phrase-1"
    )


def test_the_login_page_links_to_the_reset(client, db):
    page = client.get("/accounts/login/").content.decode()
    assert '<a href="/accounts/password_reset/">Forgot password?</a>' in page


def test_a_reset_mail_is_delivered_by_smtp_and_its_link_sets_a_new_password(client, smtp, carol):
    form = client.get("/accounts/password_reset/")
    page = form.content.decode()
    assert form.status_code == 200
    assert "<h1>Reset your password</h1>" in page
    assert "Ranked retrieval leaderboards" in page  # the site's base.html, not the admin's
    assert "admin" not in [t.name for t in form.templates][0]

    sent = client.post("/accounts/password_reset/", {"email": "CAROL@example.org"})
    assert sent.status_code == 302 and sent["Location"] == "/accounts/password_reset/done/"
    done = client.get(sent["Location"]).content.decode()
    assert "If an account has that email address, a link to set a new password" in done

    assert smtp.arrived.wait(10), "no mail reached the SMTP server"
    assert len(smtp.messages) == 1
    sender, recipients, message = smtp.messages[0]
    assert sender == "leaderboard@example.org" and recipients == ["carol@example.org"]
    assert message["Subject"] == "Set a new password for Ranked retrieval leaderboards"
    assert message["To"] == "carol@example.org"
    body = message.get_content()
    assert "Hello carol," in body
    link = re.search(r"http://testserver(/accounts/reset/\S+/\S+/)", body).group(1)

    # The link redirects to a token-less URL (Django keeps the token in the session).
    opened = client.get(link)
    assert opened.status_code == 302 and opened["Location"].endswith("/set-password/")
    set_page = client.get(opened["Location"]).content.decode()
    assert "<h1>Set a new password</h1>" in set_page
    new = "brand-new-pass-phrase-7"
    saved = client.post(opened["Location"], {"new_password1": new, "new_password2": new})
    assert saved.status_code == 302 and saved["Location"] == "/accounts/reset/done/"
    assert "Your new password is set." in client.get(saved["Location"]).content.decode()

    # The link works once; the old password is gone, the new one logs in.
    assert "<h1>This link does not work</h1>" in client.get(link, follow=True).content.decode()
    old = client.post("/accounts/login/", {"username": "carol", "password": "old-pass-phrase-1"})
    assert old.status_code == 200
    login = client.post("/accounts/login/", {"username": "carol", "password": new})
    assert login.status_code == 302
    assert client.get("/accounts/runs/").status_code == 200


def test_an_unknown_address_or_a_user_without_email_gets_the_same_answer_and_no_mail(
    client, smtp, carol, django_user_model
):
    django_user_model.objects.create_user("dave", password="pw-dave-123")  # no email
    answers = [
        client.post("/accounts/password_reset/", {"email": address}, follow=True)
        for address in ("carol@example.org", "nobody@example.org", "")
    ]
    assert smtp.arrived.wait(10)
    known, unknown, _ = answers
    assert (
        known.redirect_chain == unknown.redirect_chain == [("/accounts/password_reset/done/", 302)]
    )
    assert known.content == unknown.content
    assert (
        answers[2].status_code == 200 and "This field is required." in answers[2].content.decode()
    )
    assert [recipients for _, recipients, _ in smtp.messages] == [["carol@example.org"]]


def test_email_url_settings():
    from django.core.exceptions import ImproperlyConfigured

    assert email_from_url("console://") == {
        "EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend"
    }
    assert email_from_url("smtp://user%40x:p%2Fss@mail.example.org:587/?tls=1") == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "mail.example.org",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "user@x",
        "EMAIL_HOST_PASSWORD": "p/ss",
        "EMAIL_USE_SSL": False,
        "EMAIL_USE_TLS": True,
        "EMAIL_TIMEOUT": 10,
    }
    secure = email_from_url("smtps://mail.example.org")
    assert (secure["EMAIL_PORT"], secure["EMAIL_USE_SSL"], secure["EMAIL_USE_TLS"]) == (
        465,
        True,
        False,
    )
    plain = email_from_url("smtp://localhost")
    assert (plain["EMAIL_HOST"], plain["EMAIL_PORT"], plain["EMAIL_USE_TLS"]) == (
        "localhost",
        25,
        False,
    )
    with pytest.raises(ImproperlyConfigured, match="'sendgrid'"):
        email_from_url("sendgrid://key")
    with pytest.raises(ImproperlyConfigured, match="timeout must be whole seconds"):
        email_from_url("smtp://mail.example.org/?timeout=soon")
