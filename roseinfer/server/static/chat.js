// The chat page: streams answers from /v1/chat/completions (server-sent events read through
// fetch, so the stop button can abort the request), keeps the conversation while the page is
// open, and asks for the API key when the server answers 401 (kept in sessionStorage: this tab
// only). Only fields the server honours are sent: it refuses the others with a 400.
"use strict";

const KEY_STORAGE = "roseinfer.apiKey";
const $ = (id) => document.getElementById(id);
let conversation = []; // {role, content} of each finished exchange, oldest first
let controller = null; // aborts the answer being streamed
let keyRequest = null; // the open key prompt, shared by every request that got a 401

function setState(state) {
  document.body.dataset.state = state; // "ready" or "busy": also what the tests wait on
  $("send").disabled = state === "busy";
  $("stop").disabled = state !== "busy";
}

function showStatus(text) {
  $("status").textContent = text;
}

function authHeaders() {
  const key = sessionStorage.getItem(KEY_STORAGE);
  return key ? { Authorization: `Bearer ${key}` } : {};
}

function askForKey(message) {
  if (keyRequest) return keyRequest;
  keyRequest = new Promise((resolve, reject) => {
    const dialog = $("key-dialog");
    const finish = (ok) => {
      keyRequest = null;
      if (ok) resolve();
      else reject(new Error("This server needs an API key."));
    };
    $("key-error").textContent = message;
    $("api-key").value = "";
    $("key-form").onsubmit = () => { // method="dialog": the dialog closes itself
      sessionStorage.setItem(KEY_STORAGE, $("api-key").value.trim());
      finish(true);
    };
    $("key-cancel").onclick = () => { dialog.close(); finish(false); };
    dialog.oncancel = () => finish(false); // Escape
    dialog.showModal();
  });
  return keyRequest;
}

// fetch with the key; on a 401 ask for a key and try again with it.
async function api(path, init = {}) {
  for (;;) {
    const headers = { ...(init.headers || {}), ...authHeaders() };
    const response = await fetch(path, { ...init, headers });
    if (response.status !== 401) return response;
    const refused = sessionStorage.getItem(KEY_STORAGE) !== null;
    await askForKey(refused ? "The server refused that key." : "");
  }
}

async function errorText(response) {
  try {
    const body = await response.json();
    if (body.error && body.error.message) return body.error.message;
  } catch (_) {
    // not JSON: the status line says enough
  }
  return `${response.status} ${response.statusText}`;
}

// The JSON payloads of a server-sent event stream, until `data: [DONE]`.
async function* events(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const lines = buffer.slice(0, end).split("\n");
      buffer = buffer.slice(end + 2);
      const data = lines.filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\n");
      if (data === "[DONE]") return;
      if (data) yield JSON.parse(data);
    }
  }
}

function addMessage(role, text) {
  const box = document.createElement("div");
  box.className = `message ${role}`;
  const content = document.createElement("div");
  content.className = "content";
  content.textContent = text;
  box.append(content);
  $("messages").append(box);
  box.scrollIntoView({ block: "end" });
  return box;
}

function requestBody(messages) {
  const body = { messages, stream: true, stream_options: { include_usage: true } };
  const settings = [["temperature", "temperature"], ["top-p", "top_p"], ["max-tokens", "max_tokens"]];
  for (const [id, field] of settings) {
    const raw = $(id).value.trim();
    if (raw !== "") body[field] = Number(raw);
  }
  return body;
}

// "N tokens, X tokens/s": the rate of generation proper, from the first token to the last
// (the first token's wait is the prompt's processing, shown apart).
function statsText(usage, started, first, last, finishReason) {
  if (!usage) return "";
  const n = usage.completion_tokens;
  const parts = [`${n} token${n === 1 ? "" : "s"}`];
  if (first !== null) {
    const seconds = n >= 2 && last > first ? (last - first) / 1000 : (last - started) / 1000;
    const tokens = n >= 2 && last > first ? n - 1 : n;
    parts.push(`${(tokens / seconds).toFixed(1)} tokens/s`);
    parts.push(`first token after ${((first - started) / 1000).toFixed(2)} s`);
  }
  if (finishReason === "length") parts.push("cut at max tokens");
  return parts.join(", ");
}

function addStats(box, text) {
  const stats = document.createElement("div");
  stats.className = "stats muted";
  stats.textContent = text;
  box.append(stats);
}

async function send(text) {
  const user = { role: "user", content: text };
  const system = $("system").value.trim();
  // The exchange joins the conversation it was sent in, even if "New chat" began another meanwhile.
  const thread = conversation;
  const messages = [...(system ? [{ role: "system", content: system }] : []), ...thread, user];
  const userBox = addMessage("user", text);
  const box = addMessage("assistant", "");
  const content = box.querySelector(".content");
  controller = new AbortController();
  setState("busy");
  showStatus("");
  const started = performance.now();
  let first = null, last = null, answer = "", usage = null, finishReason = null;
  try {
    const response = await api("v1/chat/completions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(requestBody(messages)),
      signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorText(response));
    for await (const chunk of events(response)) {
      if (chunk.error) throw new Error(chunk.error.message);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices && chunk.choices[0];
      if (!choice) continue;
      if (choice.finish_reason) finishReason = choice.finish_reason;
      const delta = choice.delta && choice.delta.content;
      if (delta) {
        last = performance.now();
        if (first === null) first = last;
        answer += delta;
        content.textContent = answer;
        box.scrollIntoView({ block: "end" });
      }
    }
    thread.push(user, { role: "assistant", content: answer });
    addStats(box, statsText(usage, started, first, last, finishReason));
  } catch (error) {
    if (error.name === "AbortError") { // the stop button: keep what came
      thread.push(user, { role: "assistant", content: answer });
      addStats(box, "stopped");
    } else { // nothing happened: the message goes back to the input to send again
      userBox.remove();
      box.remove();
      $("input").value = text;
      showStatus(error.message);
    }
  } finally {
    controller = null;
    setState("ready");
  }
}

async function loadModel() {
  try {
    const response = await api("v1/models");
    if (!response.ok) throw new Error(await errorText(response));
    const models = await response.json();
    $("model").textContent = models.data.map((m) => m.id).join(", ");
  } catch (error) {
    showStatus(error.message);
  }
}

function newChat() {
  if (controller) controller.abort();
  conversation = [];
  $("messages").replaceChildren();
  showStatus("");
}

function init() {
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("input").value;
    if (!text.trim() || controller) return;
    $("input").value = "";
    send(text);
  });
  $("input").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("stop").addEventListener("click", () => controller && controller.abort());
  $("new-chat").addEventListener("click", newChat);
  setState("ready");
  loadModel();
}

init();
