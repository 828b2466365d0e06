"""The user a management command acts as. Commands never create one: an answer,
a review or an evaluation run shows up under whoever it names, so a made-up
account would collect work nobody owns."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError


def command_user(username: str | None, *, acts: str, option: str = "--user"):
    """The named user; ``acts`` says what the command does as them, for the error."""
    if not username:
        raise CommandError(f"Give {option} NAME: {acts}, and no user is created for you.")
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise CommandError(
            f"No user named {username!r} ({option}); "
            "create one with `manage.py createsuperuser` or in the admin."
        )
    return user
