"""Sign-in with a limit on failed attempts, per username and per client address.

Counters live in the shared cache (the database by default), so every web process
sees the same counts. A blocked attempt is refused before the password is checked:
guessing gets no answer at all until the window has passed.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.forms.utils import ErrorDict


def _keys(request) -> list[str]:
    address = request.META.get("REMOTE_ADDR", "unknown")
    username = (request.POST.get("username") or "").strip().lower()
    keys = [f"signin-failures:addr:{address}"]
    if username:
        keys.append(f"signin-failures:user:{username}")
    return keys


# Several colleagues may sign in from one office address, so it gets a larger allowance.
ADDRESS_ALLOWANCE = 4


def _blocked(keys: list[str]) -> bool:
    limit = settings.LOGIN_THROTTLE_ATTEMPTS
    return any(
        count >= (limit * ADDRESS_ALLOWANCE if key.startswith("signin-failures:addr:") else limit)
        for key, count in cache.get_many(keys).items()
    )


def _record_failure(keys: list[str]) -> None:
    for key in keys:
        # add() is a no-op when the key exists, so the window starts at the first failure.
        cache.add(key, 0, timeout=settings.LOGIN_THROTTLE_WINDOW)
        try:
            cache.incr(key)
        except ValueError:  # expired between add() and incr()
            cache.set(key, 1, timeout=settings.LOGIN_THROTTLE_WINDOW)


class ThrottledLoginView(auth_views.LoginView):
    redirect_authenticated_user = False

    def post(self, request, *args, **kwargs):
        keys = _keys(request)
        if _blocked(keys):
            # An unbound form: validating the posted one would check the password.
            form = self.get_form_class()(request, initial={"username": request.POST.get("username", "")})
            form._errors, form.cleaned_data = ErrorDict(), {}
            minutes = max(1, settings.LOGIN_THROTTLE_WINDOW // 60)
            form.add_error(None, f"Too many failed sign-in attempts. Try again in {minutes} minutes.")
            return self.render_to_response(self.get_context_data(form=form), status=429)
        response = super().post(request, *args, **kwargs)
        if request.user.is_authenticated:
            cache.delete_many([k for k in keys if k.startswith("signin-failures:user:")])
        else:
            _record_failure(keys)
        return response
