"""Pharmacy counter (``pharmacy.yaml``), correct, and one class per planted bug, 6 to 8 calls deep.

A seventeenth held-out set, written without looking at the fuzzer's code. Its shapes: drugs on
shelves of six units, taken off the list and put back under the same name while prescriptions
written against them wait; prescriptions numbered by the pharmacy (the calls on one use the
number it answered), with optional quantities and refills; a fill that goes through three hands
in order (prepared by anyone on staff, checked by someone else, a controlled drug's by a
pharmacist, then picked up), and may be cancelled back onto a shelf that must have room; a
per-person limit of fills awaiting their check; a prescription that is open again after each
refill and done after its last one; one prescription of a drug per patient until it is done;
staff dismissed (and hired again) under the same name. The minimal length is in each docstring,
with why it cannot be shorter.

The implementation keeps some state where the contract does not look: a register of pharmacist
licences beside the staff list, each person's count of fills awaiting their check, and, on each
prescription, the drug record it was written against and the log of everyone who has prepared a
fill of it.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

SHELF = 6  # units a drug's shelf holds
QUEUE = 2  # fills awaiting one person's check
ROLES = ("pharmacist", "technician")
UNDER_WAY = ("prepared", "checked")


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


class Pharmacy:
    def __init__(self) -> None:
        self.drugs: dict[str, dict[str, Any]] = {}
        self.staff: dict[str, dict[str, Any]] = {}
        self.licensed: set[str] = set()  # pharmacists on staff: who may check any fill
        self.queue: dict[str, int] = {}  # by name: fills awaiting the check of someone else
        self.rxs: dict[int, dict[str, Any]] = {}
        self.next_rx = 1

    # -- lookups ---------------------------------------------------------------------------------

    def _drug(self, drug: str) -> dict[str, Any]:
        need(drug in self.drugs, 404)
        return self.drugs[drug]

    def _rx(self, rx: Any) -> dict[str, Any]:
        need(rx in self.rxs, 404)
        return self.rxs[rx]

    def _drug_of(self, record: dict[str, Any]) -> dict[str, Any]:
        """The drug a prescription is filled from: the one listed under its name now."""
        need(record["drug"] in self.drugs, 410)
        return self.drugs[record["drug"]]

    # -- drugs -----------------------------------------------------------------------------------

    def addDrug(self, drug: Any, stock: Any, controlled: Any = ABSENT) -> None:
        need(_name(drug) and is_int(stock) and 0 <= stock <= SHELF, 422)
        need(controlled is ABSENT or type(controlled) is bool, 422)
        need(drug not in self.drugs, 409)
        self.drugs[drug] = {"stock": stock, "controlled": controlled is True}

    def removeDrug(self, drug: Any) -> None:
        need(_name(drug), 422)
        self._drug(drug)
        need(not self._under_way(drug), 409)
        del self.drugs[drug]

    def _under_way(self, drug: str) -> bool:
        """Whether a fill of ``drug`` is prepared or checked: its units are off the shelf."""
        return any(r["drug"] == drug and r["status"] in UNDER_WAY for r in self.rxs.values())

    def restock(self, drug: Any, amount: Any) -> dict[str, Any]:
        need(_name(drug) and is_int(amount) and 1 <= amount <= SHELF, 422)
        record = self._drug(drug)
        need(record["stock"] + amount <= SHELF, 413)
        record["stock"] += amount
        return {"stock": record["stock"]}

    # -- staff -----------------------------------------------------------------------------------

    def hire(self, name: Any, role: Any = ABSENT) -> None:
        need(_name(name) and (role is ABSENT or role in ROLES), 422)
        need(name not in self.staff, 409)
        given = "technician" if role is ABSENT else role
        self.staff[name] = {"role": given}
        self.queue[name] = 0
        if given == "pharmacist":
            self.licensed.add(name)

    def dismiss(self, name: Any) -> None:
        need(_name(name), 422)
        need(name in self.staff, 404)
        need(not any(r["preparer"] == name and r["status"] == "prepared" for r in self.rxs.values()), 409)
        self._leave(name)

    def _leave(self, name: str) -> None:
        """Someone dismissed takes their licence (if a pharmacist) and their queue with them."""
        del self.staff[name]
        del self.queue[name]
        self.licensed.discard(name)

    # -- prescriptions ---------------------------------------------------------------------------

    def prescribe(
        self, patient: Any, drug: Any, quantity: Any = ABSENT, refills: Any = ABSENT
    ) -> dict[str, Any]:
        need(_name(patient) and _name(drug), 422)
        units = option(quantity, 1, 3, 1)
        more = option(refills, 0, 2, 0)
        record = self._drug(drug)
        need(not (record["controlled"] and refills is not ABSENT and more > 0), 403)
        need(not self._holds(patient, drug), 409)
        number = self.next_rx
        self.next_rx += 1
        self.rxs[number] = {
            "patient": patient,
            "drug": drug,
            "quantity": units,
            "refills": more,
            "status": "open",
            "preparer": None,
            "record": record,
            "handled": [],
        }
        return {"rx": number}

    def _holds(self, patient: str, drug: str) -> bool:
        """Whether ``patient`` holds a prescription of ``drug`` that is not done."""
        return any(
            r["patient"] == patient and r["drug"] == drug and r["status"] != "done" for r in self.rxs.values()
        )

    # -- fills -----------------------------------------------------------------------------------

    def prepare(self, rx: Any, actor: Any) -> None:
        need(is_int(rx) and _name(actor), 422)
        record = self._rx(rx)
        need(actor in self.staff, 403)
        need(record["status"] == "open", 409)
        need(record["drug"] in self.drugs, 410)
        need(self.queue[actor] < QUEUE, 429)
        drug = self._drug_of(record)
        need(drug["stock"] >= record["quantity"], 424)
        drug["stock"] -= record["quantity"]
        record["status"], record["preparer"] = "prepared", actor
        record["handled"].append(actor)
        self.queue[actor] += 1

    def check(self, rx: Any, actor: Any) -> None:
        need(is_int(rx) and _name(actor), 422)
        record = self._rx(rx)
        need(record["status"] == "prepared", 409)
        need(self._may_check(actor, record), 403)
        need(not self._own_fill(record, actor), 423)
        record["status"] = "checked"
        self.queue[record["preparer"]] -= 1

    def _may_check(self, actor: str, record: dict[str, Any]) -> bool:
        """A licensed pharmacist checks any fill; anyone else on staff, a drug not controlled."""
        return actor in self.licensed or (actor in self.staff and not self._drug_of(record)["controlled"])

    def _own_fill(self, record: dict[str, Any], actor: str) -> bool:
        """Nobody checks the fill they prepared themself (the one under way now)."""
        return bool(record["preparer"] == actor)

    def dispense(self, rx: Any) -> dict[str, Any]:
        need(is_int(rx), 422)
        record = self._rx(rx)
        need(record["status"] == "checked", 409)
        self._picked_up(record)
        record["preparer"] = None
        return {"status": record["status"], "refills": record["refills"]}

    def _picked_up(self, record: dict[str, Any]) -> None:
        """A fill picked up uses a refill if one is left (open again), or ends it (done)."""
        if record["refills"] > 0:
            record["refills"] -= 1
            record["status"] = "open"
        else:
            record["status"] = "done"

    def cancel(self, rx: Any, actor: Any) -> None:
        need(is_int(rx) and _name(actor), 422)
        record = self._rx(rx)
        need(actor in self.staff, 403)
        need(record["status"] in UNDER_WAY, 409)
        drug = self._drug_of(record)
        need(self._room_back(drug, record["quantity"]), 413)
        drug["stock"] += record["quantity"]
        self._put_back(record)

    def _room_back(self, drug: dict[str, Any], units: int) -> bool:
        """A fill cancelled goes back on its shelf, which must have room for it."""
        return bool(drug["stock"] + units <= SHELF)

    def _put_back(self, record: dict[str, Any]) -> None:
        """A fill cancelled leaves its preparer's queue if it still awaited its check."""
        if record["status"] == "prepared":
            self.queue[record["preparer"]] -= 1
        record["status"], record["preparer"] = "open", None

    # -- reads -----------------------------------------------------------------------------------

    def rxInfo(self, rx: Any) -> dict[str, Any]:
        need(is_int(rx), 422)
        record = self._rx(rx)
        return {
            "patient": record["patient"],
            "drug": record["drug"],
            "status": record["status"],
            "refills": record["refills"],
            "preparer": record["preparer"],
        }


class CancelOverfillsShelf(Pharmacy):
    """P1, 6 calls: addDrug (d, stock 6), hire t, prescribe (p, d), prepare (1, t), restock (d, 1),
    cancel (1, t): a cancelled fill is put back on its shelf without asking whether the shelf has
    room (only a delivery is checked), so with the shelf filled again after the fill was taken,
    the cancel is let through (seven units on a shelf of six) where it is refused (413). It needs
    a fill under way (a drug, someone on staff, a prescription, a prepare) and the shelf topped up
    between the prepare and the cancel: in the other order the units fit."""

    def _room_back(self, drug: dict[str, Any], units: int) -> bool:
        return True


class BoundDrugRecord(Pharmacy):
    """P2, 6 calls: addDrug (d, stock 0), prescribe (p, d), removeDrug d, addDrug (d, stock 1), hire
    t, prepare (1, t): a prescription is filled from the drug record it was written against (kept
    on it to save a lookup), not from the one listed under its name now, so after the drug is
    taken off the list and put back, the prepare reads the old record's empty shelf and is refused
    (424); with the stocks the other way round it would take units the shelf does not have. It
    needs the prescription written before the drug is removed and made again, and a prepare after
    it; whether the name is listed is asked of the list (a removed drug is 410 in both)."""

    def _drug_of(self, record: dict[str, Any]) -> dict[str, Any]:
        bound: dict[str, Any] = record["record"]
        return bound


class LicenceOutlivesDismissal(Pharmacy):
    """P3, 7 calls: addDrug (d, stock 1), hire (a, pharmacist), hire t, prescribe (p, d), prepare
    (1, t), dismiss a, check (1, a): the licence register is not told when a pharmacist is
    dismissed, so someone no longer on staff still checks fills (any drug's: a licence passes the
    check before staff is asked). It needs a fill awaiting its check prepared by someone other
    than the pharmacist (a dismissal is refused while a fill of theirs awaits its check, and
    nobody checks their own), and the pharmacist hired and dismissed before the check."""

    def _leave(self, name: str) -> None:
        del self.staff[name]
        del self.queue[name]


class ClosedOneFillEarly(Pharmacy):
    """P4, 7 calls: addDrug (d, stock 2), hire t, hire u, prescribe (p, d, refills 1), prepare (1,
    t), check (1, u), dispense 1: a prescription is done when its refills reach none, not when a
    fill is picked up with none left, so one with a refill is closed after its first fill (the
    pickup answers done, not open, with no refills left in both). Only the optional ``refills``
    at one takes that path (with two, the first pickup leaves one), and a pickup needs the whole
    fill: a drug, two people (nobody checks their own), a prescription, a prepare and a check."""

    def _picked_up(self, record: dict[str, Any]) -> None:
        record["refills"] = max(record["refills"] - 1, 0)
        record["status"] = "open" if record["refills"] > 0 else "done"


class RemoveWithCheckedFill(Pharmacy):
    """P5, 7 calls: addDrug (d, stock 1), hire t, hire u, prescribe (p, d), prepare (1, t), check
    (1, u), removeDrug d: a drug's fills under way are taken as the prepared ones only, so the
    drug is taken off the list while a checked fill of it waits to be picked up (refused, 409,
    with its units off the shelf). A prepared fill refuses the removal in both: the fill must go
    one step further, a check by a second person on staff."""

    def _under_way(self, drug: str) -> bool:
        return any(r["drug"] == drug and r["status"] == "prepared" for r in self.rxs.values())


class CancelKeepsQueue(Pharmacy):
    """P6, 8 calls: addDrug (d, stock 3), hire t, prescribe (p, d), prescribe (q, d), prepare (1,
    t), prepare (2, t), cancel (1, t), prepare (1, t): a cancelled fill that awaited its check is
    not taken off its preparer's queue (a checked one is, at the check), so the queue counts it
    still and the preparer's second fill awaiting check is refused (429) as a third. The count
    shows only at the limit of two: two fills prepared and one cancelled (or one prepared and
    cancelled twice), and a prepare more; two prescriptions, since a patient holds one of a drug
    (and a refused dismissal reads the fills themselves, not the queue)."""

    def _put_back(self, record: dict[str, Any]) -> None:
        record["status"], record["preparer"] = "open", None


class AnyPastPreparer(Pharmacy):
    """P7, 8 calls: addDrug (d, stock 1), hire a, hire b, prescribe (p, d), prepare (1, a), cancel
    (1, a), prepare (1, b), check (1, a): whose fill it is is judged by the log of everyone who has
    prepared a fill of the prescription, not by who prepared the one under way, so after a fill
    is cancelled and prepared again by someone else, the first preparer is refused (423) its
    check. It needs the same prescription prepared twice by two people, a cancel between them (a
    refill's fill would need a check and a pickup, two calls more), and the check."""

    def _own_fill(self, record: dict[str, Any], actor: str) -> bool:
        return actor in record["handled"]


class DoneStillHeld(Pharmacy):
    """P8, 8 calls: addDrug (d, stock 1), hire t, hire u, prescribe (p, d), prepare (1, t), check
    (1, u), dispense 1, prescribe (p, d): the one-prescription-per-drug check counts the patient's
    prescriptions of the drug whatever their status, so a patient whose prescription is done
    (picked up with no refill left) is refused (409) a new one. A prescription is done only at a
    pickup, which needs the whole fill (a drug, two people, a prescription, a prepare, a check)."""

    def _holds(self, patient: str, drug: str) -> bool:
        return any(r["patient"] == patient and r["drug"] == drug for r in self.rxs.values())
