"""The admin lists accept only the lookups they declare.

Django's admin lets a list's URL filter by any lookup on any field of its own model
(``?seed__startswith=a4``, ``?seed__lt=…``): a GM could learn a secret column one guess at a
time from which rows are listed. Every model admin of the panel mixes :class:`AllowListedLookups`
in and names the lookups its filters use; any other ``field__lookup`` parameter is refused,
whatever its value, so a refusal says nothing about the data either. A refused list is answered
as Django answers a malformed filter (``IncorrectLookupParameters``): a redirect to the list
without its parameters (``?e=1``); the refusal is logged on ``django.security``, as Django logs
a lookup it disallows itself.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.admin.exceptions import DisallowedModelAdminLookup
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.views.main import ChangeList
from django.http import HttpRequest

security_log = logging.getLogger("django.security.DisallowedModelAdminLookup")


class AllowListedLookups:
    #: The query parameters (``field__lookup``) the list accepts: its filters' own.
    allowed_lookups: tuple[str, ...] = ()

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        if lookup not in self.allowed_lookups:
            return False
        return bool(super().lookup_allowed(lookup, value, request))  # type: ignore[misc]

    def get_changelist_instance(self, request: HttpRequest) -> ChangeList:
        try:
            return super().get_changelist_instance(request)  # type: ignore[misc]
        except DisallowedModelAdminLookup as refused:
            security_log.warning("%s (user %s, %s)", refused, request.user.pk, request.path)
            raise IncorrectLookupParameters(str(refused)) from None
