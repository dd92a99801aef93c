"""Every job kind is declared once (`service.jobs.queue`) and given exactly one body
(`service.jobs.tasks`) with the declared signature; RQ is given the declaration's own
import path, which resolves to the declaration."""

from __future__ import annotations

import inspect

from rq.utils import import_attribute

import service.jobs.tasks as tasks
from service.jobs import queue


def test_every_declared_job_has_a_body_with_its_signature() -> None:
    for task in queue.TASKS:
        assert task.has_body, task.name
        body = getattr(tasks, task.name)
        assert inspect.signature(body) == inspect.signature(task.signature), task.name


def test_rq_finds_each_job_by_the_path_derived_from_its_declaration() -> None:
    for task in queue.TASKS:
        assert task.path == f"service.jobs.queue.{task.name}"
        assert import_attribute(task.path) is task


def test_every_declared_job_is_listed() -> None:
    declared = {name for name, value in vars(queue).items() if isinstance(value, queue.Task)}
    assert declared == {t.name for t in queue.TASKS}


def test_a_job_without_its_body_says_so() -> None:
    stray = queue.Task(lambda: "x", queue.RESOLVE)
    try:
        stray()
    except LookupError as exc:
        assert "no body" in str(exc)
    else:
        raise AssertionError("a job without a body ran")
