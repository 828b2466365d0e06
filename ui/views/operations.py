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
        return JsonResponse(
            {
                "time": state["time"].isoformat(),
                "queues": state["queues"],
                "jobs": [asdict(job) for job in state["jobs"]],
                "stuck": [
                    {
                        **asdict(job),
                        "lease_expired_at": job.lease_expired_at and job.lease_expired_at.isoformat(),
                    }
                    for job in state["stuck"]
                ],
                "lease_holders": state["lease_holders"],
                "workers": state["workers"],
            }
        )
    return render(request, "ui/operations.html", state)


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None
