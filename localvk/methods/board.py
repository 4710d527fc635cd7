"""Board (discussion) methods. Adding topics and comments and reading topics and comments
need a user token (a community admin's); a community token gets error 27, as from VK.
Deleting a comment works with both. A user token issued by VK ID needs the right ``groups``.
Topic and comment ids are the community's own."""

from __future__ import annotations

from typing import Any

from ..errors import VKError, param_error
from ..models import Topic
from .groups import group_object
from .registry import CallContext, check_group_id, method

MAX_TITLE_LENGTH = 128
MAX_COMMENT_LENGTH = 16_000
MAX_COUNT = 100
DEFAULT_PREVIEW_LENGTH = 90


def _topic(ctx: CallContext) -> Topic:
    topic_id = ctx.params.req_int("topic_id", minimum=1)
    topic = ctx.state.topics.get(topic_id)
    if topic is None:
        raise param_error("topic_id is invalid")
    return topic


def _author(ctx: CallContext) -> int:
    """``from_group=1`` posts as the community (the token's user is its admin)."""
    if ctx.params.get_bool("from_group"):
        return ctx.state.community_id
    return ctx.sender_id


@method("board.addTopic", user_only=True, user_scope="groups")
def add_topic(ctx: CallContext) -> int:
    check_group_id(ctx, required=True)
    title = ctx.params.req_str("title", max_length=MAX_TITLE_LENGTH)
    text = ctx.params.get_str("text", max_length=MAX_COMMENT_LENGTH) or ""
    with ctx.state.lock:
        topic = ctx.state.create_topic(title, text, from_id=_author(ctx))
    return topic.id


@method("board.createComment", user_only=True, user_scope="groups")
def create_comment(ctx: CallContext) -> int:
    """A comment; a repeated ``guid`` from the same token returns the first comment's id."""
    check_group_id(ctx, required=True)
    params = ctx.params
    text = params.get_str("message", max_length=MAX_COMMENT_LENGTH) or ""
    attachments = params.get_str("attachments")
    sticker_id = params.get_int("sticker_id", minimum=0)
    if not text.strip() and not attachments and sticker_id is None:
        raise param_error("message is undefined")
    guid = params.get_str("guid", max_length=255)
    state = ctx.state
    with state.lock:
        topic = _topic(ctx)
        if topic.is_closed:
            raise VKError(15, "topic is closed")
        comment = state.board.add_comment(
            topic,
            _author(ctx),
            text,
            guid=(ctx.token, guid) if guid else None,
            attachments=attachments,
        )
    return comment.id


@method("board.getComments", user_only=True, user_scope="groups")
def get_comments(ctx: CallContext) -> dict[str, Any]:
    check_group_id(ctx, required=True)
    params = ctx.params
    count = params.get_int("count", default=20, minimum=0, maximum=MAX_COUNT)
    offset = params.get_int("offset", default=0, minimum=0)
    start_comment_id = params.get_int("start_comment_id", minimum=0)
    sort = params.get_choice("sort", ("asc", "desc"), default="asc")
    extended = params.get_bool("extended")
    need_likes = params.get_bool("need_likes")
    assert count is not None and offset is not None
    state = ctx.state
    with state.lock:
        comments = _topic(ctx).visible_comments()
        if sort == "desc":
            comments.reverse()
        answer: dict[str, Any] = {"count": len(comments)}
        if start_comment_id is not None:
            offset = next(
                (
                    index
                    for index, comment in enumerate(comments)
                    if (
                        comment.id >= start_comment_id
                        if sort == "asc"
                        else comment.id <= start_comment_id
                    )
                ),
                len(comments),
            )
            answer["real_offset"] = offset
        page = comments[offset : offset + count]
        items = []
        for comment in page:
            item = comment.to_vk()
            if need_likes:
                item["likes"] = {"count": 0, "user_likes": 0, "can_like": 1}
            items.append(item)
        answer["items"] = items
        if extended:
            authors = dict.fromkeys(c.from_id for c in page)
            answer["profiles"] = [state.user(a).to_vk() for a in authors if a > 0]
            answer["groups"] = [group_object(ctx) for a in authors if a == state.community_id]
    return answer


@method("board.deleteComment", user_scope="groups")
def delete_comment(ctx: CallContext) -> int:
    check_group_id(ctx, required=True)
    comment_id = ctx.params.req_int("comment_id", minimum=1)
    state = ctx.state
    with state.lock:
        topic = _topic(ctx)
        if not any(c.id == comment_id and not c.deleted for c in topic.comments):
            raise param_error("comment_id is invalid")
        state.board.delete_comment(topic, comment_id)
    return 1


def _topic_item(topic: Topic, preview: int, preview_length: int) -> dict[str, Any]:
    visible = topic.visible_comments()
    last = visible[-1] if visible else None
    item: dict[str, Any] = {
        "id": topic.id,
        "title": topic.title,
        "created": topic.date,
        "created_by": topic.created_by,
        "updated": last.date if last else topic.date,
        "updated_by": last.from_id if last else topic.created_by,
        "is_closed": int(topic.is_closed),
        "is_fixed": 0,
        "comments": len(visible),
    }
    limit = preview_length or None
    if preview == 1:
        item["first_comment"] = (visible[0].text if visible else "")[:limit]
    elif preview == 2:
        item["last_comment"] = (last.text if last else "")[:limit]
    return item


@method("board.getTopics", user_only=True, user_scope="groups")
def get_topics(ctx: CallContext) -> dict[str, Any]:
    """The community's topics (``topic_ids`` to pick some), VK's ``order`` (1/0 latest
    activity first, 2 newest first, -1/-2 the other way), ``offset``/``count`` (≤ 100),
    ``preview`` 1/2 with ``preview_length``, ``extended`` profiles and groups."""
    check_group_id(ctx, required=True, admin=False)
    params = ctx.params
    wanted = params.get_int_list("topic_ids", minimum=1)
    order = params.get_int("order", default=0, minimum=-2, maximum=2)
    offset = params.get_int("offset", default=0, minimum=0)
    count = params.get_int("count", default=40, minimum=0, maximum=MAX_COUNT)
    preview = params.get_int("preview", default=0, minimum=0, maximum=2)
    preview_length = params.get_int("preview_length", default=DEFAULT_PREVIEW_LENGTH, minimum=0)
    extended = params.get_bool("extended")
    assert order is not None and offset is not None and count is not None
    assert preview is not None and preview_length is not None
    state = ctx.state
    with state.lock:
        topics = [t for t in state.topics.values() if wanted is None or t.id in wanted]
        items = [_topic_item(t, preview, preview_length) for t in topics]
        key = "created" if abs(order) == 2 else "updated"
        items.sort(key=lambda item: (item[key], item["id"]), reverse=order >= 0)
        page = items[offset : offset + count]
        answer: dict[str, Any] = {
            "count": len(items),
            "items": page,
            "default_order": 1,
            "can_add_topics": int(ctx.is_admin),
        }
        if extended:
            authors = dict.fromkeys(
                a for item in page for a in (item["created_by"], item["updated_by"])
            )
            answer["profiles"] = [state.user(a).to_vk() for a in authors if a > 0]
            answer["groups"] = [group_object(ctx)] if state.community_id in authors else []
    return answer
