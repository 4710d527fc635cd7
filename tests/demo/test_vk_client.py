"""``demo.vk.LocalVkClient`` against a local VK hosting two communities: the control calls
take the community, and communities and tokens are created through it."""

from __future__ import annotations

import pytest

from demo.vk import LocalVkClient, VkCallError
from localvk import Communities, LocalVK, ServerThread


def test_the_client_addresses_a_community() -> None:
    state = LocalVK(group_id=1, group_rps=1000, user_rps=1000)
    with ServerThread(state) as srv:
        vk = LocalVkClient(srv.url)
        created = vk.create_community(
            2, "second-token", user_tokens=["second-admin"], name="Вторая", scopes=["messages"]
        )
        assert created["group_id"] == 2 and created["group_tokens"][0]["scopes"] == ["messages"]
        assert [c["group_id"] for c in vk.communities()] == [1, 2]
        second = Communities.of(state).get(2)
        vk.control("message_new", {"from_id": 42, "text": "во вторую"}, group_id=2)
        vk.control("message_new", {"from_id": 42, "text": "в первую"})
        assert [m.text for m in second.messages] == ["во вторую"]
        assert [m["text"] for m in vk.control("messages?peer_id=42", group_id=2)["messages"]] == [
            "во вторую"
        ]
        assert vk.control("stats", group_id=2)["longpoll_ts"] == 2
        with pytest.raises(VkCallError) as refused:
            vk.call("groups.setLongPollSettings", "second-token", group_id=2, enabled=1)
        assert refused.value.code == 15
        assert vk.add_token(2, "managing", scopes="messages,manage")["scopes"] == [
            "manage",
            "messages",
        ]
        assert vk.call("groups.setLongPollSettings", "managing", group_id=2, enabled=1) == 1
        with pytest.raises(VkCallError):
            vk.control("stats", group_id=3)
        with pytest.raises(TypeError):
            vk.control("users", ["not", "an", "object"], group_id=2)
