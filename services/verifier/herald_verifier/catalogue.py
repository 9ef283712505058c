"""Which plan a payment buys, from the operator's configuration, never from the payment itself.

Checkout metadata is written by whoever starts the checkout, so a `metadata.plan` proves
nothing about what was paid. The provider's own identifiers do: Paystack's `plan_code`,
Polar's `product_id`. The operator maps each to a Herald plan and its price:

    HERALD_PAYSTACK_PLANS="PLN_indie_m=indie:500000:NGN, PLN_startup_m=startup:2000000:NGN"
    HERALD_POLAR_PRODUCTS="<product id>=indie:900:usd <product id>=startup:2900:usd"

(`identifier=plan:amount:currency`, the amount in the provider's minor units, as its events
carry it). A payment buys the plan only when its identifier is mapped, its currency is the
one configured and its amount is at least the price; anything else is recorded and changes
nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PLANS = frozenset({"free", "indie", "startup"})


@dataclass(frozen=True)
class Price:
    plan: str
    amount: int
    currency: str


class Catalogue:
    def __init__(self, prices: dict[str, Price] | None = None) -> None:
        self.prices = prices or {}

    @classmethod
    def parse(cls, text: str) -> Catalogue:
        """Raises ValueError on an entry that is not `identifier=plan:amount:currency`, so a
        bad setting fails at startup rather than silently buying nothing."""
        prices: dict[str, Price] = {}
        for entry in (e for e in re.split(r"[\s,]+", text) if e):
            identifier, _, price = entry.partition("=")
            plan, amount, currency = ([*price.split(":"), "", ""])[:3]
            if not identifier or plan not in PLANS or not amount.isdigit() or not currency.isalpha():
                raise ValueError(f"payment plan entry {entry!r} is not identifier=plan:amount:currency")
            prices[identifier] = Price(plan, int(amount), currency.upper())
        return cls(prices)

    def plan_for(self, identifier: str, amount: object, currency: object) -> str:
        """The plan bought, or "" when the identifier is unknown or the payment falls short."""
        price = self.prices.get(identifier)
        if price is None or isinstance(amount, bool) or not isinstance(amount, int | float):
            return ""
        if not isinstance(currency, str) or currency.upper() != price.currency or amount < price.amount:
            return ""
        return price.plan
