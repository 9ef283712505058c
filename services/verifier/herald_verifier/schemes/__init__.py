"""One module per provider scheme, each verifying the raw body exactly as its provider documents it.

Every module has the same shape, so the HTTP receivers can plug them in with a table:

- `PROVIDER`: the metric label;
- `load_*(...)`: turns the secret or key a tenant configured into the key `verify` takes, raising ValueError
  (which never quotes the secret) so bad keys are refused when saved, not at the first event;
- `verify(headers, body, key, *, now=..., tolerance_s=...) -> Verified | Rejected` (no clock for Paystack and
  Postmark, which have no timestamp): called with the raw body before anything parses it;
- `event_ids(headers, body) -> list[str]`: the provider's de-duplication keys, to call only once verified.
"""

# The shared vocabulary, listed once in `common.__all__`.
from herald_verifier.schemes.common import *  # noqa: F403
