"""Target health (failing streaks and automatic disabling), recovery, and tenants' webhook
delivery settings. See `herald_ledger.store.target_health`."""

from __future__ import annotations

import math
from datetime import UTC

from herald.grpcio.errors import abort_failed_precondition, abort_invalid, abort_not_found
from herald.ids import parse_id
from herald.v1 import ledger_subscriptions_pb2
from herald_ledger.convert import from_timestamp, target_to_proto
from herald_ledger.notifications import SUBSCRIPTIONS, WEBHOOK_SETTINGS, Notifier
from herald_ledger.operational import Announcer
from herald_ledger.rpc.common import Context, Rpcs, found, require_id, tenant_get_rpc
from herald_ledger.store import target_health as store

MAX_OUTCOMES = 1000
MAX_RECOVER = 1000
# Sanity bounds only: the gateway applies the product's bounds (herald.webhooks.retry_policy).
MAX_SCHEDULE_STEPS = 50


def _settings_to_proto(values: dict[str, object]) -> ledger_subscriptions_pb2.WebhookSettings:
    schedule = values.get("retry_schedule_s") or []
    statuses = values.get("retry_statuses") or []
    assert isinstance(schedule, list) and isinstance(statuses, list)
    return ledger_subscriptions_pb2.WebhookSettings(
        retry_schedule_s=[float(s) for s in schedule], retry_statuses=[int(c) for c in statuses]
    )


class TargetHealthRpcs(Rpcs):
    notifier: Notifier
    announcer: Announcer

    GetWebhookSettings = tenant_get_rpc(
        store.webhook_settings, ledger_subscriptions_pb2.GetWebhookSettingsResponse, "settings", _settings_to_proto
    )

    async def NoteTargetOutcomes(
        self, request: ledger_subscriptions_pb2.NoteTargetOutcomesRequest, context: Context
    ) -> ledger_subscriptions_pb2.NoteTargetOutcomesResponse:
        if len(request.outcomes) > MAX_OUTCOMES:
            await abort_invalid(context, [("outcomes", f"at most {MAX_OUTCOMES} at once")])
        if not math.isfinite(request.disable_after_s) or request.disable_after_s < 0:
            await abort_invalid(context, [("disable_after_s", "must be finite and not negative")])
        outcomes = []
        for i, item in enumerate(request.outcomes):
            tenant_id = await require_id(context, item.tenant_id, f"outcomes[{i}].tenant_id")
            target_id = await require_id(context, item.target_id, f"outcomes[{i}].target_id")
            outcomes.append(store.TargetOutcome(tenant_id, target_id, item.succeeded, item.at.ToDatetime(tzinfo=UTC)))
        disabled, told = await self.write(store.note_outcomes, outcomes, request.disable_after_s)
        if told:
            self.announcer.kick()  # the tenant's operational events (failing, disabled)
        for tenant_id in sorted({row.tenant_id for row in disabled}):
            # Routers drop the disabled targets from their fan-out caches.
            await self.notifier.publish(SUBSCRIPTIONS, tenant_id=str(tenant_id))
        return ledger_subscriptions_pb2.NoteTargetOutcomesResponse(disabled=[target_to_proto(row) for row in disabled])

    async def ListTargetFailures(
        self, request: ledger_subscriptions_pb2.ListTargetFailuresRequest, context: Context
    ) -> ledger_subscriptions_pb2.ListTargetFailuresResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        if not request.HasField("since"):
            await abort_invalid(context, [("since", "is required")])
        since = from_timestamp(request.since, True)
        until = from_timestamp(request.until, request.HasField("until"))
        assert since is not None
        if until is not None and until < since:
            await abort_invalid(context, [("until", "must not be before since")])
        limit = min(request.limit or MAX_RECOVER, MAX_RECOVER)
        target_id = parse_id(request.target_id)
        async with self.engine.connect() as conn:
            target = await store.get_target(conn, tenant_id, target_id) if target_id is not None else None
            if target is None or target_id is None:
                await abort_not_found(context, "target")
            if not target.enabled:
                await abort_failed_precondition(
                    context, "the target is disabled: enable it (PATCH enabled=true) before recovering it"
                )
            ids = await store.failed_deliveries(conn, tenant_id, target_id, since, limit, until)
        return ledger_subscriptions_pb2.ListTargetFailuresResponse(job_ids=[str(i) for i in ids])

    async def SetWebhookSettings(
        self, request: ledger_subscriptions_pb2.SetWebhookSettingsRequest, context: Context
    ) -> ledger_subscriptions_pb2.SetWebhookSettingsResponse:
        tenant_id = await require_id(context, request.tenant_id, "tenant_id")
        schedule = list(request.settings.retry_schedule_s)
        statuses = list(request.settings.retry_statuses)
        if len(schedule) > MAX_SCHEDULE_STEPS or any(not math.isfinite(s) or s < 0 for s in schedule):
            await abort_invalid(context, [("retry_schedule_s", "finite delays, not negative, at most 50")])
        if any(not 400 <= code <= 499 for code in statuses):
            await abort_invalid(context, [("retry_statuses", "4xx codes only")])
        values: dict[str, object] = {}
        if schedule:
            values["retry_schedule_s"] = schedule
        if statuses:
            values["retry_statuses"] = sorted(set(statuses))
        await found(context, "tenant", await self.write(store.set_webhook_settings, tenant_id, values))
        await self.notifier.publish(WEBHOOK_SETTINGS, tenant_id=str(tenant_id))
        return ledger_subscriptions_pb2.SetWebhookSettingsResponse(settings=_settings_to_proto(values))
