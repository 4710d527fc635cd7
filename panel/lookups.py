"""The admin lists accept only the lookups they declare.

Django's admin lets a list's URL filter by any lookup on any field of its own model
(``?seed__startswith=a4``, ``?seed__lt=…``): a GM could learn a secret column one guess at a
time from which rows are listed. Every model admin of the panel mixes :class:`AllowListedLookups`
in and names the lookups its filters use; any other ``field__lookup`` parameter is refused,
whatever its value, so a refusal says nothing about the data either. A refused list is answered
as Django answers a malformed filter (``IncorrectLookupParameters``): a redirect to the list
without its parameters (``?e=1``); the refusal is logged on ``django.security``, as Django logs
a lookup it disallows itself.

The parameters are read before the list is built: a refused list costs no query set, no
filters and no count. What Django's list would have answered first still comes first: a search
it cannot take (a NUL character) is reported as it reports it, and a ``_to_field`` the list may
not reference is Django's 400.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib import messages
from django.contrib.admin.exceptions import DisallowedModelAdminLookup, DisallowedModelAdminToField
from django.contrib.admin.options import TO_FIELD_VAR, IncorrectLookupParameters
from django.contrib.admin.views.main import (
    ERROR_FLAG,
    IGNORED_PARAMS,
    PAGE_VAR,
    ChangeList,
)
from django.http import HttpRequest

security_log = logging.getLogger("django.security.DisallowedModelAdminLookup")

#: The query parameters no list reads as a filter (Django's own list of them).
NOT_FILTERS = frozenset((*IGNORED_PARAMS, PAGE_VAR, ERROR_FLAG))


class AllowListedLookups:
    #: The query parameters (``field__lookup``) the list accepts: its filters' own.
    allowed_lookups: tuple[str, ...] = ()

    def lookup_allowed(self, lookup: str, value: Any, request: HttpRequest | None = None) -> bool:
        if lookup not in self.allowed_lookups:
            return False
        return bool(super().lookup_allowed(lookup, value, request))  # type: ignore[misc]

    def get_changelist_instance(self, request: HttpRequest) -> ChangeList:
        try:
            self._refuse_unlisted_lookups(request)
            return super().get_changelist_instance(request)  # type: ignore[misc]
        except DisallowedModelAdminLookup as refused:
            security_log.warning("%s (user %s, %s)", refused, request.user.pk, request.path)
            raise IncorrectLookupParameters(str(refused)) from None

    def _refuse_unlisted_lookups(self, request: HttpRequest) -> None:
        """Raise ``DisallowedModelAdminLookup`` for the first filter parameter the allow-list
        does not name, after what Django's list checks before its filters: the search form
        (its errors become messages) and the ``_to_field`` parameter (a 400)."""
        unlisted = [
            key for key in request.GET if key not in NOT_FILTERS and key not in self.allowed_lookups
        ]
        if not unlisted:
            return
        change_list: type[ChangeList] = self.get_changelist(request)  # type: ignore[attr-defined]
        search = change_list.search_form_class(request.GET)
        if not search.is_valid():
            for error in search.errors.values():
                messages.error(request, ", ".join(str(e) for e in error))
        to_field = request.GET.get(TO_FIELD_VAR)
        if to_field and not self.to_field_allowed(request, to_field):  # type: ignore[attr-defined]
            raise DisallowedModelAdminToField(f"The field {to_field} cannot be referenced.")
        raise DisallowedModelAdminLookup(f"Filtering by {unlisted[0]} not allowed")
