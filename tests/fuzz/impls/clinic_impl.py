"""A clinic ward (``clinic.yaml``), correct, and one class per planted bug, 6 to 9 calls deep.

A seventh held-out set (session 14), written without looking at the fuzzer's code and measured
on it as it was. Its bugs take shapes the earlier sets have less of: a daily limit reached by a
mix of two operations (admissions and transfers); a check that reads the wrong one of three keys;
a status lifecycle walked twice (admitted, discharged, admitted, discharged); an amount exactly
equal to a record's field; a record removed and made again that inherits implementation-only
state; a derived value read after two records interact; a bug that needs two optional input
fields present; and an order of three calls on one patient. The minimal length is in each
docstring, with why it cannot be shorter.

The implementation keeps some of its state where the contract does not look: each patient's
stays in a log by name, the bill as a list of fees less what was paid, the doctor who admitted
each patient, and each doctor's free places as a cached count beside the load.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need

BEDS = 2
MOVES = 4
STAYS = 2


def _flag(value: Any) -> bool:
    """An optional boolean input: absent reads as false; anything else must be a boolean."""
    need(value is ABSENT or type(value) is bool, 422)
    return value is True


class Clinic:
    def __init__(self) -> None:
        self.doctors: dict[str, dict[str, Any]] = {}
        self.patients: dict[str, dict[str, Any]] = {}
        self.stays: dict[str, int] = {}
        self.bills: dict[str, list[int]] = {}
        self.paid: dict[str, int] = {}
        self.admitted_by: dict[str, str] = {}
        self.beds = 0
        self.admissions = 0
        self.transfers = 0

    # -- lookups ---------------------------------------------------------------------------------

    def _doctor(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.doctors, 404)
        return self.doctors[name]

    def _patient(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.patients, 404)
        return self.patients[name]

    def _owed(self, name: str) -> int:
        return sum(self.bills[name]) - self.paid[name]

    # -- doctors ---------------------------------------------------------------------------------

    def addDoctor(self, name: Any, cap: Any, senior: Any = ABSENT) -> None:
        need(is_str(name) and 1 <= len(name) <= 4 and is_int(cap) and 1 <= cap <= 3, 422)
        is_senior = _flag(senior)
        need(name not in self.doctors, 409)
        self.doctors[name] = {"cap": cap, "load": 0, "free": cap, "senior": is_senior}

    def _take(self, doctor: dict[str, Any]) -> None:
        doctor["load"] += 1
        doctor["free"] -= 1

    def _release(self, doctor: dict[str, Any]) -> None:
        doctor["load"] -= 1
        doctor["free"] += 1

    def _move_load(self, source: dict[str, Any], target: dict[str, Any]) -> None:
        self._release(source)
        self._take(target)

    # -- patients --------------------------------------------------------------------------------

    def register(self, name: Any, urgent: Any = ABSENT) -> None:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        is_urgent = _flag(urgent)
        need(name not in self.patients, 409)
        self.patients[name] = {"status": "waiting", "doctor": "", "urgent": is_urgent}
        self._open_account(name)

    def _open_account(self, name: str) -> None:
        self.stays[name] = 0
        self.bills[name] = []
        self.paid[name] = 0

    def removePatient(self, name: Any) -> None:
        patient = self._patient(name)
        need(patient["status"] != "admitted", 409)
        need(self._owed(name) == 0, 402)
        del self.patients[name]

    # -- the ward --------------------------------------------------------------------------------

    def admit(self, patient: Any, doctor: Any) -> None:
        need(is_str(patient) and is_str(doctor), 422)
        record = self._patient(patient)
        who = self._doctor(doctor)
        need(record["status"] != "admitted", 409)
        need(self.stays[patient] < STAYS, 429)
        need(not record["urgent"] or who["senior"], 423)
        need(who["load"] < who["cap"], 409)
        need(self._ward_room(record), 429)
        need(self._moves_left("admit"), 429)
        record.update(status="admitted", doctor=doctor)
        self.stays[patient] += 1
        self.admitted_by[patient] = doctor
        self._take(who)
        self.beds += 1
        self.admissions += 1

    def _ward_room(self, patient: dict[str, Any]) -> bool:
        return self.beds < BEDS

    def _moves_left(self, kind: str) -> bool:
        return self.admissions + self.transfers < MOVES

    def discharge(self, patient: Any, fee: Any) -> dict[str, Any]:
        need(is_str(patient) and is_int(fee) and 0 <= fee <= 9, 422)
        record = self._patient(patient)
        need(record["status"] == "admitted", 409)
        self._release(self.doctors[self._attending(patient)])
        record.update(status="discharged", doctor="")
        self._bill(patient, fee)
        self.beds -= 1
        return {"owed": self._owed(patient)}

    def _attending(self, name: str) -> str:
        return str(self.patients[name]["doctor"])

    def _bill(self, name: str, fee: int) -> None:
        self.bills[name].append(fee)

    def transfer(self, patient: Any, doctor: Any, to: Any) -> None:
        need(is_str(patient) and is_str(doctor) and is_str(to), 422)
        record = self._patient(patient)
        source = self._doctor(doctor)
        target = self._doctor(to)
        need(record["status"] == "admitted", 409)
        need(record["doctor"] == doctor, 409)
        need(to != doctor, 409)
        need(not record["urgent"] or target["senior"], 423)
        need(self._room_for_transfer(source, target), 409)
        need(self._moves_left("transfer"), 429)
        record["doctor"] = to
        self._move_load(source, target)
        self.transfers += 1

    def _room_for_transfer(self, source: dict[str, Any], target: dict[str, Any]) -> bool:
        return target["load"] < target["cap"]

    # -- billing ---------------------------------------------------------------------------------

    def pay(self, patient: Any, amount: Any) -> dict[str, Any]:
        need(is_str(patient) and is_int(amount) and 1 <= amount <= 9, 422)
        self._patient(patient)
        owed = self._owed(patient)
        need(amount <= owed, 409)
        if amount == owed:
            self._settle(patient)
        else:
            self.paid[patient] += amount
        return {"owed": self._owed(patient)}

    def _settle(self, name: str) -> None:
        """A bill paid in full is closed: its fees and payments are dropped together."""
        self.bills[name] = []
        self.paid[name] = 0

    # -- reads -----------------------------------------------------------------------------------

    def patientInfo(self, name: Any) -> dict[str, Any]:
        patient = self._patient(name)
        return {
            "status": patient["status"],
            "doctor": patient["doctor"],
            "owed": self._owed(name),
            "stays": self.stays[name],
            "urgent": patient["urgent"],
        }

    def doctorInfo(self, name: Any) -> dict[str, Any]:
        doctor = self._doctor(name)
        return {k: doctor[k] for k in ("cap", "load", "free", "senior")}

    def clinic(self) -> dict[str, Any]:
        return {
            "beds": self.beds,
            "moves": self.admissions + self.transfers,
            "patients": len(self.patients),
        }


class MixedMoves(Clinic):
    """C1, 9 calls: addDoctor d, addDoctor e, register p, admit (p, d), transfer p d->e, e->d,
    d->e, register q, admit (q, d): an admission checks the day's limit of four moves against the
    admissions alone, so after one admission and three transfers a fifth move is let in. The
    transfers need two doctors; each is one call for one move, the cheapest way to the limit."""

    def _moves_left(self, kind: str) -> bool:
        if kind == "admit":
            return self.admissions < MOVES
        return super()._moves_left(kind)


class CapOfSource(Clinic):
    """C2, 7 calls: addDoctor (d, cap 2), addDoctor (e, cap 1), register p, register q,
    admit (q, e), admit (p, d), transfer p d->e: a transfer compares the receiving doctor's load
    with the sending doctor's cap, so a full doctor takes a patient from a roomier one (or a
    doctor with room refuses one from a smaller). The two differ only when the receiver has a
    patient already: three keys and two admissions."""

    def _room_for_transfer(self, source: dict[str, Any], target: dict[str, Any]) -> bool:
        return target["load"] < source["cap"]


class SecondBill(Clinic):
    """C3, 6 calls: addDoctor, register p, admit, discharge (fee > 0), admit, discharge: the
    second stay's bill replaces the first instead of adding to it, so the second discharge
    answers a smaller amount owed. The lifecycle walked twice on one patient."""

    def _bill(self, name: str, fee: int) -> None:
        self.bills[name] = [fee]


class FullPayment(Clinic):
    """C4, 6 calls: addDoctor, register p, admit, discharge (fee f), pay f, patientInfo p: paying
    exactly what is owed closes the account by opening it afresh, which also forgets the
    patient's stays (a third stay would then be let in). A payment of less is kept right."""

    def _settle(self, name: str) -> None:
        self._open_account(name)


class ReRegistered(Clinic):
    """C5, 7 calls: addDoctor, register p, admit, discharge (fee 0), removePatient p,
    register p, patientInfo p: a patient registered again under a removed one's name keeps the
    old stays from the stay log (state the contract does not see). The stay needs an admission,
    and the removal a discharge first."""

    def _open_account(self, name: str) -> None:
        self.stays.setdefault(name, 0)
        self.bills[name] = []
        self.paid[name] = 0


class StaleFree(Clinic):
    """C6, 6 calls: addDoctor d, addDoctor e, register p, admit (p, d), transfer p d->e,
    doctorInfo d: a transfer moves the load without updating the sending doctor's cached free
    places, so the derived ``free`` reads wrong once two doctors have shared a patient."""

    def _move_load(self, source: dict[str, Any], target: dict[str, Any]) -> None:
        source["load"] -= 1
        self._take(target)


class TriageBypass(Clinic):
    """C7, 7 calls: addDoctor (d, cap 3, senior), register a, register b, admit (a, d),
    admit (b, d), register (u, urgent), admit (u, d): an urgent patient is let into a full ward.
    It needs both optional fields present (an urgent patient, a senior doctor to take them),
    two beds taken, and a doctor with a third place."""

    def _ward_room(self, patient: dict[str, Any]) -> bool:
        return bool(patient["urgent"]) or super()._ward_room(patient)


class DischargeAdmitter(Clinic):
    """C8, 7 calls: addDoctor d, addDoctor e, register p, admit (p, d), transfer p d->e,
    discharge p, doctorInfo d: a discharge frees a place with the doctor who admitted the patient,
    not the one caring for them. It needs the order admit, transfer, discharge on one patient:
    without a transfer between them the two doctors are the same one."""

    def _attending(self, name: str) -> str:
        return self.admitted_by[name]
