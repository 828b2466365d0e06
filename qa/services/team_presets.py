"""Team presets: a team's saved configurations (a built-in preset plus parameter overrides)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from django.db import IntegrityError, transaction

from audit.models import AuditEvent
from audit.services import audit_record
from qa import presets
from qa.errors import (
    TeamPresetExists,
    TeamPresetInvalid,
)
from qa.models import TeamPreset

TEAM_PRESET_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$")


def team_preset_create(
    *, user, team, name: str, base: str, parameters: Mapping[str, object], description: str = ""
) -> TeamPreset:
    """Save ``base`` plus ``parameters`` under ``name`` for ``team``; the caller checked membership.

    The configuration is resolved once here, so a preset that could never run is refused now.
    """
    name = (name or "").strip()
    if not TEAM_PRESET_NAME.match(name):
        raise TeamPresetInvalid(
            f"Preset name {name!r}: 1 to 50 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit."
        )
    if name in presets.PRESET_NAMES:
        raise TeamPresetInvalid(f"{name!r} is a built-in preset's name; choose another.")
    if base not in presets.PRESET_NAMES:
        raise TeamPresetInvalid(
            f"Unknown base preset {base!r}; choose one of {', '.join(presets.PRESET_NAMES)}."
        )
    config = presets.with_parameters(presets.get_preset(base), parameters)
    try:
        with transaction.atomic():
            preset = TeamPreset.objects.create(
                team=team,
                name=name,
                description=(description or "").strip(),
                base=base,
                parameters=config.parameters,
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
            _audit(user, AuditEvent.Action.PRESET_CREATE, preset)
            return preset
    except IntegrityError as exc:  # the (team, name) constraint: someone saved that name first
        raise TeamPresetExists(f"Team {team.name} already has a preset named {name!r}.") from exc


def team_preset_delete(*, user, preset: TeamPreset) -> None:
    """Questions and evaluation runs that used it keep the configuration they stored."""
    with transaction.atomic():
        _audit(user, AuditEvent.Action.PRESET_DELETE, preset)
        preset.delete()


def _audit(user, action: str, preset: TeamPreset) -> None:
    # A preset decides how a team's questions are answered: who changed that is on record.
    audit_record(
        actor=user,
        action=action,
        target_type="team_preset",
        target_id=preset.pk,
        target_label=f"preset {preset.name} (team {preset.team.name})",
        team_id=preset.team_id,
        detail={"base": preset.base, "parameters": preset.parameters},
    )
