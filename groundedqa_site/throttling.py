"""API throttles whose limits are settings (API_THROTTLE_USER, API_THROTTLE_ANON).

DRF's own classes copy their rates once at import; these read ``settings`` on each
request, so a changed setting (or a test's override) takes effect without a restart.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import throttling


class UserRateThrottle(throttling.UserRateThrottle):
    def get_rate(self):
        return settings.API_THROTTLE_RATES["user"]


class AnonRateThrottle(throttling.AnonRateThrottle):
    def get_rate(self):
        return settings.API_THROTTLE_RATES["anon"]
