"""Teams and their members' roles: every member reads them, the team's admins change them."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from documents import permissions
from documents.errors import DomainError
from documents.models import Membership, Role
from documents.selectors import team_get_for_user
from documents.services import membership_remove, membership_set
from ui.views.common import require_role


@login_required
@require_GET
def teams(request):
    rows = [
        {"team": team, "role": permissions.role_of(request.user, team)}
        for team in permissions.teams_of(request.user)
        .annotate(member_count=Count("members"))
        .order_by("name")
    ]
    return render(request, "ui/teams.html", {"rows": rows})


@login_required
@require_http_methods(["GET", "POST"])
def team(request, pk: int):
    current = team_get_for_user(request.user, str(pk))
    error = ""
    if request.method == "POST":
        require_role(request.user, current, "manage members")
        try:
            if request.POST.get("action") == "remove":
                user = get_user_model().objects.filter(pk=request.POST.get("user", "0") or 0).first()
                if user is not None:
                    membership_remove(team=current, user=user, actor=request.user)
                    messages.success(request, f"Removed {user.get_username()} from {current.name}.")
            else:
                membership = membership_set(
                    team=current,
                    username=request.POST.get("username", ""),
                    role=request.POST.get("role", ""),
                    actor=request.user,
                )
                messages.success(
                    request, f"{membership.user.get_username()} is now {membership.role} in {current.name}."
                )
        except DomainError as exc:
            error = str(exc)
        else:
            return redirect("team", pk=current.pk)
    members = Membership.objects.filter(team=current).select_related("user").order_by("user__username")
    return render(
        request,
        "ui/team.html",
        {
            "team": current,
            "members": members,
            "roles": Role.choices,
            "my_role": permissions.role_of(request.user, current),
            "can_manage": permissions.has_role(request.user, current, Role.ADMIN),
            "error": error,
        },
        status=400 if error else 200,
    )
