"""«Сообщества»: the communities a user belongs to, a community's page (its state, its admin's
key, what is left to do in VK, its GMs), «Подключить сообщество» (the admin signs in with VK
ID: ``panel.signin``; or pastes a key), «Подключить снова» and «Отключить».

A community is found among ``communities_for(user)`` before anything else (another
community's page is a 404, as another GM's game is); what changes it (tokens, GMs, the
history setting, disconnecting) is its owner's (or an operator's): a GM of the community sees
the page and gets 403 for the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.debug import sensitive_post_parameters

from gameplay.models import Community
from gameplay.refusals import CommunityFromEnvironment
from gameplay.selectors.admin_tokens import board_posts_waiting
from gameplay.selectors.communities import communities_for, owned_by
from gameplay.services.communities import (
    community_disconnect,
    community_gm_add,
    community_gm_remove,
    community_history_set,
)
from panel import connect, signin
from panel.access import Refused, render_panel, shows_refusals
from panel.flash import confirmation, say
from panel.forms import ConnectForm, GmAddForm, HistoryForm

View = Callable[..., HttpResponse]


def community_url(community: Community, name: str = "community", **kwargs: Any) -> str:
    return reverse(f"panel:{name}", kwargs={"vk_id": community.vk_id, **kwargs})


def to_community(request: HttpRequest, community: Community, **_kwargs: Any) -> HttpResponse:
    """A refused community view's answer (``shows_refusals``): the community's page."""
    return HttpResponseRedirect(community_url(community))


def community_view(
    *methods: str, owner: bool = False, refused: Refused | None = None
) -> Callable[[View], View]:
    """The wrapped view gets the community instead of its VK id; ``owner``: its owner's.
    ``refused``: what a refusal answers (``shows_refusals``), None for a view that refuses
    nothing."""
    allowed = list(methods or ("GET",))
    if "GET" in allowed and "HEAD" not in allowed:
        allowed.append("HEAD")

    def decorate(func: View) -> View:
        view = func if refused is None else shows_refusals(refused)(func)

        @wraps(func)
        def inner(request: HttpRequest, vk_id: int, **kwargs: Any) -> HttpResponse:
            community = get_object_or_404(communities_for(request.user), vk_id=vk_id)
            if request.method not in allowed:
                return HttpResponseNotAllowed(allowed)
            if owner and not owned_by(request.user).filter(pk=community.pk).exists():
                raise PermissionDenied
            return view(request, community, **kwargs)

        return inner

    return decorate


def _is_owner(request: HttpRequest, community: Community) -> bool:
    return owned_by(request.user).filter(pk=community.pk).exists()


def token_link() -> str:
    app = getattr(settings, "VK_APP_ID", None)
    return connect.USER_TOKEN_URL.format(app_id=app or "ID_ПРИЛОЖЕНИЯ")


def communities_list(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    rows = communities_for(request.user).annotate(n_games=Count("games", distinct=True))
    owned = set(owned_by(request.user).values_list("pk", flat=True))
    return render_panel(
        request,
        None,
        "panel/communities.html",
        {
            "communities": [(c, c.pk in owned) for c in rows],
        },
        title="Сообщества",
    )


def _connect_form(request: HttpRequest, community: Community | None) -> ConnectForm:
    """«Подключить» (``community`` None) or «Подключить снова», as sent (or empty)."""
    data = request.POST if request.method == "POST" else None
    if community is None:
        return ConnectForm(data)
    return ConnectForm(
        data,
        stored=bool(community.group_token and community.user_token),
        stored_group=bool(community.group_token),
    )


def _connect_page(
    request: HttpRequest, community: Community | None = None, form: ConnectForm | None = None
) -> HttpResponse:
    """The connect form; refused, with what the GM sent."""
    form = form if form is not None else _connect_form(request, community)
    return render_panel(
        request,
        None,
        "panel/community_connect.html",
        {
            "form": form,
            "community": community,
            "token_link": token_link(),
            "app_id": getattr(settings, "VK_APP_ID", None),
            "callback_mode": settings.VK_CALLBACK_MODE,
            "vkid": signin.configured(),
        },
        title=f"Подключить снова: {community}" if community else "Подключить сообщество",
    )


@sensitive_post_parameters("group_token", "user_token")
@shows_refusals(_connect_page)
def community_connect(request: HttpRequest) -> HttpResponse:
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponseNotAllowed(["GET", "HEAD", "POST"])
    if not (request.user.is_active and request.user.is_staff):
        raise PermissionDenied
    form = _connect_form(request, None)
    if request.method == "POST" and form.is_valid():
        return _connect_submitted(request, form, None)
    return _connect_page(request, None, form)


def _connect_submitted(
    request: HttpRequest, form: ConnectForm, community: Community | None
) -> HttpResponse:
    """A valid «Подключить» (``community`` None) or «Подключить снова»: off to VK ID to sign
    in, or the pasted keys checked and saved (a refusal is the caller's view's to show)."""
    if form.signs_in:
        address = signin.sign_in_start(
            request=request,
            group_token=form.cleaned_data["group_token"],
            community=community,
        )
        return HttpResponseRedirect(address)
    stored = community.group_token if community is not None else ""
    row = connect.connect(
        by=request.user,
        group_token=form.cleaned_data["group_token"] or stored,
        user_token=form.cleaned_data["user_token"],
        community=community,
    )
    if community is None:
        say(request, "community_connected", community=row)
    else:
        say(request, "community_reconnected", community=row)
    return HttpResponseRedirect(community_url(row))


def _to_connect(request: HttpRequest) -> HttpResponse:
    return HttpResponseRedirect(reverse("panel:community_connect"))


@shows_refusals(_to_connect)
def community_vkid(request: HttpRequest) -> HttpResponse:
    """Where VK ID sends the browser back after «Войти через VK ID» (``panel.signin``)."""
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    if not (request.user.is_active and request.user.is_staff):
        raise PermissionDenied
    done = signin.sign_in_finish(request=request)
    name = "community_reconnected" if done.again else "community_connected"
    say(request, name, community=done.community)
    return HttpResponseRedirect(community_url(done.community))


def _reconnect_refused(request: HttpRequest, community: Community) -> HttpResponse:
    """«Подключить снова» refused: the form again, or, for the environment's community (which
    is not reconnected here), its page."""
    if community.from_env:
        return to_community(request, community)
    return _connect_page(request, community)


@sensitive_post_parameters("group_token", "user_token")
@community_view("GET", "POST", owner=True, refused=_reconnect_refused)
def community_reconnect(request: HttpRequest, community: Community) -> HttpResponse:
    if community.from_env:
        raise CommunityFromEnvironment(community=str(community))
    form = _connect_form(request, community)
    if request.method == "POST" and form.is_valid():
        return _connect_submitted(request, form, community)
    return _connect_page(request, community, form)


@community_view()
def community_page(request: HttpRequest, community: Community) -> HttpResponse:
    members = community.members.select_related("user").order_by("-role", "user__username")
    return render_panel(
        request,
        None,
        "panel/community.html",
        {
            "community": community,
            "members": members,
            "is_owner": _is_owner(request, community),
            "gm_form": GmAddForm(),
            "history_form": HistoryForm(initial={"history_public": community.history_public}),
            "games": community.games.count(),
            "setup": community.setup or {},
            "callback_mode": settings.VK_CALLBACK_MODE,
            "board_waiting": board_posts_waiting(community),
            "vkid": signin.configured(),
        },
        title=str(community),
    )


@community_view("GET", "POST", owner=True, refused=to_community)
def community_disconnect_view(request: HttpRequest, community: Community) -> HttpResponse:
    if community.from_env:
        raise CommunityFromEnvironment(community=str(community))
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        community_disconnect(community=community)
        say(request, "community_disconnected", community=community)
        return HttpResponseRedirect(community_url(community))
    return render_panel(
        request,
        None,
        "panel/confirm.html",
        {
            **confirmation("community_disconnect", community=community),
            "action": community_url(community, "community_disconnect"),
            "button": "Отключить",
            "danger": True,
            "cancel": community_url(community),
        },
        title="Отключить сообщество",
    )


@community_view("POST", owner=True, refused=to_community)
def community_gm_add_view(request: HttpRequest, community: Community) -> HttpResponse:
    form = GmAddForm(request.POST)
    if not form.is_valid():
        for error in form.errors.get("username", []):
            messages.error(request, cast(str, error))  # an error list yields its messages
        return HttpResponseRedirect(community_url(community))
    member = community_gm_add(community=community, username=form.cleaned_data["username"])
    say(request, "community_gm_added", username=member.user.get_username())
    return HttpResponseRedirect(community_url(community))


@community_view("GET", "POST", owner=True, refused=to_community)
def community_gm_remove_view(
    request: HttpRequest, community: Community, user_id: int
) -> HttpResponse:
    user = get_object_or_404(
        get_user_model(), pk=user_id, community_memberships__community=community
    )
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        community_gm_remove(community=community, user=user)
        say(request, "community_gm_removed", username=user.get_username())
        return HttpResponseRedirect(community_url(community))
    return render_panel(
        request,
        None,
        "panel/confirm.html",
        {
            **confirmation(
                "community_gm_remove", username=user.get_username(), community=community
            ),
            "action": community_url(community, "community_gm_remove", user_id=user.pk),
            "button": "Убрать",
            "danger": True,
            "cancel": community_url(community),
        },
        title="Убрать ведущего",
    )


@community_view("POST", owner=True)
def community_history_view(request: HttpRequest, community: Community) -> HttpResponse:
    form = HistoryForm(request.POST)
    public = form.is_valid() and form.cleaned_data["history_public"]
    community_history_set(community=community, public=public)
    say(request, "community_history", public=public)
    return HttpResponseRedirect(community_url(community))
