"""Subscription billing (``billing.yaml``), correct, and one class per planted bug, 7 to 10 calls deep.

A twenty-third held-out set, written without looking at the fuzzer's code. Its shapes: customers
registered under a free name, with a credit; plans with a price per seat and an optional limit of
seats; coupons with an amount off and an optional number of redemptions in all, redeemed once per
customer besides (two limits of different scope); subscriptions numbered by the service (the
calls on one use the number it answered), two live ones per customer at most, where a canceled
one does not count; a status machine (trialing, active, past due, canceled, and back) driven by a
clock that moves on by an optional number of days, a trial of an optional length, and renewals
that invoice each period and go past due while an invoice is still open; invoices numbered by the
service, paid with the customer's credit first unless told not to (exact integer arithmetic,
never below nothing), and refunded once, their whole amount back to the credit; the seats and the
plan of a subscription changed together or apart, always within the plan's limit; a reactivation
that must remember an invoice still open. The minimal length is in each docstring, with why it
cannot be shorter.

The implementation keeps some state where the contract does not look: each customer's count of
live subscriptions (beside the subscriptions), the pairs of customer and coupon redeemed (beside
the coupons), each subscription's price per seat (copied from its plan) and its count of invoices
open (beside the invoices).
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

LIVE = 2  # live subscriptions per customer
SEATS = 2  # a plan's limit without `seats`
TIMES = 1  # a coupon's redemptions in all without `times`
DAYS = 1  # the clock moves by this without `days`
PERIOD = 3  # days a renewal pays for


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


def _flag(value: Any) -> bool:
    return value is ABSENT or type(value) is bool


def _number(value: Any, low: int, high: int) -> bool:
    return is_int(value) and low <= value <= high


class Billing:
    def __init__(self) -> None:
        self.today = 0
        self.customers: dict[str, dict[str, int]] = {}  # credit, live
        self.plans: dict[str, dict[str, int]] = {}  # price, seats
        self.coupons: dict[str, dict[str, int]] = {}  # discount, left
        self.redeemed: set[tuple[Any, str]] = set()  # (who redeemed, coupon)
        self.subscriptions: dict[int, dict[str, Any]] = {}
        self.next_subscription = 1
        self.invoices: dict[int, dict[str, Any]] = {}  # subscription, amount, charged, status
        self.next_invoice = 1

    # -- lookups ---------------------------------------------------------------------------------

    def _subscription(self, subscription: Any) -> dict[str, Any]:
        need(subscription in self.subscriptions, 404)
        return self.subscriptions[subscription]

    def _invoice(self, invoice: Any) -> dict[str, Any]:
        need(invoice in self.invoices, 404)
        return self.invoices[invoice]

    # -- customers, plans, coupons ---------------------------------------------------------------

    def addCustomer(self, customer: Any) -> None:
        need(_name(customer), 422)
        need(customer not in self.customers, 409)
        self.customers[customer] = {"credit": 0, "live": 0}

    def createPlan(self, plan: Any, price: Any, seats: Any = ABSENT) -> None:
        need(_name(plan) and _number(price, 1, 4), 422)
        most = option(seats, 1, 3, SEATS)
        need(plan not in self.plans, 409)
        self.plans[plan] = {"price": price, "seats": most}

    def createCoupon(self, coupon: Any, discount: Any, times: Any = ABSENT) -> None:
        need(_name(coupon) and _number(discount, 1, 3), 422)
        left = option(times, 1, 3, TIMES)
        need(coupon not in self.coupons, 409)
        self.coupons[coupon] = {"discount": discount, "left": left}

    # -- subscriptions ---------------------------------------------------------------------------

    def subscribe(self, customer: Any, plan: Any, trial: Any = ABSENT) -> dict[str, Any]:
        need(_name(customer) and _name(plan), 422)
        need(trial is ABSENT or _number(trial, 1, 3), 422)
        need(customer in self.customers, 404)
        need(plan in self.plans, 404)
        need(self.customers[customer]["live"] < LIVE, 429)
        self.customers[customer]["live"] += 1
        number = self.next_subscription
        self.next_subscription += 1
        self.subscriptions[number] = {
            "customer": customer,
            "plan": plan,
            "price": self.plans[plan]["price"],
            "status": "active" if trial is ABSENT else "trialing",
            "seats": 1,
            "ends": self.today if trial is ABSENT else self.today + trial,
            "coupon": None,
            "open": 0,
        }
        return {"subscription": number}

    def update(self, subscription: Any, seats: Any = ABSENT, plan: Any = ABSENT) -> None:
        need(is_int(subscription), 422)
        need(seats is ABSENT or _number(seats, 1, 3), 422)
        need(plan is ABSENT or _name(plan), 422)
        record = self._subscription(subscription)
        need(record["status"] != "canceled", 409)
        need(plan is ABSENT or plan in self.plans, 404)
        count = record["seats"] if seats is ABSENT else seats
        limit = self.plans[record["plan"] if plan is ABSENT else plan]["seats"]
        need(count <= limit, 413)
        record["seats"] = count
        if plan is not ABSENT:
            self._switch(record, plan)

    def _switch(self, record: dict[str, Any], plan: str) -> None:
        """A new plan, and its price from the next invoice on."""
        record["plan"] = plan
        record["price"] = self.plans[plan]["price"]

    def redeem(self, subscription: Any, coupon: Any) -> None:
        need(is_int(subscription) and _name(coupon), 422)
        record = self._subscription(subscription)
        need(coupon in self.coupons, 404)
        need(record["status"] != "canceled", 409)
        need(record["coupon"] is None, 409)
        who = self._redeemer(subscription, record)
        need((who, coupon) not in self.redeemed, 409)
        need(self._left(self.coupons[coupon]), 410)
        record["coupon"] = coupon
        self.coupons[coupon]["left"] -= 1
        self.redeemed.add((who, coupon))

    def _redeemer(self, subscription: int, record: dict[str, Any]) -> Any:
        """A coupon is redeemed once per customer, on whichever of their subscriptions."""
        return record["customer"]

    @staticmethod
    def _left(coupon: dict[str, int]) -> bool:
        """Redeemed no more times in all than it allows."""
        return coupon["left"] > 0

    def cancel(self, subscription: Any) -> None:
        need(is_int(subscription), 422)
        record = self._subscription(subscription)
        need(record["status"] != "canceled", 409)
        self._free(record)
        record["status"] = "canceled"

    def _free(self, record: dict[str, Any]) -> None:
        """A canceled subscription gives its customer's slot back, whatever it was."""
        self.customers[record["customer"]]["live"] -= 1

    def reactivate(self, subscription: Any) -> None:
        need(is_int(subscription), 422)
        record = self._subscription(subscription)
        need(record["status"] == "canceled", 409)
        owner = self.customers[record["customer"]]
        need(owner["live"] < LIVE, 429)
        owner["live"] += 1
        record["status"] = self._resumed(record)

    def _resumed(self, record: dict[str, Any]) -> str:
        """Past due while an invoice of it is open, active otherwise."""
        return "past_due" if record["open"] else "active"

    def subscriptionInfo(self, subscription: Any) -> dict[str, Any]:
        need(is_int(subscription), 422)
        record = self._subscription(subscription)
        owed = sum(
            i["amount"]
            for i in self.invoices.values()
            if i["subscription"] == subscription and i["status"] == "open"
        )
        return {
            "customer": record["customer"],
            "plan": record["plan"],
            "status": record["status"],
            "seats": record["seats"],
            "ends": record["ends"],
            "coupon": record["coupon"],
            "owed": owed,
        }

    # -- the clock and invoices ------------------------------------------------------------------

    def advance(self, days: Any = ABSENT) -> dict[str, Any]:
        self.today += option(days, 1, 3, DAYS)
        return {"today": self.today}

    def renew(self, subscription: Any) -> dict[str, Any]:
        need(is_int(subscription), 422)
        record = self._subscription(subscription)
        need(record["status"] != "canceled", 409)
        need(self.today >= record["ends"], 425)
        off = self.coupons[record["coupon"]]["discount"] if record["coupon"] is not None else 0
        amount = max(0, record["price"] * record["seats"] - off)
        number = self.next_invoice
        self.next_invoice += 1
        status = "open" if amount > 0 else "paid"
        self.invoices[number] = {
            "subscription": subscription,
            "amount": amount,
            "charged": 0,
            "status": status,
        }
        record["status"] = "past_due" if record["open"] else "active"
        if status == "open":
            record["open"] += 1
        record["ends"] = self.today + PERIOD
        return {"status": record["status"], "invoice": number}

    def pay(self, invoice: Any, credit: Any = ABSENT) -> dict[str, Any]:
        need(is_int(invoice) and _flag(credit), 422)
        bill = self._invoice(invoice)
        need(bill["status"] == "open", 409)
        record = self.subscriptions[bill["subscription"]]
        owner = self.customers[record["customer"]]
        used = min(owner["credit"], bill["amount"]) if self._uses_credit(credit) else 0
        owner["credit"] -= used
        bill["charged"] = bill["amount"] - used
        bill["status"] = "paid"
        self._settled(record)
        return {"charged": bill["charged"], "credit": owner["credit"]}

    @staticmethod
    def _uses_credit(credit: Any) -> bool:
        """The credit is applied first unless told not to."""
        return True if credit is ABSENT else bool(credit)

    def _settled(self, record: dict[str, Any]) -> None:
        """An invoice fewer open; past due with none left open, active again."""
        record["open"] -= 1
        if record["status"] == "past_due" and record["open"] == 0:
            record["status"] = "active"

    def refund(self, invoice: Any) -> dict[str, Any]:
        need(is_int(invoice), 422)
        bill = self._invoice(invoice)
        need(bill["status"] == "paid", 409)
        bill["status"] = "refunded"
        owner = self.customers[self.subscriptions[bill["subscription"]]["customer"]]
        owner["credit"] += self._returned(bill)
        return {"credit": owner["credit"]}

    @staticmethod
    def _returned(bill: dict[str, Any]) -> int:
        """The whole amount, the part the credit paid too."""
        amount: int = bill["amount"]
        return amount


class CouponOncePerSubscription(Billing):
    """B1, 7 calls: addCustomer a, createPlan p, createCoupon (k, times 2), subscribe (a, p) twice,
    redeem (1, k), redeem (2, k): the once-per-customer limit is kept per subscription, so a
    customer redeems a coupon a second time on their other subscription (refused, 409). It needs
    a coupon good for two redemptions (the optional ``times`` given: with one, the second redeem
    is refused as used up, 410, where the correct one says 409, a failing clause either way), two
    subscriptions of one customer (a subscription holds one coupon), and both redeems."""

    def _redeemer(self, subscription: int, record: dict[str, Any]) -> Any:
        return subscription


class CouponOneTooMany(Billing):
    """B2, 8 calls: addCustomer a, addCustomer b, createPlan p, createCoupon k, subscribe (a, p),
    subscribe (b, p), redeem (1, k), redeem (2, k): a coupon's redemptions in all are checked as
    none below zero left, not one left at least, so a coupon good for one is redeemed twice
    (refused, 410). It needs the limit reached and a redeem past it, by two customers (one
    customer's second redeem is refused first as theirs already, 409, both ways): two customers,
    a subscription of each, a plan, the coupon, two redeems."""

    @staticmethod
    def _left(coupon: dict[str, int]) -> bool:
        return coupon["left"] >= 0


class CancelKeepsPastDueSlot(Billing):
    """B3, 9 calls: addCustomer a, createPlan p, subscribe (a, p), renew 1, advance (days 3), renew
    1, cancel 1, subscribe (a, p) twice: a past-due subscription canceled does not give its
    customer's slot back, so with one live subscription the customer is refused a second one
    (429). It needs a past-due subscription (a renewal while an invoice is open: a subscription,
    two renewals and the days between them, or one renewal, a cancel and a reactivation), its
    cancel, and two more live subscriptions, made before the cancel or after it, the second
    refused (or one, and a reactivation of the first after the cancel)."""

    def _free(self, record: dict[str, Any]) -> None:
        if record["status"] != "past_due":
            self.customers[record["customer"]]["live"] -= 1


class ReactivateForgetsOpenInvoice(Billing):
    """B4, 7 calls: addCustomer a, createPlan p, subscribe (a, p), renew 1, cancel 1, reactivate
    1, subscriptionInfo 1: a reactivation makes a subscription active whatever it owes, so with
    its first invoice still open it reads active, not past due. It needs an open invoice (a
    subscription and a renewal), the cancel and the reactivation, and a read (a renewal or a
    payment after it gives the same answer either way)."""

    def _resumed(self, record: dict[str, Any]) -> str:
        return "active"


class PaymentEndsPastDue(Billing):
    """B5, 8 calls: addCustomer a, createPlan p, subscribe (a, p), renew 1, advance (days 3), renew
    1, pay 1, subscriptionInfo 1: any payment makes a past-due subscription active, not the one
    of its last open invoice, so with invoice 2 still open it reads active, not past due. It
    needs two invoices open on one subscription (two renewals, the days between them), a payment
    of one of them, and a read (a payment of the other, a renewal, give the same answer either
    way)."""

    def _settled(self, record: dict[str, Any]) -> None:
        record["open"] -= 1
        if record["status"] == "past_due":
            record["status"] = "active"


class CreditUnusedByDefault(Billing):
    """B6, 9 calls: addCustomer a, createPlan (p, price 2), subscribe (a, p), renew 1, pay 1,
    refund 1, advance (days 3), renew 1, pay 2: a payment that says nothing of the credit does not
    apply it, so the customer's credit of two stays and the card is charged two, not nothing.
    Only a refund gives credit (a paid invoice: a subscription, a renewal, a payment), and it
    shows on the payment of another invoice (another renewal, after the days of a period or of
    another subscription)."""

    @staticmethod
    def _uses_credit(credit: Any) -> bool:
        return False if credit is ABSENT else bool(credit)


class RefundKeepsCreditPart(Billing):
    """B7, 10 calls: addCustomer a, createPlan p, subscribe (a, p), renew 1, pay 1, refund 1,
    subscribe (a, p), renew 2, pay 2, refund 2: a refund gives back what the card was charged
    only, not the part the credit paid, so after an invoice of one paid by a credit of one the
    credit is none, not one. It needs a payment with credit (which only a refund gives: a
    subscription, a renewal, a payment, a refund), another invoice (another subscription or the
    days of a period, and a renewal), its payment and its refund."""

    @staticmethod
    def _returned(bill: dict[str, Any]) -> int:
        charged: int = bill["charged"]
        return charged


class InvoiceAtStartingPrice(Billing):
    """B8, 7 calls: addCustomer a, createPlan (p, price 1), createPlan (q, price 2), subscribe (a,
    p), update (1, plan q), renew 1, subscriptionInfo 1: a change of plan keeps the price the
    subscription started at, so its invoice is one, not two. It needs two plans of different
    prices, a subscription and its change of plan, a renewal, and a read of what is owed (or a
    payment: the renewal answers no amount)."""

    def _switch(self, record: dict[str, Any], plan: str) -> None:
        record["plan"] = plan
