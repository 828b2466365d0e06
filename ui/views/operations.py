"""The operations page (staff): queues, jobs, stuck jobs and workers; JSON with ?format=json."""

from __future__ import annotations

from dataclasses import asdict

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from documents import permissions
from ui import operations


@never_cache
@login_required
@require_GET
def operations_page(request):
    if not permissions.can_read_operations(request.user):
        raise PermissionDenied("Only staff can see the operations page.")
    state = operations.snapshot()
    if request.GET.get("format") == "json":
        recovery = state["recovery"]
        return JsonResponse(
            {
                "time": state["time"].isoformat(),
                "queues": state["queues"],
                "jobs": [asdict(job) for job in state["jobs"]],
                "stuck": [_stuck_json(job) for job in state["stuck"]],
                "recovery": {
                    "problem": recovery.problem,
                    "passes": [{**asdict(p), "at": p.at.isoformat()} for p in recovery.passes],
                    "oldest_past_lease": recovery.oldest_past_lease
                    and _stuck_json(recovery.oldest_past_lease),
                    "past_lease_seconds": recovery.past_lease_seconds,
                },
                "launcher": state["launcher"],
                "lease_holders": state["lease_holders"],
                "workers": state["workers"],
                "models": state["models"],
            }
        )
    return render(request, "ui/operations.html", state)


def _stuck_json(job) -> dict:
    return {**asdict(job), "lease_expired_at": _iso(job.lease_expired_at)}


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None
