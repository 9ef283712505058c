"""SMTP, with STARTTLS, implicit TLS, or (trusted networks only) none.

TLS is verified against the system's CAs, or only against a private CA when one is given
(a tenant's relay signed by its own CA): `tls_context(ca_file=..., ca_pem=...)`.
SMTP has no idempotency key; the Message-ID is derived from Herald's key instead
(`message.message_id_for`), so a retry after a timeout repeats the same Message-ID.

A tenant's relay is a tenant-aimed target: with a `guard` the host is resolved and checked by
the target guard and the session runs over a socket to the checked address, while TLS (SNI,
certificate check) keeps the host name (aiosmtplib takes them from `hostname`, not the socket).
"""

from __future__ import annotations

import functools
import socket
import ssl

import aiosmtplib

from herald.v1 import common_pb2
from herald.webhooks.target_guard import PROVIDER_REFUSED, ResolutionFailed, TargetGuard, TargetRefused, connect_socket
from herald_email_sender import message
from herald_email_sender.outcome import SendResult, accepted, permanent, safe_text, transient
from herald_email_sender.providers.validation import VALID, Validation, unreachable

TIMEOUT_S = 10.0
# Option on the provider config: a PEM bundle of the CA(s) that signed a private relay's certificate.
CA_PEM_OPTION = "smtp_ca_pem"


def client_for(
    settings: common_pb2.SmtpSettings,
    tls_context: ssl.SSLContext | None = None,
    timeout_s: float = TIMEOUT_S,
    sock: socket.socket | None = None,
) -> aiosmtplib.SMTP:
    """An unset TLS mode means STARTTLS: a password is never sent in the clear by default.
    With `sock` (already connected), the host name only serves TLS and the greeting."""
    implicit = settings.tls_mode == common_pb2.SMTP_TLS_MODE_IMPLICIT
    starttls = settings.tls_mode in (common_pb2.SMTP_TLS_MODE_STARTTLS, common_pb2.SMTP_TLS_MODE_UNSPECIFIED)
    return aiosmtplib.SMTP(
        hostname=settings.host,
        port=None if sock is not None else settings.port,
        sock=sock,
        use_tls=implicit,
        start_tls=starttls,
        tls_context=tls_context,
        timeout=timeout_s,
    )


async def connect(
    settings: common_pb2.SmtpSettings,
    tls_context: ssl.SSLContext | None,
    timeout_s: float,
    guard: TargetGuard | None,
) -> aiosmtplib.SMTP:
    """A connected client (greeting read, TLS as configured), through the guard when given.
    Raises TargetRefused / ResolutionFailed from the guard, and what aiosmtplib raises."""
    sock = await connect_socket(guard, settings.host, settings.port, timeout_s) if guard is not None else None
    client = client_for(settings, tls_context, timeout_s, sock)
    try:
        await client.connect()
    except BaseException:
        client.close()
        if sock is not None:
            sock.close()
        raise
    return client


@functools.lru_cache(maxsize=64)
def tls_context(ca_file: str = "", ca_pem: str = "") -> ssl.SSLContext | None:
    """A verifying client context trusting only the given CA (file path or PEM text), or None
    for the system's CAs. Cached: loading CAs costs more than a send should."""
    if not ca_file and not ca_pem:
        return None
    return ssl.create_default_context(cafile=ca_file or None, cadata=ca_pem or None)


async def validate(
    settings: common_pb2.SmtpSettings, tls_context: ssl.SSLContext | None = None, guard: TargetGuard | None = None
) -> Validation:
    """Connects, negotiates TLS as configured, and logs in: the same steps a send takes."""
    try:
        client = await connect(settings, tls_context, TIMEOUT_S, guard)
    except (TargetRefused, ResolutionFailed):
        return Validation(False, f"smtp.host: {PROVIDER_REFUSED}")
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
        await _close(client)
    return VALID


async def send(
    settings: common_pb2.SmtpSettings,
    request: common_pb2.EmailRequest,
    *,
    idempotency_key: str = "",
    tls_context: ssl.SSLContext | None = None,
    timeout_s: float = TIMEOUT_S,
    guard: TargetGuard | None = None,
) -> SendResult:
    """One SMTP transaction: connect (TLS as configured), log in when a username is set, send.

    Reply codes decide: 4xx transient, 5xx permanent (at login: rejected credentials; at
    RCPT: rejected recipients). When some recipients are refused and others accepted, the
    message went out: accepted, with the refusals noted. A certificate that does not verify,
    or a server without STARTTLS or AUTH, is configuration: permanent."""
    problems = message.header_problems(request)
    if problems:
        return permanent("; ".join(problems))
    message_id = message.message_id_for(request, idempotency_key)
    try:
        mime = message.mime_message(request, message_id)
    except ValueError as error:
        return permanent(f"the message cannot be written as MIME: {error}")
    recipients = message.envelope_recipients(request)
    try:
        client = await connect(settings, tls_context, timeout_s, guard)
    except TargetRefused:
        return permanent(f"the SMTP relay's address is refused: {PROVIDER_REFUSED}")
    except ResolutionFailed:
        return transient("the SMTP relay's host name did not resolve")
    except (aiosmtplib.SMTPException, OSError) as error:
        return from_error(error, settings.password)
    try:
        if settings.username:
            await client.login(settings.username, settings.password)
        refused, _response = await client.send_message(
            mime, sender=message.sender(request).email, recipients=recipients
        )
    except (aiosmtplib.SMTPException, OSError) as error:
        return from_error(error, settings.password)
    finally:
        await _close(client)
    note = ""
    if refused:
        codes = sorted({reply.code for reply in refused.values()})
        note = f"{len(refused)} of {len(recipients)} recipients refused ({', '.join(map(str, codes))})"
    return accepted(250, message_id, note)


def from_error(error: aiosmtplib.SMTPException | OSError, secret: str = "") -> SendResult:
    """Maps what aiosmtplib raised onto an outcome. Server texts are kept short and masked."""
    if _certificate_problem(error):
        return permanent("the SMTP server's TLS certificate did not verify")
    if isinstance(error, aiosmtplib.SMTPRecipientsRefused):
        codes = sorted({refusal.code for refusal in error.recipients})
        text = f"every recipient was refused ({', '.join(map(str, codes))})"
        if all(code >= 500 for code in codes):
            return permanent(text, codes[-1])
        return transient(text, codes[0])
    if isinstance(error, aiosmtplib.SMTPResponseException):
        stage = _STAGES.get(type(error), "the SMTP server")
        text = safe_text(f"{stage} answered {error.code} {error.message}", secret)
        return permanent(text, error.code) if error.code >= 500 else transient(text, error.code)
    if isinstance(error, aiosmtplib.SMTPTimeoutError | TimeoutError):
        return transient(f"the SMTP server did not answer in time ({type(error).__name__})")
    if isinstance(error, aiosmtplib.SMTPServerDisconnected | aiosmtplib.SMTPConnectError | OSError):
        return transient(f"the SMTP server could not be reached ({type(error).__name__})")
    # What remains (no STARTTLS, no AUTH, no usable mechanism, SMTPUTF8) is the server's setup.
    return permanent(safe_text(f"the SMTP server cannot serve this send: {error}", secret))


_STAGES: dict[type[aiosmtplib.SMTPResponseException], str] = {
    aiosmtplib.SMTPAuthenticationError: "the SMTP login",
    aiosmtplib.SMTPSenderRefused: "MAIL FROM",
    aiosmtplib.SMTPDataError: "DATA",
    aiosmtplib.SMTPHeloError: "EHLO",
    aiosmtplib.SMTPConnectResponseError: "the SMTP greeting",
}


def _certificate_problem(error: BaseException) -> bool:
    seen: BaseException | None = error
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError | ssl.CertificateError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _close(client: aiosmtplib.SMTP) -> None:
    if not client.is_connected:
        return
    try:
        await client.quit()
    except (aiosmtplib.SMTPException, OSError):
        client.close()
