"""CI runners (``runners.yaml``), correct, and one class per planted bug, 6 to 8 calls deep.

A nineteenth held-out set, written without looking at the fuzzer's code. Its shapes: pipelines
numbered by the service, so that one deleted and made again under its name is another pipeline
(its old jobs are not retried on the new one); jobs numbered by the service too (the calls on a
job name the number it answered), queued, picked up by a runner, finished or canceled, retried
twice, a lifecycle that goes round; two limits on a pick at once, the runner's jobs at once and
the pipeline's, each brought to it by jobs from one or two pipelines; a count that goes up on one
path (a pick) and down on two (a finish, a cancel); a runner drained while it runs a job, removed
once idle and registered again under its name; secrets scoped to a pipeline, the same name held
by two pipelines; artifacts counted per pipeline, freed when their job is retried. The minimal
length is in each docstring, with why it cannot be shorter.

The implementation keeps some state where the contract does not look: a table of the pipelines
holding each secret name (what a queued job's secret is checked against), the dispatcher's set of
runners that take no job (beside each runner's draining flag), a set of runners to pause once
they are idle (empty here: the correct service pauses a runner at once), each runner's count of
jobs it runs (beside the jobs' own records), each pipeline's set of running jobs (what its limit
is checked against) and its count of artifacts, each job's count of attempts (one more than its
retries) and the runner that ran it last, kept after it ends.
"""

from __future__ import annotations

from typing import Any

from fuzz_impl_check import ABSENT, is_int, is_str, need, option

LIMIT = 2  # a pipeline's jobs at once without `limit`
SLOTS = 2  # a runner's jobs at once without `slots`
SECRETS = 2  # per pipeline
ARTIFACTS = 2  # per pipeline
RETRIES = 2  # per job
ACTIVE = ("queued", "running")


def _name(value: Any) -> bool:
    return is_str(value) and 1 <= len(value) <= 3


def _bool(value: Any) -> bool:
    return type(value) is bool


class Runners:
    def __init__(self) -> None:
        self.next_pipeline = 1
        self.next_job = 1
        self.pipes: dict[str, dict[str, Any]] = {}  # by name: id, limit, secrets, artifacts, running
        self.acl: dict[str, set[str]] = {}  # by secret name: the pipelines holding it
        self.runners: dict[str, dict[str, Any]] = {}  # by name: slots, draining, busy (jobs it runs)
        self.paused: set[str] = set()  # the dispatcher's runners that take no job
        self.pending: set[str] = set()  # runners to pause once they run no job
        self.jobs: dict[int, dict[str, Any]] = {}  # by number

    # -- lookups ---------------------------------------------------------------------------------

    def _pipe(self, name: str) -> dict[str, Any]:
        need(name in self.pipes, 404)
        return self.pipes[name]

    def _runner(self, name: str) -> dict[str, Any]:
        need(name in self.runners, 404)
        return self.runners[name]

    def _job(self, number: int) -> dict[str, Any]:
        need(number in self.jobs, 404)
        return self.jobs[number]

    def _scan(self, pipeline: str, status: str) -> int:
        """The jobs of a pipeline in a status, counted off the job records (the info query)."""
        return sum(1 for job in self.jobs.values() if job["pipeline"] == pipeline and job["status"] == status)

    # -- pipelines and secrets -------------------------------------------------------------------

    def createPipeline(self, pipeline: Any, limit: Any = ABSENT) -> dict[str, Any]:
        need(_name(pipeline), 422)
        limit = option(limit, 1, 3, LIMIT)
        need(pipeline not in self.pipes, 409)
        number = self.next_pipeline
        self.next_pipeline += 1
        self.pipes[pipeline] = {"id": number, "limit": limit, "secrets": [], "artifacts": 0, "running": set()}
        return {"id": number}

    def deletePipeline(self, pipeline: Any) -> None:
        need(_name(pipeline), 422)
        record = self._pipe(pipeline)
        need(
            not any(job["pipeline"] == pipeline and job["status"] in ACTIVE for job in self.jobs.values()),
            409,
        )
        del self.pipes[pipeline]
        for secret in record["secrets"]:
            self._revoke(secret, pipeline)

    def _revoke(self, secret: str, pipeline: str) -> None:
        """A deleted pipeline leaves the table of the pipelines holding each of its secrets."""
        holders = self.acl.get(secret, set())
        holders.discard(pipeline)
        if not holders:
            self.acl.pop(secret, None)

    def addSecret(self, pipeline: Any, secret: Any) -> dict[str, Any]:
        need(_name(pipeline) and _name(secret), 422)
        record = self._pipe(pipeline)
        need(secret not in record["secrets"], 409)
        need(len(record["secrets"]) < SECRETS, 413)
        record["secrets"].append(secret)
        self.acl.setdefault(secret, set()).add(pipeline)
        return {"secrets": list(record["secrets"])}

    # -- runners ---------------------------------------------------------------------------------

    def registerRunner(self, runner: Any, slots: Any = ABSENT) -> None:
        need(_name(runner), 422)
        slots = option(slots, 1, 3, SLOTS)
        need(runner not in self.runners, 409)
        self.runners[runner] = {"slots": slots, "draining": False, "busy": 0}

    def drainRunner(self, runner: Any) -> dict[str, Any]:
        need(_name(runner), 422)
        record = self._runner(runner)
        need(not record["draining"], 409)
        record["draining"] = True
        self._pause(runner, record)
        return {"running": record["busy"]}

    def _pause(self, runner: str, record: dict[str, Any]) -> None:
        """A runner drained is off the dispatcher's list at once, whatever it runs."""
        self.paused.add(runner)

    def removeRunner(self, runner: Any) -> None:
        need(_name(runner), 422)
        record = self._runner(runner)
        need(not record["busy"], 409)
        del self.runners[runner]
        self._forget_runner(runner)

    def _forget_runner(self, runner: str) -> None:
        """A runner removed leaves the dispatcher's lists: one registered under its name is new."""
        self.paused.discard(runner)
        self.pending.discard(runner)

    # -- jobs ------------------------------------------------------------------------------------

    def queueJob(self, pipeline: Any, secret: Any = ABSENT) -> dict[str, Any]:
        need(_name(pipeline) and (secret is ABSENT or _name(secret)), 422)
        record = self._pipe(pipeline)
        need(secret is ABSENT or pipeline in self.acl.get(secret, ()), 403)
        number = self.next_job
        self.next_job += 1
        self.jobs[number] = {
            "pipeline": pipeline,
            "pid": record["id"],
            "status": "queued",
            "runner": "",
            "attempts": 1,
            "artifact": False,
            "secret": "" if secret is ABSENT else secret,
        }
        return {"job": number}

    def pickJob(self, runner: Any, job: Any) -> dict[str, Any]:
        need(_name(runner) and is_int(job), 422)
        record = self._runner(runner)
        target = self._job(job)
        need(target["status"] == "queued", 409)
        need(runner not in self.paused, 423)
        need(self._load(runner, target) < record["slots"], 429)
        pipe = self.pipes[target["pipeline"]]
        need(len(pipe["running"]) < pipe["limit"], 412)
        target["status"] = "running"
        target["runner"] = runner
        record["busy"] += 1
        pipe["running"].add(job)
        return {"running": record["busy"]}

    def _load(self, runner: str, target: dict[str, Any]) -> int:
        """The jobs a runner runs, whatever their pipelines."""
        return int(self.runners[runner]["busy"])

    def finishJob(self, job: Any, passed: Any, artifact: Any = ABSENT) -> dict[str, Any]:
        need(is_int(job) and _bool(passed) and (artifact is ABSENT or _bool(artifact)), 422)
        record = self._job(job)
        need(record["status"] == "running", 409)
        keep = artifact is not ABSENT and artifact
        pipe = self.pipes[record["pipeline"]]
        need(not keep or pipe["artifacts"] < ARTIFACTS, 413)
        self._release(job, record, "finish")
        record["status"] = "passed" if passed else "failed"
        record["artifact"] = keep
        if keep:
            pipe["artifacts"] += 1
        return {"artifacts": pipe["artifacts"]}

    def _release(self, number: int, record: dict[str, Any], path: str) -> None:
        """A job that stops running gives its runner a slot and its pipeline one; a runner to
        be paused once idle is paused when its last job stops."""
        name = record["runner"]
        holder = self.runners.get(name)
        if holder is not None:
            holder["busy"] -= 1
            if holder["busy"] == 0 and name in self.pending:
                self.pending.discard(name)
                self.paused.add(name)
        self._leave(number, record, path)

    def _leave(self, number: int, record: dict[str, Any], path: str) -> None:
        """A job that stops running, finished or canceled, leaves its pipeline's running set."""
        self.pipes[record["pipeline"]]["running"].discard(number)

    def cancelJob(self, job: Any) -> None:
        need(is_int(job), 422)
        record = self._job(job)
        need(record["status"] in ACTIVE, 409)
        if self._holds_slot(record):
            self._release(job, record, "cancel")
        record["status"] = "canceled"

    def _holds_slot(self, record: dict[str, Any]) -> bool:
        """A job holds a runner's slot while it runs."""
        return bool(record["status"] == "running")

    def retryJob(self, job: Any) -> dict[str, Any]:
        need(is_int(job), 422)
        record = self._job(job)
        need(record["status"] in ("failed", "canceled"), 409)
        home = self.pipes.get(record["pipeline"])
        need(home is not None and home["id"] == record["pid"], 410)
        need(self._may_retry(record), 429)
        record["status"] = "queued"
        record["attempts"] += 1
        self._drop_artifact(record)
        return {"retries": record["attempts"] - 1}

    def _may_retry(self, record: dict[str, Any]) -> bool:
        """Two retries: three attempts in all."""
        return bool(record["attempts"] <= RETRIES)

    def _drop_artifact(self, record: dict[str, Any]) -> None:
        """A job retried loses its artifact, and its pipeline has the slot back."""
        if record["artifact"]:
            record["artifact"] = False
            self.pipes[record["pipeline"]]["artifacts"] -= 1

    # -- reads -----------------------------------------------------------------------------------

    def jobInfo(self, job: Any) -> dict[str, Any]:
        need(is_int(job), 422)
        record = self._job(job)
        return {
            "pipeline": record["pipeline"],
            "status": record["status"],
            "runner": record["runner"],
            "retries": record["attempts"] - 1,
            "artifact": record["artifact"],
            "secret": record["secret"],
        }

    def runnerInfo(self, runner: Any) -> dict[str, Any]:
        need(_name(runner), 422)
        record = self._runner(runner)
        return {"slots": record["slots"], "draining": record["draining"], "running": record["busy"]}

    def pipelineInfo(self, pipeline: Any) -> dict[str, Any]:
        need(_name(pipeline), 422)
        record = self._pipe(pipeline)
        return {
            "id": record["id"],
            "limit": record["limit"],
            "queued": self._scan(pipeline, "queued"),
            "running": self._scan(pipeline, "running"),
            "artifacts": record["artifacts"],
            "secrets": list(record["secrets"]),
        }


class SecretDroppedForAll(Runners):
    """R1, 6 calls: createPipeline p, createPipeline q, addSecret (p, s), addSecret (q, s),
    deletePipeline p, queueJob (q, s): deleting a pipeline drops each of its secret names from the
    table of the pipelines holding it, not just the pipeline's entry, so q, which holds s too, is
    refused a job naming s (403). It needs two pipelines holding one secret name, one of them
    deleted, and a job on the other naming it: the table is read only when a job names a secret."""

    def _revoke(self, secret: str, pipeline: str) -> None:
        self.acl.pop(secret, None)


class DrainOutlivesRemove(Runners):
    """R2, 7 calls: registerRunner r, drainRunner r, removeRunner r, registerRunner r,
    createPipeline p, queueJob p, pickJob (r, 1): a runner removed stays on the dispatcher's list
    of paused runners, so a runner registered again under its name is refused a job (423) it has
    not been drained. The list is read only by a pick (a drain reads the runner's own flag, and
    runnerInfo shows it), so it needs the runner drained, removed and registered again, a pipeline
    and a job queued on it."""

    def _forget_runner(self, runner: str) -> None:
        pass


class SlotsPerPipeline(Runners):
    """R3, 7 calls: createPipeline p, createPipeline q, registerRunner (r, slots 1), queueJob p,
    queueJob q, pickJob (r, 1), pickJob (r, 2): the runner's limit is checked against the jobs it
    runs of the job's own pipeline (a filter copied from the pipeline's limit), so a runner of one
    slot running a job of p takes a job of q as well (429 in the contract). It needs a runner at
    its limit with jobs of one pipeline and a job of another: two pipelines, a job queued on each,
    and the runner's slot taken (with the default two slots, a third job: two calls more)."""

    def _load(self, runner: str, target: dict[str, Any]) -> int:
        running = self.pipes[target["pipeline"]]["running"]
        return sum(1 for number in running if self.jobs[number]["runner"] == runner)


class CancelKeepsPipelineSlot(Runners):
    """R4, 7 calls: createPipeline (p, limit 1), registerRunner r, queueJob p, queueJob p, pickJob
    (r, 1), cancelJob 1, pickJob (r, 2): a running job canceled gives its runner its slot back but
    stays in its pipeline's set of running jobs (a finish takes it out), so a pipeline of one job at
    once is refused the next (412). The set is read only at the pipeline's limit (pipelineInfo and
    a deletion read the job records), so a pipeline of one, a job running and canceled, and another
    queued (or the same one retried: as long) and picked."""

    def _leave(self, number: int, record: dict[str, Any], path: str) -> None:
        if path == "finish":
            self.pipes[record["pipeline"]]["running"].discard(number)


class RetryOffByOne(Runners):
    """R5, 8 calls: createPipeline p, queueJob p, cancelJob 1, retryJob 1, cancelJob 1, retryJob
    1, cancelJob 1, retryJob 1: the retry limit is checked against the job's attempts as if they
    were its retries, so a job is retried a third time (429 in the contract). Only the third retry
    of one job shows it, and each retry needs the job ended first (canceling it is the short way:
    a finish needs a runner and a pick)."""

    def _may_retry(self, record: dict[str, Any]) -> bool:
        return bool(record["attempts"] <= RETRIES + 1)


class CancelRetriedJob(Runners):
    """R6, 8 calls: createPipeline p, registerRunner r, queueJob p, pickJob (r, 1), cancelJob 1,
    retryJob 1, cancelJob 1, removeRunner r: a canceled job is taken off its runner's count when it
    has a runner on record, not when it runs, and a job retried keeps the runner that ran it last,
    so canceling it while it is queued again takes r's count below none, and r, idle, cannot be
    removed (409). It needs a job that has run on r, ended (a cancel or a finish), queued again and
    canceled while queued, then a call that reads the count (removeRunner, runnerInfo or
    drainRunner: a pick would need another job queued)."""

    def _holds_slot(self, record: dict[str, Any]) -> bool:
        return bool(record["runner"] != "")


class ArtifactKeptOnRetry(Runners):
    """R7, 7 calls: createPipeline p, registerRunner r, queueJob p, pickJob (r, 1), finishJob (1,
    failed, artifact), retryJob 1, pipelineInfo p: a job retried loses its artifact, but the
    pipeline's count of artifacts is not given the slot back, so it shows one where the contract
    has none. An artifact needs a job run and finished with it (failed: a passed job is not
    retried), then the retry, then a read of the count (pipelineInfo; a finish would need the job
    picked again first)."""

    def _drop_artifact(self, record: dict[str, Any]) -> None:
        record["artifact"] = False


class DrainWhenIdle(Runners):
    """R8, 7 calls: createPipeline p, registerRunner r, queueJob p, queueJob p, pickJob (r, 1),
    drainRunner r, pickJob (r, 2): a runner drained while it runs a job is put off the dispatcher's
    list only once its jobs end (a graceful drain), so it is given another job meanwhile (423 in
    the contract). It needs the runner busy when drained (a pipeline, a job queued and picked) and
    another job queued for it to pick."""

    def _pause(self, runner: str, record: dict[str, Any]) -> None:
        if record["busy"]:
            self.pending.add(runner)
        else:
            self.paused.add(runner)
