"""The one name for a servicer method's context, so every service spells it the same way."""

from __future__ import annotations

from typing import Any

import grpc

# A servicer method's context; its request and response types are the method's own.
Context = grpc.aio.ServicerContext[Any, Any]
