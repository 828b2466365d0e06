"""Team presets in the browser: list them with their full configuration, save one, delete one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from documents import permissions
from documents.errors import DomainError
from documents.models import Role
from qa import presets
from qa.pipeline.config.parameters import described, parameter_values
from qa.selectors import team_preset_get_for_user, team_presets_for_user
from qa.services import team_preset_create, team_preset_delete
from ui.forms import TeamPresetForm
from ui.presenters import preset_groups_view
from ui.views.common import require_role


def _rows(user) -> list[dict]:
    rows = []
    for saved in team_presets_for_user(user):
        try:
            values, problem = described(parameter_values(presets.saved_config(saved))), ""
        except DomainError as exc:
            values, problem = [], str(exc)
        rows.append(
            {
                "preset": saved,
                "set": described(saved.parameters),
                "values": values,
                "problem": problem,
                "can_delete": permissions.has_role(user, saved.team, Role.ADMIN),
            }
        )
    return rows


@login_required
@require_http_methods(["GET", "POST"])
def team_presets(request):
    # Presets are saved for a team the user administers; every member reads them.
    teams = permissions.teams_with_role(request.user, Role.ADMIN).order_by("name")
    if request.method == "POST" and not teams.exists():
        raise PermissionDenied("Only a team's admins save its presets.")
    form = TeamPresetForm(request.POST or None, teams=teams)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            saved = team_preset_create(
                user=request.user,
                team=data["team"],
                name=data["name"],
                description=data["description"],
                base=data["base"],
                parameters=data["parameters"],
            )
        except DomainError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Saved preset {saved.name} for team {saved.team.name}.")
            return redirect("team-presets")
    builtin = [(name, described(parameter_values(presets.get_preset(name)))) for name in presets.PRESET_NAMES]
    return render(
        request,
        "ui/team_presets.html",
        {
            "form": form,
            "rows": _rows(request.user),
            "builtin": builtin,
            "preset_groups": preset_groups_view(),
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_POST
def team_preset_remove(request, pk: int):
    saved = team_preset_get_for_user(request.user, pk)
    require_role(request.user, saved.team, "manage presets")
    team_preset_delete(user=request.user, preset=saved)
    messages.success(request, f"Deleted preset {saved.name} of team {saved.team.name}.")
    return redirect("team-presets")
