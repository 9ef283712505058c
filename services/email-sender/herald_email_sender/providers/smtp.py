"""SMTP, with STARTTLS, implicit TLS, or (trusted networks only) none."""

from __future__ import annotations

import ssl

import aiosmtplib

from herald.v1 import common_pb2
from herald_email_sender.providers.validation import VALID, Validation, unreachable

TIMEOUT_S = 10.0


def client_for(settings: common_pb2.SmtpSettings, tls_context: ssl.SSLContext | None = None) -> aiosmtplib.SMTP:
    implicit = settings.tls_mode == common_pb2.SMTP_TLS_MODE_IMPLICIT
    starttls = settings.tls_mode == common_pb2.SMTP_TLS_MODE_STARTTLS
    return aiosmtplib.SMTP(
        hostname=settings.host,
        port=settings.port,
        use_tls=implicit,
        start_tls=starttls,
        tls_context=tls_context,
        timeout=TIMEOUT_S,
    )


async def validate(settings: common_pb2.SmtpSettings, tls_context: ssl.SSLContext | None = None) -> Validation:
    """Connects, negotiates TLS as configured, and logs in: the same steps a send takes."""
    client = client_for(settings, tls_context)
    try:
        await client.connect()
    except (aiosmtplib.SMTPException, OSError) as error:
        return unreachable(type(error).__name__)
    try:
        if settings.username:
            await client.login(settings.username, settings.password)
    except aiosmtplib.SMTPAuthenticationError as error:
        return Validation(False, f"the SMTP server rejected the login ({error.code})")
    except aiosmtplib.SMTPException as error:
        return Validation(False, f"the SMTP server refused the session: {type(error).__name__}")
    finally:
        try:
            await client.quit()
        except (aiosmtplib.SMTPException, OSError):
            client.close()
    return VALID
