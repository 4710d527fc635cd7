// The player page: polls the local VK's JSON and acts as the chosen user through it.
// Plain JavaScript, no build step and nothing from the network.
"use strict";

const POLL_MS = 1500;
const USERS_MS = 10000;
const $ = (id) => document.getElementById(id);

const view = {
  users: [],
  userId: null,
  takenOver: false,
  cursor: { message: 0, comment: 0, edit: 0 },
  messageIds: new Set(),
  topics: new Map(), // id -> {id, title, count, comments: []}
  topicId: null,
  chats: new Map(), // chat_id -> {chat_id, title, messages: []}
  chatId: null,
  seenSnackbars: new Set(),
  generation: 0, // bumps on every user switch: late answers for another user are dropped
  pollTimer: null,
  groupName: "Сообщество",
  groupId: null, // the community shown (null: the server's default one)
};

// --- HTTP ------------------------------------------------------------------------------------

async function api(path, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  };
  let url = "api/" + path;
  if (view.groupId !== null) {
    url += (url.includes("?") ? "&" : "?") + "group_id=" + view.groupId;
  }
  const response = await fetch(url, options);
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    throw new Error((data && data.error) || ("Ошибка сервера: " + response.status));
  }
  return data;
}

// --- small helpers ---------------------------------------------------------------------------

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

// Moscow time, as the server words it («01.12 14:33 МСК»): the game's texts say «МСК», so the
// page never shows the browser's own clock.
function time(item) {
  return item.time || "";
}

let toastTimer = null;
function toast(text, isError) {
  const box = $("toast");
  box.textContent = text;
  box.classList.toggle("error", Boolean(isError));
  box.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { box.hidden = true; }, isError ? 5000 : 3000);
}

// Text with [id123|Имя] mentions shown as names and invite links as «join» buttons.
function richText(text, inviteLinks) {
  const frag = document.createDocumentFragment();
  const pattern = /\[id(\d+)\|([^\]]*)\]|(https:\/\/vk\.me\/join\/[\w-]+)/g;
  let last = 0;
  let match;
  const links = [];
  while ((match = pattern.exec(text)) !== null) {
    frag.append(text.slice(last, match.index));
    if (match[3]) {
      frag.append(el("span", "mention", match[3]));
      links.push(match[3]);
    } else {
      const mention = el("span", "mention", match[2]);
      mention.title = "id" + match[1];
      frag.append(mention);
    }
    last = pattern.lastIndex;
  }
  frag.append(text.slice(last));
  return { frag, links: inviteLinks || links };
}

function nearBottom(box) {
  return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
}

function visiblePane(name) {
  const body = document.body;
  if (window.matchMedia("(min-width: 900px)").matches) {
    return name === "messages" || body.dataset.right === name;
  }
  return body.dataset.mobile === name;
}

function bumpBadge(name, count) {
  if (!count || visiblePane(name)) return;
  const badge = $("badge-" + name);
  badge.textContent = String((parseInt(badge.textContent, 10) || 0) + count);
}

// --- users -----------------------------------------------------------------------------------

function renderCommunities(communities, current) {
  const picker = $("community-picker");
  picker.hidden = communities.length < 2;
  const select = $("community-select");
  const key = communities.map((c) => c.id + c.name).join("|");
  if (select.dataset.key !== key) {
    select.dataset.key = key;
    select.replaceChildren(...communities.map((community) => {
      const option = el("option", null, community.name);
      option.value = String(community.id);
      return option;
    }));
  }
  select.value = String(current);
}

async function loadUsers() {
  let data;
  try {
    data = await api("users");
  } catch (error) {
    if (view.groupId === null) throw error;
    view.groupId = null; // the remembered community is gone: back to the default one
    localStorage.removeItem("sandbox-group");
    showCommunityInUrl(null);
    data = await api("users");
  }
  renderCommunities(data.communities || [data.group], data.group.id);
  view.users = data.users;
  view.groupName = data.group.name;
  $("group-name").textContent = data.group.name + " · локальный VK";
  $("dialog-title").textContent = data.group.name;
  $("group-avatar").textContent = (data.group.name || "С").trim().charAt(0).toUpperCase();
  const select = $("user-select");
  const labels = data.users.map((user) =>
    user.name + " (id" + user.id + ")" + (user.taken_over ? " — играете вы" : ""));
  const key = data.users.map((user, i) => user.id + labels[i]).join("|");
  if (select.dataset.key !== key) {  // rebuilt only on a change: an open list stays open
    select.dataset.key = key;
    select.replaceChildren(...data.users.map((user, i) => {
      const option = el("option", null, labels[i]);
      option.value = String(user.id);
      return option;
    }));
  }
  if (view.userId !== null) select.value = String(view.userId);
  return data.users;
}

// The page's address names the community shown (?group_id=), so a link opens that one.
function showCommunityInUrl(id) {
  const query = id === null ? "" : "?group_id=" + id;
  history.replaceState(null, "", location.pathname + query + location.hash);
}

// The community the page opens with: the address's ?group_id= first (a link someone gave),
// then the one picked last time on this browser; null: the server's default one.
function startingCommunity() {
  const fromUrl = parseInt(new URLSearchParams(location.search).get("group_id") || "", 10);
  if (fromUrl) return fromUrl;
  const stored = parseInt(localStorage.getItem("sandbox-group") || "", 10);
  return stored || null;
}

function selectCommunity(id) {
  view.groupId = id;
  localStorage.setItem("sandbox-group", String(id));
  showCommunityInUrl(id);
  view.userId = null;
  $("user-select").dataset.key = "";
  loadUsers().then((users) => {
    const next = startingUser(users);
    if (next === null) {
      view.generation += 1;
      $("messages").replaceChildren(el("p", "empty", "В сообществе пока нет пользователей."));
      $("comments").replaceChildren();
      $("chat-messages").replaceChildren();
      return;
    }
    selectUser(next);
  }).catch((error) => toast(error.message, true));
}

function startingUser(users) {
  const fromHash = parseInt((location.hash.match(/^#id(\d+)$/) || [])[1], 10);
  const stored = parseInt(localStorage.getItem("sandbox-user") || "", 10);
  for (const id of [fromHash, stored]) {
    if (users.some((u) => u.id === id)) return id;
  }
  return users.length ? users[0].id : null;
}

function selectUser(id) {
  view.generation += 1;
  view.userId = id;
  view.takenOver = false;
  view.cursor = { message: 0, comment: 0, edit: 0 };
  view.messageIds = new Set();
  view.topics = new Map();
  view.chats = new Map();
  view.chatId = null;
  $("user-select").value = String(id);
  history.replaceState(null, "", "#id" + id);
  localStorage.setItem("sandbox-user", String(id));
  $("messages").replaceChildren(el("p", "empty", "Загрузка…"));
  $("comments").replaceChildren();
  $("chat-messages").replaceChildren();
  for (const name of ["messages", "board", "chat"]) $("badge-" + name).textContent = "";
  poll();
}

// --- polling ---------------------------------------------------------------------------------

async function poll() {
  clearTimeout(view.pollTimer);
  const generation = view.generation;
  const id = view.userId;
  if (id === null) return;
  try {
    const data = await api("users/" + id + "?after_message=" + view.cursor.message +
                           "&after_comment=" + view.cursor.comment +
                           "&after_edit=" + (view.cursor.edit || 0));
    if (generation !== view.generation) return;
    apply(data);
  } catch (error) {
    if (generation === view.generation) toast(error.message, true);
  } finally {
    if (generation === view.generation) view.pollTimer = setTimeout(poll, POLL_MS);
  }
}

function pollSoon() {
  clearTimeout(view.pollTimer);
  view.pollTimer = setTimeout(poll, 300);
}

function apply(data) {
  const firstLoad = view.cursor.message === 0 && view.cursor.comment === 0;
  view.takenOver = data.user.taken_over;
  $("takeover").checked = data.user.taken_over;
  renderKeyboard(data.keyboard);
  renderMessages(data.messages, firstLoad);
  renderEdited(data.edited || []);
  mergeTopics(data.topics, firstLoad);
  mergeChats(data.chats, firstLoad);
  for (const snackbar of data.snackbars) {
    if (!view.seenSnackbars.has(snackbar.event_id)) {
      view.seenSnackbars.add(snackbar.event_id);
      if (snackbar.text) toast(snackbar.text);
    }
  }
  view.cursor = data.cursor;
}

// --- private messages ------------------------------------------------------------------------

function messageNode(message, withAuthor) {
  if (message.action) return el("div", "service", message.action);
  const mine = message.from_id === view.userId;
  const node = el("div", "msg " + (mine ? "mine" : "theirs"));
  node.dataset.id = String(message.id);
  const bubble = el("div", "bubble");
  if (withAuthor && !mine) bubble.append(el("div", "author", message.from_name));
  const rich = richText(message.text || "", message.invite_links);
  const text = el("div", "text");
  text.append(rich.frag);
  bubble.append(text);
  for (const link of rich.links) {
    const join = el("button", "btn primary join", "Вступить в беседу");
    join.type = "button";
    join.addEventListener("click", () => act("join", { link }, "Вы вступили в беседу"));
    bubble.append(join);
  }
  bubble.append(el("div", "meta", time(message)));
  node.append(bubble);
  if (message.keyboard && message.keyboard.inline) {
    node.append(keyboardNode(message.keyboard, message.id, "ikb"));
  }
  return node;
}

function keyboardNode(keyboard, messageId, className) {
  const box = el("div", className);
  keyboard.rows.forEach((row, r) => {
    const line = el("div", "row");
    row.forEach((button, c) => {
      const node = el("button", "btn " + (button.color || "secondary"), button.label);
      node.type = "button";
      node.title = button.label;
      if (!button.pressable) {
        node.disabled = true;
        node.title = "В песочнице эта кнопка не работает";
      } else {
        node.addEventListener("click", () => press(messageId, r, c, button));
      }
      line.append(node);
    });
    box.append(line);
  });
  return box;
}

function renderMessages(messages, firstLoad) {
  const box = $("messages");
  const fresh = messages.filter((m) => !view.messageIds.has(m.id));
  if (firstLoad) box.replaceChildren();
  if (!fresh.length) {
    if (firstLoad) box.append(el("p", "empty", "Сообщений пока нет. Напишите сообществу, например «помощь»."));
    return;
  }
  const stick = firstLoad || nearBottom(box);
  const empty = box.querySelector(".empty");
  if (empty) empty.remove();
  for (const message of fresh) {
    view.messageIds.add(message.id);
    box.append(messageNode(message, false));
  }
  if (stick) box.scrollTop = box.scrollHeight;
  if (!firstLoad) bumpBadge("messages", fresh.filter((m) => m.from_id !== view.userId).length);
}

// A message the community edited (messages.edit: a page of buttons turned) is redrawn in place.
function renderEdited(messages) {
  const box = $("messages");
  for (const message of messages) {
    const old = box.querySelector('.msg[data-id="' + message.id + '"]');
    if (old) old.replaceWith(messageNode(message, false));
  }
}

function renderKeyboard(keyboard) {
  const box = $("keyboard");
  const key = keyboard ? JSON.stringify(keyboard) : "";
  if (box.dataset.key === key) return;
  const messages = $("messages");
  const stick = nearBottom(messages);
  box.dataset.key = key;
  box.replaceChildren();
  box.hidden = !keyboard;
  if (keyboard) {
    for (const row of keyboardNode(keyboard, keyboard.message_id, "").children) box.append(row);
  }
  if (stick) messages.scrollTop = messages.scrollHeight;
}

// --- acting as the user ----------------------------------------------------------------------

async function ensureTakenOver() {
  if (view.takenOver) return;
  await api("users/" + view.userId + "/takeover", { on: true });
  view.takenOver = true;
  $("takeover").checked = true;
  toast("Этим игроком теперь играете вы: боты за него не ходят");
  loadUsers().catch(() => {});
}

async function act(action, body, done) {
  try {
    await ensureTakenOver();
    const answer = await api("users/" + view.userId + "/" + action, body);
    if (done) toast(done);
    pollSoon();
    return answer;
  } catch (error) {
    toast(error.message, true);
    return null;
  }
}

function press(messageId, row, column, button) {
  const note = button.type === "callback" ? "Нажато: «" + button.label + "»" : null;
  return act("press", { message_id: messageId, row, column }, note);
}

function bindComposer(formId, send) {
  const form = $(formId);
  const area = form.querySelector("textarea");
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = area.value.trim();
    if (!text || view.userId === null) return;
    const answer = await send(text);
    if (answer !== null) area.value = "";
  });
}

// --- the board -------------------------------------------------------------------------------

function mergeTopics(topics, firstLoad) {
  let added = 0;
  for (const topic of topics) {
    const known = view.topics.get(topic.id) || { comments: [], ids: new Set() };
    known.id = topic.id;
    known.title = topic.title;
    known.count = topic.count;
    known.is_closed = topic.is_closed;
    for (const comment of topic.comments) {
      if (!known.ids.has(comment.id)) {
        known.ids.add(comment.id);
        known.comments.push(comment);
        if (!firstLoad && topic.id === view.topicId) added += 1;
      }
    }
    view.topics.set(topic.id, known);
  }
  const order = topics.map((t) => t.id);
  if (view.topicId === null || !view.topics.has(view.topicId)) {
    view.topicId = order.length ? order[0] : null;
  }
  renderTopicSelect(order);
  renderComments(firstLoad);
  bumpBadge("board", added);
}

function renderTopicSelect(order) {
  const select = $("topic-select");
  const options = order.map((id) => {
    const topic = view.topics.get(id);
    const option = el("option", null, topic.title + " (" + topic.count + ")");
    option.value = String(id);
    return option;
  });
  const key = options.map((o) => o.value + o.textContent).join("|");
  if (select.dataset.key !== key) {
    select.dataset.key = key;
    select.replaceChildren(...options);
  }
  if (view.topicId !== null) select.value = String(view.topicId);
}

function renderComments(force) {
  const box = $("comments");
  const topic = view.topics.get(view.topicId);
  if (!topic) {
    box.replaceChildren(el("p", "empty", "В обсуждениях пока пусто."));
    box.dataset.topic = "";
    return;
  }
  const sameTopic = box.dataset.topic === String(topic.id);
  const shown = sameTopic ? box.querySelectorAll(".comment").length : 0;
  if (!sameTopic || force) {
    box.replaceChildren();
    box.dataset.topic = String(topic.id);
  }
  const stick = !sameTopic || force || nearBottom(box);
  const start = !sameTopic || force ? 0 : shown;
  if (!topic.comments.length) {
    box.replaceChildren(el("p", "empty", "В этой теме пока нет комментариев."));
    return;
  }
  const empty = box.querySelector(".empty");
  if (empty) empty.remove();
  for (const comment of topic.comments.slice(start)) {
    const classes = "comment" + (comment.from_community ? " community" : "") +
      (comment.from_id === view.userId ? " mine" : "");
    const node = el("div", classes);
    node.dataset.id = String(comment.id);
    const head = el("div", "head");
    head.append(el("b", null, comment.from_name), el("span", "muted", time(comment)));
    const body = el("div", "body");
    body.append(richText(comment.text || "").frag);
    node.append(head, body);
    box.append(node);
  }
  if (stick) box.scrollTop = box.scrollHeight;
}

// --- chats -----------------------------------------------------------------------------------

function mergeChats(chats, firstLoad) {
  const present = new Set(chats.map((c) => c.chat_id));
  for (const id of [...view.chats.keys()]) if (!present.has(id)) view.chats.delete(id);
  let added = 0;
  for (const chat of chats) {
    const known = view.chats.get(chat.chat_id) || { messages: [], ids: new Set() };
    Object.assign(known, { chat_id: chat.chat_id, title: chat.title, members: chat.members });
    for (const message of chat.messages) {
      if (!known.ids.has(message.id)) {
        known.ids.add(message.id);
        known.messages.push(message);
        if (!firstLoad && message.from_id !== view.userId) added += 1;
      }
    }
    view.chats.set(chat.chat_id, known);
  }
  $("tab-chat").hidden = view.chats.size === 0;
  if (view.chats.size === 0) {
    view.chatId = null;
    if (document.body.dataset.right === "chat") showTab("board");
    if (document.body.dataset.mobile === "chat") showTab("messages");
  } else if (!view.chats.has(view.chatId)) {
    view.chatId = view.chats.keys().next().value;
  }
  const select = $("chat-select");
  const key = [...view.chats.values()].map((c) => c.chat_id + c.title + c.members).join("|");
  if (select.dataset.key !== key) {
    select.dataset.key = key;
    select.replaceChildren(...[...view.chats.values()].map((chat) => {
      const option = el("option", null, chat.title + " · участников: " + chat.members);
      option.value = String(chat.chat_id);
      return option;
    }));
  }
  if (view.chatId !== null) select.value = String(view.chatId);
  renderChat();
  bumpBadge("chat", added);
}

function renderChat() {
  const box = $("chat-messages");
  const chat = view.chats.get(view.chatId);
  if (!chat) { box.replaceChildren(); box.dataset.chat = ""; return; }
  const same = box.dataset.chat === String(chat.chat_id);
  if (!same) { box.replaceChildren(); box.dataset.chat = String(chat.chat_id); }
  const stick = !same || nearBottom(box);
  const shown = box.childElementCount;
  for (const message of chat.messages.slice(shown)) box.append(messageNode(message, true));
  if (stick) box.scrollTop = box.scrollHeight;
}

// --- tabs ------------------------------------------------------------------------------------

function showTab(name) {
  document.body.dataset.mobile = name;
  if (name !== "messages") document.body.dataset.right = name;
  for (const tab of document.querySelectorAll(".tab")) {
    const active = tab.dataset.tab === name ||
      (name === "messages" && tab.dataset.tab === document.body.dataset.right &&
       window.matchMedia("(min-width: 900px)").matches);
    tab.classList.toggle("active", active);
  }
  $("badge-" + name).textContent = "";
  const box = { messages: $("messages"), board: $("comments"), chat: $("chat-messages") }[name];
  box.scrollTop = box.scrollHeight;
}

// --- start -----------------------------------------------------------------------------------

function init() {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => showTab(tab.dataset.tab));
  }
  $("user-select").addEventListener("change", (event) => selectUser(parseInt(event.target.value, 10)));
  $("community-select").addEventListener("change", (event) => selectCommunity(parseInt(event.target.value, 10)));
  view.groupId = startingCommunity();
  if (view.groupId !== null) localStorage.setItem("sandbox-group", String(view.groupId));
  $("topic-select").addEventListener("change", (event) => {
    view.topicId = parseInt(event.target.value, 10);
    renderComments(true);
  });
  $("chat-select").addEventListener("change", (event) => {
    view.chatId = parseInt(event.target.value, 10);
    renderChat();
  });
  $("takeover").addEventListener("change", async (event) => {
    const on = event.target.checked;
    try {
      await api("users/" + view.userId + "/takeover", { on });
      view.takenOver = on;
      toast(on ? "Этим игроком играете вы" : "Этим игроком снова играют боты");
      loadUsers().catch(() => {});
    } catch (error) {
      event.target.checked = !on;
      toast(error.message, true);
    }
  });
  $("leave-chat").addEventListener("click", () => {
    if (view.chatId !== null) act("leave", { chat_id: view.chatId }, "Вы вышли из беседы");
  });
  bindComposer("compose-message", (text) => act("send", { text }));
  bindComposer("compose-comment", (text) => {
    if (view.topicId === null) { toast("Нет темы для комментария", true); return Promise.resolve(null); }
    return act("board", { topic_id: view.topicId, text });
  });
  bindComposer("compose-chat", (text) => act("chat", { chat_id: view.chatId, text }));
  showTab("messages");
  loadUsers().then((users) => {
    const id = startingUser(users);
    if (id === null) {
      $("messages").replaceChildren(el("p", "empty", "В сообществе пока нет пользователей."));
      return;
    }
    selectUser(id);
  }).catch((error) => toast(error.message, true));
  setInterval(() => loadUsers().catch(() => {}), USERS_MS);
  window.addEventListener("hashchange", () => {
    const id = parseInt((location.hash.match(/^#id(\d+)$/) || [])[1], 10);
    if (id && id !== view.userId) selectUser(id);
  });
}

init();
