"""The community's board (discussions): topics, comments and their long-poll events."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict
from typing import Any

from .longpoll import LongPollQueue
from .models import Comment, Topic


class Board:
    """Topics and comments of one community. ``echo_own_posts``: comments written through
    the API (by the community or its admin) also produce ``board_post_new`` /
    ``board_post_delete`` events, as VK sends events for every comment."""

    def __init__(
        self,
        community_id: int,
        longpoll: LongPollQueue,
        lock: threading.RLock,
        *,
        echo_own_posts: bool = True,
    ) -> None:
        self.community_id = community_id
        self.longpoll = longpoll
        self.lock = lock
        self.echo_own_posts = echo_own_posts
        self.clear()

    def clear(self) -> None:
        with self.lock:
            self.topics: dict[int, Topic] = {}
            self._topic_seq = 0
            self._comment_seq = 0
            self._by_guid: dict[tuple[str, int, str], Comment] = {}

    def create_topic(self, title: str, text: str = "", *, from_id: int | None = None) -> Topic:
        """A topic; its first comment (``text``, if any) is by ``from_id`` (the community)."""
        with self.lock:
            self._topic_seq += 1
            author = self.community_id if from_id is None else from_id
            topic = Topic(id=self._topic_seq, title=title, created_by=author, date=_now())
            self.topics[topic.id] = topic
            if text:
                self._append(topic, author, text, publish=self.echo_own_posts)
            return topic

    def topic(self, topic_id: int) -> Topic:
        with self.lock:
            topic = self.topics.get(topic_id)
            if topic is None:
                raise ValueError(f"no topic {topic_id}")
            return topic

    def add_comment(
        self,
        topic: Topic,
        from_id: int,
        text: str,
        *,
        guid: tuple[str, str] | None = None,
        attachments: str | None = None,
    ) -> Comment:
        """A comment written through the API; ``guid`` = (token, guid) makes it idempotent."""
        with self.lock:
            key = None if guid is None else (guid[0], topic.id, guid[1])
            if key is not None and key in self._by_guid:
                return self._by_guid[key]
            comment = self._append(
                topic, from_id, text, publish=self.echo_own_posts, attachments=attachments
            )
            if key is not None:
                comment.guid = key[2]
                self._by_guid[key] = comment
            return comment

    def delete_comment(self, topic: Topic, comment_id: int) -> None:
        """Delete through the API."""
        with self.lock:
            comment = self.comment(topic, comment_id)
            comment.deleted = True
            if self.echo_own_posts:
                self._publish("board_post_delete", topic, comment)

    def comment(self, topic: Topic, comment_id: int) -> Comment:
        with self.lock:
            for comment in topic.comments:
                if comment.id == comment_id and not comment.deleted:
                    return comment
            raise ValueError(f"no comment {comment_id} in topic {topic.id}")

    # --- persistence (localvk.persist) ---------------------------------------------

    def export(self) -> dict[str, Any]:
        with self.lock:
            return {
                "topic_seq": self._topic_seq,
                "comment_seq": self._comment_seq,
                "topics": [
                    {
                        "id": t.id,
                        "title": t.title,
                        "created_by": t.created_by,
                        "date": t.date,
                        "is_closed": t.is_closed,
                        "comments": [asdict(c) for c in t.comments],
                    }
                    for t in self.topics.values()
                ],
                "guids": [
                    [token, topic_id, guid, comment.id]
                    for (token, topic_id, guid), comment in self._by_guid.items()
                ],
            }

    def restore(self, data: dict[str, Any]) -> None:
        with self.lock:
            self.clear()
            comments: dict[int, Comment] = {}
            for raw in data["topics"]:
                topic = Topic(
                    id=int(raw["id"]),
                    title=str(raw["title"]),
                    created_by=int(raw["created_by"]),
                    date=int(raw["date"]),
                    is_closed=bool(raw["is_closed"]),
                    comments=[Comment(**c) for c in raw["comments"]],
                )
                self.topics[topic.id] = topic
                comments.update((c.id, c) for c in topic.comments)
            for token, topic_id, guid, comment_id in data["guids"]:
                comment = comments.get(int(comment_id))
                if comment is not None:
                    self._by_guid[(str(token), int(topic_id), str(guid))] = comment
            self._topic_seq = max(int(data["topic_seq"]), max(self.topics, default=0))
            self._comment_seq = max(int(data["comment_seq"]), max(comments, default=0))

    # --- what users do -------------------------------------------------------------------

    def user_posts(self, from_id: int, topic_id: int, text: str) -> dict[str, Any]:
        with self.lock:
            topic = self.topic(topic_id)
            comment = self._append(topic, from_id, text, publish=False)
            return self._publish("board_post_new", topic, comment)

    def user_edits(self, topic_id: int, comment_id: int, text: str) -> dict[str, Any]:
        with self.lock:
            topic = self.topic(topic_id)
            comment = self.comment(topic, comment_id)
            comment.text = text
            return self._publish("board_post_edit", topic, comment)

    def user_deletes(self, topic_id: int, comment_id: int) -> dict[str, Any]:
        with self.lock:
            topic = self.topic(topic_id)
            comment = self.comment(topic, comment_id)
            comment.deleted = True
            return self._publish("board_post_delete", topic, comment)

    # --- internals -----------------------------------------------------------------------

    def _append(
        self,
        topic: Topic,
        from_id: int,
        text: str,
        *,
        publish: bool,
        attachments: str | None = None,
    ) -> Comment:
        self._comment_seq += 1
        comment = Comment(
            id=self._comment_seq,
            topic_id=topic.id,
            from_id=from_id,
            date=_now(),
            text=text,
            attachments=attachments,
        )
        topic.comments.append(comment)
        if publish:
            self._publish("board_post_new", topic, comment)
        return comment

    def _publish(self, event_type: str, topic: Topic, comment: Comment) -> dict[str, Any]:
        if event_type == "board_post_delete":
            obj: dict[str, Any] = {"id": comment.id}
        else:
            obj = comment.to_vk()
        obj.update(topic_id=topic.id, topic_owner_id=self.community_id)
        return self.longpoll.publish(event_type, obj)


def _now() -> int:
    return int(time.time())
