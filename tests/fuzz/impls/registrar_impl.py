"""A course registrar (``registrar.yaml``), correct, and one class per planted bug, 7 to 10 calls
deep.

A fifth held-out set (session 10), written after the fuzzer's changes of that session's first
hour and measured before any change made with it in view. Its bugs need what the others need
more of: distinct keys (four courses for one student, two students in one course, a third
course to move to), counters at a limit (a load of three, a swap limit of three counted across
enrollments, a course at its seats), and a resource deleted and made again. The minimal length
is in each docstring, with why it cannot be shorter."""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import is_int, is_str, need


class Registrar:
    def __init__(self) -> None:
        self.students: dict[str, dict[str, Any]] = {}
        self.courses: dict[str, dict[str, Any]] = {}
        self.enrollments: dict[int, dict[str, Any]] = {}
        self.next_id = 1
        self.swaps = 0
        self.removed: dict[str, dict[str, Any]] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def _student(self, name: Any) -> dict[str, Any]:
        need(is_str(name), 422)
        need(name in self.students, 404)
        return self.students[name]

    def _course(self, code: Any) -> dict[str, Any]:
        need(is_str(code), 422)
        need(code in self.courses, 404)
        return self.courses[code]

    def _enrollment(self, id: Any) -> dict[str, Any]:
        need(is_int(id), 422)
        need(id in self.enrollments, 404)
        return self.enrollments[id]

    def _holds(self, student: str, course: str) -> bool:
        return any(
            e["active"] and e["student"] == student and e["course"] == course
            for e in self.enrollments.values()
        )

    # -- students --------------------------------------------------------------------------------

    def addStudent(self, name: Any) -> None:
        need(is_str(name) and 1 <= len(name) <= 4, 422)
        need(name not in self.students, 409)
        self.students[name] = {"load": 0, "frozen": False}

    def removeStudent(self, name: Any) -> None:
        student = self._student(name)
        need(student["load"] == 0, 409)
        del self.students[name]

    def freeze(self, name: Any) -> None:
        student = self._student(name)
        need(not student["frozen"], 409)
        student["frozen"] = True

    def unfreeze(self, name: Any) -> None:
        student = self._student(name)
        need(student["frozen"], 409)
        student["frozen"] = False

    # -- courses ---------------------------------------------------------------------------------

    def addCourse(self, code: Any, seats: Any) -> None:
        need(is_str(code) and 1 <= len(code) <= 4 and is_int(seats) and 1 <= seats <= 3, 422)
        need(code not in self.courses, 409)
        self.courses[code] = self._new_course(code, seats)

    def _new_course(self, code: str, seats: int) -> dict[str, Any]:
        return {"seats": seats, "taken": 0, "open": True, "drops": 0}

    def removeCourse(self, code: Any) -> None:
        course = self._course(code)
        need(course["taken"] == 0, 409)
        self.removed[code] = self.courses.pop(code)

    def closeCourse(self, code: Any) -> None:
        course = self._course(code)
        need(course["open"], 409)
        course["open"] = False

    def openCourse(self, code: Any) -> None:
        course = self._course(code)
        need(not course["open"], 409)
        self._reopen(course)

    def _reopen(self, course: dict[str, Any]) -> None:
        course["open"] = True

    # -- enrollments -----------------------------------------------------------------------------

    def enroll(self, student: Any, course: Any) -> dict[str, Any]:
        need(is_str(student) and is_str(course), 422)
        who = self._student(student)
        where = self._course(course)
        need(not who["frozen"], 423)
        need(where["open"], 423)
        need(where["taken"] < where["seats"], 409)
        need(not self._holds(student, course), 409)
        need(self._under_load(who), 429)
        id = self.next_id
        self.next_id += 1
        self.enrollments[id] = {"student": student, "course": course, "active": True, "swaps": 0}
        who["load"] += 1
        where["taken"] += 1
        return {"id": id}

    def _under_load(self, student: dict[str, Any]) -> bool:
        return student["load"] < 3

    def drop(self, id: Any) -> None:
        enrollment = self._enrollment(id)
        need(enrollment["active"], 409)
        enrollment["active"] = False
        self.students[enrollment["student"]]["load"] -= 1
        course = self.courses[enrollment["course"]]
        course["taken"] -= 1
        course["drops"] += 1

    def swap(self, id: Any, course: Any) -> None:
        need(is_int(id) and is_str(course), 422)
        enrollment = self._enrollment(id)
        need(enrollment["active"], 409)
        where = self._course(course)
        need(enrollment["course"] != course, 409)
        need(self._may_swap(enrollment), 423)
        need(where["open"], 423)
        need(where["taken"] < where["seats"], 409)
        need(not self._holds(enrollment["student"], course), 409)
        need(self._swaps_left(), 429)
        self._leave(self.courses[enrollment["course"]])
        where["taken"] += 1
        enrollment["course"] = course
        enrollment["swaps"] += 1
        self.swaps += 1

    def _may_swap(self, enrollment: dict[str, Any]) -> bool:
        return not self.students[enrollment["student"]]["frozen"]

    def _swaps_left(self) -> bool:
        return self.swaps < 3

    def _leave(self, course: dict[str, Any]) -> None:
        course["taken"] -= 1

    # -- reads -----------------------------------------------------------------------------------

    def studentInfo(self, name: Any) -> dict[str, Any]:
        student = self._student(name)
        return {"load": student["load"], "frozen": student["frozen"]}

    def courseInfo(self, code: Any) -> dict[str, Any]:
        course = self._course(code)
        return {"seats": course["seats"], "taken": course["taken"], "open": course["open"]}

    def enrollmentInfo(self, id: Any) -> dict[str, Any]:
        enrollment = self._enrollment(id)
        return {key: enrollment[key] for key in ("student", "course", "active")}

    def stats(self) -> dict[str, Any]:
        return {"swaps": self.swaps, "enrollments": len(self.enrollments)}


class FourthCourse(Registrar):
    """R1, 9 calls: addStudent, addCourse x4, enroll x4: a student may take a fourth course. One
    student cannot hold one course twice, so the four enrollments need four courses."""

    def _under_load(self, student: dict[str, Any]) -> bool:
        return student["load"] <= 3


class FullSwapLeak(Registrar):
    """R2, 8 calls: addStudent x2, addCourse a (2 seats), addCourse b, enroll x2 into a, swap one
    to b, courseInfo a: leaving a full course of two or more seats keeps the seat taken. A full
    course of two seats needs two students (one holds a course once) and two enrollments."""

    def _leave(self, course: dict[str, Any]) -> None:
        if not (course["taken"] >= course["seats"] >= 2):
            super()._leave(course)


class DroppedSwaps(Registrar):
    """R3, 10 calls: addStudent, addCourse x2, enroll, swap, drop, enroll, swap x3: the swap
    limit of three counts the swaps of active enrollments only, so a fourth swap goes through
    after a swapped enrollment was dropped. Four swaps, a dropped enrollment that swapped and an
    active one (a dropped enrollment swaps no more), and two courses to swap between."""

    def _swaps_left(self) -> bool:
        return sum(e["swaps"] for e in self.enrollments.values() if e["active"]) < 3


class ReopenForgets(Registrar):
    """R4, 8 calls: addCourse (2+ seats), addStudent x2, enroll x2, closeCourse, openCourse,
    courseInfo: a course with two or more students, closed and opened again, forgets them."""

    def _reopen(self, course: dict[str, Any]) -> None:
        super()._reopen(course)
        if course["taken"] >= 2:
            course["taken"] = 0


class RecreatedCourse(Registrar):
    """R5, 9 calls: addCourse a, addStudent, enroll, drop, enroll, drop, removeCourse a, addCourse
    a (more seats), courseInfo a: a course made again under the code of a removed one that saw
    two drops keeps the old number of seats where the new one has more. Two drops need two
    enrollments (a dropped one is not dropped again)."""

    def _new_course(self, code: str, seats: int) -> dict[str, Any]:
        course = super()._new_course(code, seats)
        old = self.removed.get(code)
        if old is not None and old["drops"] >= 2:
            course["seats"] = min(seats, old["seats"])
        return course


class FrozenSwap(Registrar):
    """R6, 7 calls: addStudent, addCourse x2, enroll x2, freeze, swap one enrollment to the other
    course: a frozen student with two active enrollments passes the frozen check (it reads the
    load, not the flag), so the swap is refused for the wrong reason (409 full or already
    enrolled, where the contract says 423; with a third course it is accepted, 8 calls). Two
    enrollments of one student take two courses."""

    def _may_swap(self, enrollment: dict[str, Any]) -> bool:
        student = self.students[enrollment["student"]]
        return student["load"] >= 2 or not student["frozen"]
